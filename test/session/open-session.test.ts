// The library API (src/index.ts) over a real store and real process trees: approvals are explicit
// (nobody approves by default), refusals are outcomes, bad input is a SessionError that leaves
// nothing open, turns continue one conversation, and close() ends every tree the session started.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { approvalDecision, exec, openSession, SessionError, type ApprovalRequest, type Approver, type RuntimeEvent } from '../../src/index.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { markedPids, tempDir } from '../helpers/procs.js';

class Recording implements Approver {
  readonly asked: ApprovalRequest[] = [];
  constructor(private readonly yes: boolean) {}
  async decide(r: ApprovalRequest) {
    this.asked.push(r);
    return approvalDecision(this.yes, 'operator', this.yes ? 'test says yes' : 'test says no');
  }
}

const AGENT = 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: prompt\nmodel:\n  provider: scripted\n  script: script.yaml\n';
const SCRIPT = [
  'turns:',
  '  - user: the script says this',
  '  - tool_calls:',
  '      - name: terminal',
  '        arguments: { command: "echo turn-one" }',
  '  - text: done one',
  '  - user: and this',
  '  - text: done two',
  '',
].join('\n');

describe('openSession', () => {
  const states: { remove(): void }[] = [];
  const state = (): string => {
    const t = tempDir('session-api-');
    states.push(t);
    return t.path;
  };
  after(() => {
    for (const s of states) s.remove();
    removeTempCores();
  });

  test('without an approver a call that asks is refused at step 5 and nothing runs', async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    const s = await openSession({ core, stateDir: state() });
    try {
      const out = await s.callTool('terminal', { command: 'touch marker' });
      assert.equal(out.ok, false);
      assert.ok(!out.ok);
      assert.deepEqual([out.code, out.step], ['APPROVAL_DENIED', 5]);
      assert.equal(existsSync(join(core, 'marker')), false, 'the command never ran');
    } finally {
      await s.close();
    }
  });

  test("an approver that says yes is asked once with the exact action; the command runs in the session's tree", async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    const approver = new Recording(true);
    const s = await openSession({ core, stateDir: state(), approver });
    try {
      const out = await s.callTool('terminal', { command: 'echo via-library' });
      assert.ok(out.ok, JSON.stringify(out));
      assert.equal(out.isError, false);
      assert.match(out.views.model.content, /via-library/);
      assert.deepEqual(approver.asked.map((r) => [r.toolName, r.actionSummary, r.sessionId]), [['terminal', 'echo via-library', s.id]]);
    } finally {
      await s.close();
    }
  });

  test('an approver that says no: refused at step 5; rules settle before the approver is asked', async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    const no = new Recording(false);
    const s = await openSession({ core, stateDir: state(), approver: no });
    try {
      const out = await s.callTool('terminal', { command: 'touch marker' });
      assert.ok(!out.ok);
      assert.deepEqual([out.code, out.step], ['APPROVAL_DENIED', 5]);
      assert.equal(no.asked.length, 1);
      assert.equal(existsSync(join(core, 'marker')), false);
    } finally {
      await s.close();
    }
    const asked = new Recording(false);
    const r = await openSession({ core, stateDir: state(), approver: asked, rules: { approve: ['terminal:echo *'] } });
    try {
      const out = await r.callTool('terminal', { command: 'echo by-rule' });
      assert.ok(out.ok, JSON.stringify(out));
      assert.equal(asked.asked.length, 0, 'the rule approved it; the approver was not asked');
    } finally {
      await r.close();
    }
  });

  test('refusals before anything runs are SessionErrors: unknown tool, a rule of no tool, a core that does not load, a closed session', async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    await assert.rejects(openSession({ core, stateDir: state(), rules: { deny: ['Terminal'] } }), (e: unknown) => e instanceof SessionError && e.code === 'RULE_INVALID' && /terminal/.test(e.message));
    await assert.rejects(openSession({ core: join(core, 'nope'), stateDir: state() }), (e: unknown) => e instanceof SessionError && e.code === 'CORE_INVALID');
    const s = await openSession({ core, stateDir: state() });
    await assert.rejects(s.callTool('nosuch', {}), (e: unknown) => e instanceof SessionError && e.code === 'UNKNOWN_TOOL' && /no tool "nosuch"/.test(e.message));
    const closing = s.close();
    assert.equal(s.close(), closing, 'close() is idempotent');
    await closing;
    await assert.rejects(s.callTool('terminal', { command: 'echo x' }), (e: unknown) => e instanceof SessionError && e.code === 'SESSION_CLOSED');
  });

  test("runTurn: one user turn at a time with the core's model, the conversation continued", async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    const s = await openSession({ core, stateDir: state(), approver: new Recording(true) });
    try {
      const events: RuntimeEvent[] = [];
      const one = await s.runTurn('first', { onEvent: (e) => events.push(e) });
      assert.deepEqual([one.outcome, one.finalText, one.effects], ['completed', 'done one', { ok: 1, failed: 0 }]);
      const two = await s.runTurn('second', { onEvent: (e) => events.push(e) });
      assert.deepEqual([two.outcome, two.finalText, two.effects], ['completed', 'done two', { ok: 0, failed: 0 }]);
      const users = events.filter((e): e is Extract<RuntimeEvent, { type: 'user' }> => e.type === 'user');
      assert.deepEqual(users.map((u) => [u.turn, u.text]), [[1, 'first'], [2, 'second']], "the caller's prompts replace the script's user lines");
    } finally {
      await s.close();
    }
  });

  test("runSession: the whole scripted run, as supervisor run does it; the session stays open", async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    const s = await openSession({ core, stateDir: state(), approver: new Recording(true) });
    try {
      const r = await s.runSession();
      assert.deepEqual([r.outcome, r.turns, r.effects], ['completed', 2, { ok: 1, failed: 0 }]);
      const later = await s.callTool('terminal', { command: 'echo still-open' });
      assert.ok(later.ok);
    } finally {
      await s.close();
    }
  });

  test('spawnTree: a tree of the session is stopped whole by close()', async () => {
    const core = makeCore({ 'agent.yaml': AGENT, 'script.yaml': SCRIPT });
    const s = await openSession({ core, stateDir: state() });
    const tree = s.spawnTree({ command: 'sh', args: ['-c', 'sleep 60 & sleep 60'], artifacts: false, graceMs: 300 });
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(markedPids(tree.spawnId).length >= 1, 'the tree is running');
    await s.close();
    const outcome = await tree.done;
    assert.notEqual(outcome.reason, 'exited');
    assert.deepEqual(markedPids(tree.spawnId), [], 'nothing of the tree outlives the session');
  });

  test('exec: one command as a whole tree in a supervisor of its own; a timeout kills the tree', async () => {
    const stateDir = state();
    const ok = await exec({ command: 'sh', args: ['-c', 'echo from-exec'], stateDir, artifacts: false });
    assert.deepEqual([ok.reason, ok.exitCode], ['exited', 0]);
    assert.match(ok.stdout.tail, /from-exec/);
    const slow = await exec({ command: 'sh', args: ['-c', 'sleep 30 & sleep 30'], stateDir, artifacts: false, timeoutMs: 300, graceMs: 300 });
    assert.equal(slow.reason, 'timeout');
    assert.deepEqual(markedPids(slow.spawnId), []);
  });
});
