// Per-session caps (issue 16): at most limits.max_background_tasks running background tasks and
// at most limits.max_concurrent_calls calls in flight per session. Beyond a cap the call is a tool
// error naming the limit and the setting to change, it is audited, and the session goes on; once a
// task or call ends, a new one is admitted. Real processes, real SQLite.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore } from '../../src/core/index.js';
import { ApprovalRules, RuleApprover } from '../../src/policy/index.js';
import { readEvents, verifyChain } from '../../src/store/index.js';
import { makeCore } from '../core/temp-core.js';
import { markedPids, waitFor } from '../helpers/procs.js';
import { runtimeSuite } from '../effects/runtime-fixture.js';

const AGENT = 'name: t\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\n';

describe('per-session caps', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const suite = runtimeSuite();
  const approver = new RuleApprover(ApprovalRules.parse({ approve: ['terminal', 'task_control'] }));

  async function setup(limits: string) {
    const worker = suite.taskWorker();
    const r = await suite.runtime({ files: { 'agent.yaml': `${AGENT}limits:\n${limits}` }, approver, principal: 'alice', tasks: worker });
    const call = async (name: string, args: Record<string, unknown>) => r.runtime.execute(r.runtime.request(name, args)!, r.ctx);
    const taskId = (content: string) => /\[started background task (tk_[0-9a-f]+)\]/.exec(content)?.[1];
    return { ...r, worker, call, taskId };
  }

  test('the (N+1)-th running background task of a session is refused, naming the limit; after one ends, a new one starts', async () => {
    const s = await setup('  max_background_tasks: 3\n');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const out = await s.call('terminal', { command: 'sleep 30', background: true });
      assert.equal(out.ok && !out.isError, true, JSON.stringify(out.views.model));
      ids.push(s.taskId(out.views.model.content)!);
    }
    const refused = await s.call('terminal', { command: 'sleep 30', background: true });
    // A tool error for the model: the limit, its value and the setting to change.
    assert.equal(refused.views.model.ok, false);
    assert.match(refused.views.model.content, /3 background tasks/);
    assert.match(refused.views.model.content, /limits\.max_background_tasks/);
    assert.equal(s.taskId(refused.views.model.content), undefined, 'nothing was started');
    // The first three still run, with their trees.
    for (const id of ids) {
      const t = s.worker.get({ principal: 'alice' }, id)!;
      assert.equal(t.status, 'running');
      assert.ok(markedPids(t.spawnId!).length >= 1, `task ${id} has live processes`);
    }
    assert.equal(s.worker.store.list({ principal: 'alice' }, { sessionId: s.ctx.sessionId }).length, 3, 'no task row for the refused call');
    // Audited: the refused call has its effect event in the session's chain.
    const events = readEvents(suite.db(), s.ctx.sessionId).filter((e) => e.kind === 'effect.completed' || e.kind === 'effect.failed');
    assert.equal(events.length, 4);
    assert.match(JSON.stringify(events[3]!.payload), /max_background_tasks/);
    // One ends: a new one is admitted.
    const cancelled = await s.call('task_control', { task_id: ids[0], command: 'cancel' });
    assert.equal(cancelled.ok, true);
    const again = await s.call('terminal', { command: 'sleep 30', background: true });
    assert.equal(again.ok && !again.isError, true, JSON.stringify(again.views.model));
    ids.push(s.taskId(again.views.model.content)!);
    // The session goes on; the chain is intact.
    assert.equal(verifyChain(suite.db(), s.ctx.sessionId).ok, true);
    for (const id of ids) await s.worker.cancel({ principal: 'alice' }, id);
  });

  test('concurrent starts cannot race past the cap', async () => {
    const s = await setup('  max_background_tasks: 2\n');
    const outs = await Promise.all(Array.from({ length: 5 }, () => s.call('terminal', { command: 'sleep 30', background: true })));
    const started = outs.map((o) => s.taskId(o.views.model.content)).filter((id): id is string => id !== undefined);
    assert.equal(started.length, 2);
    assert.equal(outs.filter((o) => !o.views.model.ok && /limits\.max_background_tasks/.test(o.views.model.content)).length, 3);
    for (const id of started) await s.worker.cancel({ principal: 'alice' }, id);
  });

  test('a call beyond limits.max_concurrent_calls is refused and audited; after one ends, a new call runs', async () => {
    const s = await setup('  max_concurrent_calls: 2\n');
    const slow = [s.call('terminal', { command: 'sleep 1.5; echo done' }), s.call('terminal', { command: 'sleep 1.5; echo done' })];
    // Both are in flight: their trees run.
    await waitFor('two trees', () => (suite.supervisor().liveTrees().length >= 2 ? true : null));
    const refused = await s.call('terminal', { command: 'echo third' });
    assert.equal(refused.ok, false);
    assert.equal(!refused.ok && refused.code, 'LIMIT_REACHED');
    assert.match(refused.views.model.content, /2 calls/);
    assert.match(refused.views.model.content, /limits\.max_concurrent_calls/);
    const first = await Promise.all(slow);
    for (const o of first) assert.equal(o.ok && o.views.model.content.includes('done'), true, JSON.stringify(o.views.model));
    const after = await s.call('terminal', { command: 'echo fourth' });
    assert.equal(after.ok && after.views.model.content.includes('fourth'), true, JSON.stringify(after.views.model));
    const failed = readEvents(suite.db(), s.ctx.sessionId).filter((e) => e.kind === 'effect.failed');
    assert.equal(failed.length, 1);
    assert.match(JSON.stringify(failed[0]!.payload), /LIMIT_REACHED.*max_concurrent_calls|max_concurrent_calls.*LIMIT_REACHED/);
    assert.equal(verifyChain(suite.db(), s.ctx.sessionId).ok, true);
  });

  test('the caps are checked at load: whole numbers from 1', async () => {
    await assert.rejects(loadCore(makeCore({ 'agent.yaml': `${AGENT}limits:\n  max_background_tasks: 0\n` })), /max_background_tasks/);
    await assert.rejects(loadCore(makeCore({ 'agent.yaml': `${AGENT}limits:\n  max_concurrent_calls: 2.5\n` })), /max_concurrent_calls/);
    const core = await loadCore(makeCore({ 'agent.yaml': AGENT }));
    assert.equal(core.agent.limits.max_background_tasks, undefined, 'absent: the default applies');
  });
});
