// The principal's live trees (SpawnRecordStore.runningOwnedBy, what `supervisor ps` and the web page
// list): a task's tree belongs to the task's session, any other tree to the oldest running session
// of the process that owns it; another principal's trees, a finished tree and a tree whose owner
// runs no session of the principal are not listed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, SessionStore, SpawnRecordStore, TaskStore } from '../../src/store/index.js';

test("a principal's unfinished trees, each with its session and task; nobody else's", () => {
  const dir = mkdtempSync(join(tmpdir(), 'owned-spawns-'));
  const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
  try {
    const sessions = new SessionStore(db);
    const tasks = new TaskStore(db);
    const spawns = new SpawnRecordStore(db);
    const alice = { principal: 'alice' };
    const mallory = { principal: 'mallory' };
    const runA = { pid: 4001, startMarker: 'linux:boot:100' };
    const runM = { pid: 4002, startMarker: 'linux:boot:200' };
    // The child is created first: a delegated child is never the tree's session, whatever the clock says.
    const child = sessions.createSession(alice, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner: runA });
    const root = sessions.createSession(alice, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner: runA });
    const delegation = tasks.create(alice, { sessionId: root.id, kind: 'agent.spawn', sourceTool: 'delegate_task', summary: 'child' }, runA);
    tasks.setDelegation(delegation.id, child.id, {});
    const other = sessions.createSession(mallory, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner: runM });
    const spawn = (id: string, owner: { pid: number; startMarker: string }): void =>
      spawns.insert({ spawnId: id, pid: 5000, pgid: 5000, sid: 5000, platform: 'linux', bootId: 'boot', startMarker: 'linux:boot:300', cgroup: null, command: '/bin/sh', ownerPid: owner.pid, ownerStartMarker: owner.startMarker, startedAt: Date.now() });
    spawn('sp_call', runA);
    spawn('sp_task', runA);
    spawn('sp_done', runA);
    spawn('sp_mallory', runM);
    spawn('sp_stranger', { pid: 4003, startMarker: 'linux:boot:400' });
    const t = tasks.create(alice, { sessionId: child.id, kind: 'terminal', sourceTool: 'terminal', summary: 'sleep' }, runA);
    tasks.setSpawn(t.id, 'sp_task', null);
    spawns.finish('sp_done', { status: 'exited', exitCode: 0, signal: null, endedAt: Date.now(), detail: null });
    const mine = spawns.runningOwnedBy(alice).map((o) => [o.record.spawnId, o.sessionId, o.taskId]);
    assert.deepEqual(mine, [
      ['sp_call', root.id, null],
      ['sp_task', child.id, t.id],
    ]);
    assert.deepEqual(spawns.runningOwnedBy(mallory).map((o) => o.record.spawnId), ['sp_mallory']);
    assert.deepEqual(spawns.runningOwnedBy({ principal: 'nobody' }), []);
    // A run that ended: its call trees are no longer anyone's to show (reconcile finishes them).
    sessions.endSession(alice, root.id, 'completed');
    sessions.endSession(alice, child.id, 'completed');
    assert.deepEqual(spawns.runningOwnedBy(alice).map((o) => o.record.spawnId), ['sp_task'], "a task's tree stays its session's");
    void other;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a cancel request: only the principal's tree, once (compare-and-swap), refused when ended; the owner reads only its own trees' requests", () => {
  const dir = mkdtempSync(join(tmpdir(), 'owned-spawns-cancel-'));
  const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
  try {
    const sessions = new SessionStore(db);
    const tasks = new TaskStore(db);
    const spawns = new SpawnRecordStore(db);
    const alice = { principal: 'alice' };
    const mallory = { principal: 'mallory' };
    const runA = { pid: 4001, startMarker: 'linux:boot:100' };
    // The same pid as runA, another start: a later process that reused the pid owns nothing of runA's.
    const reused = { pid: 4001, startMarker: 'linux:boot:999' };
    const runM = { pid: 4002, startMarker: 'linux:boot:200' };
    const session = sessions.createSession(alice, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner: runA });
    sessions.createSession(mallory, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner: runM });
    const spawn = (id: string, owner: { pid: number; startMarker: string }): void =>
      spawns.insert({ spawnId: id, pid: 5000, pgid: 5000, sid: 5000, platform: 'linux', bootId: 'boot', startMarker: 'linux:boot:300', cgroup: null, command: '/bin/sh', ownerPid: owner.pid, ownerStartMarker: owner.startMarker, startedAt: Date.now() });
    spawn('sp_call', runA);
    spawn('sp_task', runA);
    spawn('sp_mallory', runM);
    spawn('sp_done', runA);
    const t = tasks.create(alice, { sessionId: session.id, kind: 'terminal', sourceTool: 'terminal', summary: 'sleep' }, runA);
    tasks.setSpawn(t.id, 'sp_task', null);
    spawns.finish('sp_done', { status: 'cancelled', exitCode: null, signal: 'SIGTERM', endedAt: 1_700_000_000_000, detail: null });

    const first = spawns.requestCancel(alice, 'sp_call', 'terminal A', 1000);
    assert.equal(first.kind, 'requested');
    assert.equal(first.kind === 'requested' && first.sessionId, session.id);
    const second = spawns.requestCancel(alice, 'sp_call', 'tab B', 2000);
    assert.deepEqual(second.kind === 'pending' && [second.kind, second.requestedBy], ['pending', 'terminal A'], 'the second asker is told who asked first');
    assert.deepEqual(spawns.runningOwnedBy(alice).map((o) => [o.record.spawnId, o.cancelRequestedBy]), [['sp_call', 'terminal A'], ['sp_task', null]], 'the list says which tree is being stopped, and who asked');
    assert.equal(spawns.requestCancel(alice, 'sp_task', 'terminal A').kind, 'requested', "a task's tree, through its session");
    assert.equal(spawns.requestCancel(alice, 'sp_done', 'terminal A').kind, 'ended');
    // Another principal's tree and an unknown id read alike, and nothing is written.
    assert.deepEqual(spawns.requestCancel(alice, 'sp_mallory', 'terminal A'), { kind: 'not-found' });
    assert.deepEqual(spawns.requestCancel(mallory, 'sp_call', 'mallory'), { kind: 'not-found' });
    assert.deepEqual(spawns.requestCancel(alice, 'sp_nothing', 'terminal A'), { kind: 'not-found' });
    assert.equal(db.prepare('SELECT cancel_requested_at FROM spawns WHERE spawn_id = ?').pluck().get('sp_mallory'), null);

    // The owner reads its own trees' requests (by pid and start marker), with who asked and for which session.
    assert.deepEqual(spawns.cancelRequests(runA).sort((a, b) => a.spawnId.localeCompare(b.spawnId)), [
      { spawnId: 'sp_call', requestedBy: 'terminal A', requestedAt: 1000, sessionId: session.id },
      { spawnId: 'sp_task', requestedBy: 'terminal A', requestedAt: (spawns.cancelRequests(runA).find((r) => r.spawnId === 'sp_task')!).requestedAt, sessionId: session.id },
    ]);
    assert.deepEqual(spawns.cancelRequests(reused), [], 'a process that reused the pid is not the owner');
    assert.deepEqual(spawns.cancelRequests(runM), []);
    spawns.finish('sp_call', { status: 'cancelled', exitCode: null, signal: 'SIGTERM', endedAt: Date.now(), detail: null });
    assert.deepEqual(spawns.cancelRequests(runA).map((r) => r.spawnId), ['sp_task'], 'a finished tree is asked of no more');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
