// EffectRuntime: the eight steps in order, and nothing runs before its checks — every refusal is
// proven by a command that would leave a marker file in the workspace if it ever ran.
import { authoredToolHosts } from '../../src/adapters/authored/index.js';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvalDecision, ApprovalRules, NonInteractiveApprover, RuleApprover, type Approver } from '../../src/policy/index.js';
import { verifyChain } from '../../src/store/index.js';
import { toolFiles } from '../core/temp-core.js';
import { runtimeSuite } from './runtime-fixture.js';

const PRINCIPAL = 'operator';

describe('EffectRuntime', { skip: process.platform !== 'linux' && 'POSIX shell commands; Linux CI runs this' }, () => {
  const suite = runtimeSuite();

  async function setup(opts: { agent?: string; approver?: Approver; extra?: Record<string, string> } = {}) {
    const asked: string[] = [];
    const inner = opts.approver ?? new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] }));
    const spy: Approver = {
      decide: (r, s) => {
        asked.push(r.actionSummary);
        return inner.decide(r, s);
      },
      ...(inner.veto ? { veto: (r) => inner.veto!(r) } : {}),
    };
    const { dir, core, catalog, runtime, ctx } = await suite.runtime({
      files: { 'agent.yaml': opts.agent ?? 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n', ...(opts.extra ?? {}) },
      approver: spy,
      principal: PRINCIPAL,
    });
    return { dir, core, catalog, runtime, ctx, asked, marker: join(dir, 'marker') };
  }

  test('an approved terminal call runs and yields separate views; the audit chain holds', async () => {
    const s = await setup();
    const req = s.runtime.request('terminal', { command: 'echo hello; echo oops >&2' })!;
    const out = await s.runtime.execute(req, s.ctx);
    assert.equal(out.ok, true, JSON.stringify(out));
    if (!out.ok) return;
    assert.equal(out.isError, false);
    assert.match(out.views.model.content, /^\[exit code 0\]\nstdout:\nhello\n\nstderr:\noops\n$/);
    const modelJson = JSON.stringify(out.views.model);
    for (const internal of [PRINCIPAL, s.ctx.sessionId, 'spawnId', 'sp_', s.catalog.id]) assert.ok(!modelJson.includes(internal), `model view leaks ${internal}`);
    assert.equal((out.views.durable.audit as { cwd: string }).cwd, s.core.workspace);
    assert.ok(Array.isArray((out.views.durable.audit as { envKeys: string[] }).envKeys));
    assert.equal((out.views.durable.approval as { source: string }).source, 'rule');
    assert.deepEqual(s.asked, ['echo hello; echo oops >&2']);
    // The debug view adds what troubleshooting needs; the event view stays small.
    assert.match(String(out.views.debug.approval_key), /^ak1:[0-9a-f]{64}$/);
    assert.equal(out.views.debug.deadline_ms, 120_000);
    assert.equal(out.views.debug.output, out.views.model.content);
    assert.deepEqual(Object.keys(out.views.event).sort(), ['call_id', 'duration_ms', 'status', 'tool']);
    const v = verifyChain(suite.db(), s.ctx.sessionId);
    assert.equal(v.ok, true, JSON.stringify(v));
  });

  test('no capability: refused at step 3, nothing runs, nobody is asked', async () => {
    const s = await setup({ agent: 'name: t\ntoolsets: [terminal]\n' });
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'touch marker' })!, s.ctx);
    assert.equal(out.ok, false);
    assert.equal(!out.ok && out.code, 'CAPABILITY_DENIED');
    assert.equal(!out.ok && out.step, 3);
    assert.equal(existsSync(s.marker), false);
    assert.deepEqual(s.asked, []);
  });

  test('step 7 runs in the cwd step 4 checked and approval covered: a symlink re-pointed outside while the operator decides does not move the command', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'sv-outside-'));
    try {
      const s = await setup({
        approver: {
          decide: async () => {
            // The hostile move, between the check and the run: the named cwd now leads out.
            rmSync(join(s.dir, 'link'));
            symlinkSync(outside, join(s.dir, 'link'));
            return approvalDecision(true, 'operator', 'yes');
          },
        },
      });
      mkdirSync(join(s.dir, 'inside'));
      symlinkSync(join(s.dir, 'inside'), join(s.dir, 'link'));
      const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'touch marker', cwd: 'link' })!, s.ctx);
      assert.equal(out.ok && !out.isError, true, JSON.stringify(out));
      assert.equal(existsSync(join(s.dir, 'inside', 'marker')), true, 'ran where it was approved');
      assert.deepEqual(readdirSync(outside), [], 'nothing ran outside the workspace');
      assert.equal((out.ok ? (out.views.durable.detail as { cwd: string }).cwd : ''), realpathSync(join(s.dir, 'inside')));
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('a cwd outside the workspace: refused at step 4, before approval', async () => {
    const s = await setup();
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'touch marker', cwd: '..' })!, s.ctx);
    assert.equal(!out.ok && out.code, 'CHECK_FAILED');
    assert.equal(!out.ok && out.step, 4);
    assert.equal(existsSync(s.marker), false);
    assert.deepEqual(s.asked, []);
  });

  test('denied approval (no terminal to ask): refused at step 5, nothing runs', async () => {
    const s = await setup({ approver: new NonInteractiveApprover() });
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'touch marker' })!, s.ctx);
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    assert.match(!out.ok ? out.message : '', /--approve/);
    assert.equal(existsSync(s.marker), false);
  });

  test('approving one action never authorizes another', async () => {
    const s = await setup({ approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal:echo *'] })) });
    const ok = await s.runtime.execute(s.runtime.request('terminal', { command: 'echo fine' })!, s.ctx);
    assert.equal(ok.ok, true);
    const no = await s.runtime.execute(s.runtime.request('terminal', { command: 'echo x; touch marker' })!, s.ctx);
    assert.equal(!no.ok && no.code, 'APPROVAL_DENIED');
    assert.equal(existsSync(s.marker), false);
  });

  test('a request from another catalog, a forged copy, bad arguments, another principal: all refused before anything runs', async () => {
    const a = await setup();
    const b = await setup();
    const foreign = b.runtime.request('terminal', { command: 'touch marker' })!;
    const r1 = await a.runtime.execute(foreign, a.ctx);
    assert.equal(!r1.ok && r1.code, 'BINDING_INVALID');
    const forged = { ...a.runtime.request('terminal', { command: 'true' })!, args: { command: 'touch marker' } };
    const r2 = await a.runtime.execute(forged, a.ctx);
    assert.equal(!r2.ok && r2.code, 'BINDING_INVALID');
    const r3 = await a.runtime.execute(a.runtime.request('terminal', { command: 'touch marker', sudo: true })!, a.ctx);
    assert.equal(!r3.ok && r3.code, 'ARGS_INVALID');
    const r4 = await a.runtime.execute(a.runtime.request('terminal', { command: 'touch marker' })!, { ...a.ctx, principal: 'intruder' });
    assert.equal(!r4.ok && r4.code, 'PRINCIPAL_DENIED');
    assert.equal(existsSync(a.marker) || existsSync(b.marker), false);
    assert.deepEqual(a.asked, []);
  });

  test('an authored tool whose approval is denied is never loaded: its module is not imported', async () => {
    const s = await setup({
      agent: 'name: t\ngrants: [tool.call:wc]\n',
      extra: toolFiles('wc', { capability: 'tool.call:wc', approval: 'prompt' }, "import { writeFileSync } from 'node:fs'; writeFileSync('marker', 'x'); export async function handler() {}\n"),
    });
    const out = await s.runtime.execute(s.runtime.request('wc', {})!, s.ctx);
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    assert.equal(!out.ok && out.step, 5);
    assert.equal(existsSync(s.marker), false);
    assert.deepEqual(s.asked, ['wc {}'], 'asked once, with the call');
    assert.equal(authoredToolHosts(suite.supervisor(), s.core).pools().length, 0, 'no tool host was started');
  });

  test('the effect deadline bounds the command', async () => {
    const s = await setup();
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'sleep 30' })!, { ...s.ctx, deadlineMs: 300 });
    assert.equal(out.ok && out.isError, true);
    assert.match(out.ok ? out.views.model.content : '', /^\[timeout\]/);
  });

  test('tools_list shows the catalog to the model without internal references', async () => {
    // The core's global default (prompt) folds into tools_list too: approve it like any tool.
    const s = await setup({ approver: new RuleApprover(ApprovalRules.parse({ approve: ['tools_list'] })) });
    const out = await s.runtime.execute(s.runtime.request('tools_list', {})!, s.ctx);
    assert.equal(out.ok, true);
    const text = out.ok ? out.views.model.content : '';
    assert.match(text, /- terminal \(builtin; capability terminal\.exec; approval prompt; risk high\)/);
    assert.ok(!text.includes(s.catalog.id));
  });
});
