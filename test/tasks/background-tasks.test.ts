// Background tasks through the effect pipeline: terminal(background=true) returns at once, the
// task tools follow and cancel it, write scopes conflict, another principal sees nothing, secrets
// are refused, and every tree is gone at the end.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalRules, RuleApprover } from '../../src/policy/index.js';
import { readEvents, verifyChain } from '../../src/store/index.js';
import { markedPids, waitFor } from '../helpers/procs.js';
import { runtimeSuite } from '../effects/runtime-fixture.js';

const AGENT = 'name: t\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\n';

describe('background tasks', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const suite = runtimeSuite();
  const approver = new RuleApprover(ApprovalRules.parse({ approve: ['terminal', 'task_control'] }));

  async function setup(principal = 'alice', worker = suite.taskWorker(), extra = '') {
    const r = await suite.runtime({ files: { 'agent.yaml': `${AGENT}${extra}` }, approver, principal, tasks: worker });
    const call = async (name: string, args: Record<string, unknown>) => r.runtime.execute(r.runtime.request(name, args)!, r.ctx);
    const json = async (name: string, args: Record<string, unknown>) => {
      const out = await call(name, args);
      assert.equal(out.ok, true, JSON.stringify(!out.ok && out.message));
      return JSON.parse(out.views.model.content) as Record<string, unknown>;
    };
    const start = async (command: string, more: Record<string, unknown> = {}) => {
      const out = await call('terminal', { command, background: true, ...more });
      assert.equal(out.ok, true, JSON.stringify(!out.ok && out.message));
      const id = /\[started background task (tk_[0-9a-f]+)\]/.exec(out.views.model.content)?.[1];
      assert.ok(id, out.views.model.content);
      return id;
    };
    return { ...r, worker, call, json, start };
  }

  test('a background command returns at once; yield_until waits for it; its log and completion are kept', async () => {
    const s = await setup();
    const t0 = Date.now();
    const id = await s.start("echo first; sleep 0.4; echo second >&2; exit 3");
    assert.ok(Date.now() - t0 < 2_000, 'terminal(background) does not wait for the command');
    const waited = await s.json('yield_until', { task_ids: [id], timeout_seconds: 20 });
    const ended = (waited.ended as { id: string; status: string; exit_code: number }[])[0]!;
    assert.deepEqual([ended.id, ended.status, ended.exit_code, waited.timed_out], [id, 'failed', 3, false]);
    const logs = s.worker.store.logs({ principal: 'alice' }, id)!;
    assert.equal(logs.filter((c) => c.stream === 'stdout').map((c) => c.chunk).join(''), 'first\n');
    assert.equal(logs.filter((c) => c.stream === 'stderr').map((c) => c.chunk).join(''), 'second\n');
    const completed = readEvents(suite.db(), s.ctx.sessionId).filter((e) => e.kind === 'task.completed');
    assert.deepEqual(completed.map((e) => (e.payload as { task_id: string }).task_id), [id]);
    assert.equal(verifyChain(suite.db(), s.ctx.sessionId).ok, true);
  });

  test('task_status and task_list show model projections only: no owner ids, write scope, logs or references', async () => {
    const s = await setup();
    const id = await s.start('echo $((6*7))-log-line; sleep 30', { write_scope: 'build/' });
    await waitFor('the log line', () => s.worker.store.logs({ principal: 'alice' }, id)?.some((c) => c.chunk.includes('42-log-line')) || null);
    const status = await s.json('task_status', { task_id: id });
    assert.deepEqual(Object.keys(status).sort(), ['exit_code', 'id', 'kind', 'reason', 'seconds', 'status', 'summary']);
    const listed = await s.json('task_list', {});
    const text = JSON.stringify(listed);
    for (const leak of ['alice', s.ctx.sessionId, 'build/', '42-log-line', 'sp_', '/artifacts']) assert.ok(!text.includes(leak), `task_list leaks ${leak}`);
    await s.worker.cancel({ principal: 'alice' }, id);
  });

  test('cancel kills the whole tree and persists the end state before anyone is told', async () => {
    const s = await setup();
    const id = await s.start('sleep 60 & sleep 60 & setsid sleep 60 & wait');
    const spawnId = await waitFor('the spawn id', () => s.worker.get({ principal: 'alice' }, id)?.spawnId);
    await waitFor('the tree', () => markedPids(spawnId).length >= 3 || null);
    let seenAtPublish: string | undefined;
    s.worker.events.once('completed', (t: { id: string }) => {
      seenAtPublish = s.worker.store.get({ principal: 'alice' }, t.id)?.status;
    });
    const out = await s.json('task_control', { task_id: id, command: 'cancel' });
    assert.equal(out.status, 'cancelled');
    assert.equal(seenAtPublish, 'cancelled', 'the row held the end state when completion was published');
    assert.deepEqual(markedPids(spawnId), []);
    const other = await s.call('task_control', { task_id: id, command: 'pause' });
    assert.deepEqual([other.ok, !other.ok && other.code], [false, 'CHECK_FAILED']);
    assert.match(!other.ok ? other.message : '', /not supported/);
  });

  test('a second active task with the same write scope is refused; after the first ends it may start', async () => {
    const s = await setup();
    const first = await s.start('sleep 30', { write_scope: 'dist/' });
    const second = await s.call('terminal', { command: 'sleep 1', background: true, write_scope: 'dist/' });
    assert.equal(second.ok && second.isError, true);
    assert.match(second.views.model.content, /write scope "dist\/"/);
    const other = await s.start('true', { write_scope: 'docs/' });
    assert.ok(other);
    await s.json('task_control', { task_id: first, command: 'cancel' });
    assert.ok(await s.start('true', { write_scope: 'dist/' }));
  });

  test("a write scope is the principal's own: another principal's running task neither blocks it nor shows through", async () => {
    const worker = suite.taskWorker();
    const alice = await setup('alice', worker);
    const mallory = await setup('mallory', worker);
    const mine = await alice.start('sleep 30', { write_scope: 'out/' });
    // The same scope under another principal starts: its refusal would tell mallory alice's task exists.
    const theirs = await mallory.start('sleep 30', { write_scope: 'out/' });
    assert.ok(theirs);
    const again = await mallory.call('terminal', { command: 'sleep 1', background: true, write_scope: 'out/' });
    assert.equal(again.ok && again.isError, true, 'within one principal the scope still conflicts');
    assert.match(again.views.model.content, /another active task of yours holds the write scope "out\/"/);
    await alice.worker.cancel({ principal: 'alice' }, mine);
    await mallory.worker.cancel({ principal: 'mallory' }, theirs);
  });

  test("another principal's task id gets exactly the answer a missing id gets", async () => {
    const worker = suite.taskWorker();
    const alice = await setup('alice', worker);
    const mallory = await setup('mallory', worker);
    const id = await alice.start('sleep 30');
    const missing = 'tk_00000000000000000000';
    for (const tool of ['task_status', 'task_control'] as const) {
      const args = (t: string) => (tool === 'task_status' ? { task_id: t } : { task_id: t, command: 'cancel' });
      const a = await mallory.call(tool, args(id));
      const b = await mallory.call(tool, args(missing));
      assert.equal(a.views.model.content.replace(id, 'X'), b.views.model.content.replace(missing, 'X'), tool);
    }
    assert.equal(alice.worker.get({ principal: 'alice' }, id)?.status, 'running', 'mallory could not cancel it');
    const waited = await mallory.json('yield_until', { task_ids: [id], timeout_seconds: 0 });
    assert.deepEqual(waited.ended, []);
    await alice.worker.cancel({ principal: 'alice' }, id);
  });

  test('background tasks refuse secret bindings', async () => {
    process.env.SV_TASK_TEST_SECRET = 'task-secret-value-123456';
    const s = await setup('alice', suite.taskWorker(), "secrets:\n  TOKEN: { env: SV_TASK_TEST_SECRET }\n" + "tools:\n  terminal:\n    secrets:\n      - { secret: TOKEN, env: TOKEN, ttl: 1m }\n");
    const out = await s.call('terminal', { command: 'touch marker', background: true });
    assert.deepEqual([out.ok, !out.ok && out.code], [false, 'SECRET_DENIED']);
    assert.match(!out.ok ? out.message : '', /background/);
  });
});
