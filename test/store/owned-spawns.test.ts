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
