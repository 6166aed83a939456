// Decision 110 at the lifecycle layer: a cancel request stored for one of this supervisor's trees
// (by another connection, as `supervisor cancel sp_…` or the page writes it) is picked up by the
// supervisor's poll, the whole tree is stopped by the ladder (its setsid escapee included), the
// waiter sees `cancelled`, and the session's audit chain records it once, still verifying. A tree
// nobody asked about runs on.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProcessSupervisor } from '../../src/process/index.js';
import { openStore, SessionStore, SpawnRecordStore, verifyChain } from '../../src/store/index.js';
import { readStat } from '../../src/process/linux/procfs.js';
import { alive, markedPids, tempDir, waitFor } from '../helpers/procs.js';

describe("a cancel request for one of the supervisor's trees", { skip: process.platform !== 'linux' && 'POSIX shell and /proc' }, () => {
  test('stops that whole tree, escapee included, records it once in the audit chain, and leaves the other tree alone', async () => {
    const dir = tempDir('tree-cancel-request-');
    const sup = ProcessSupervisor.open({ stateDir: dir.path, cancelPollMs: 20 });
    const operator = openStore(join(dir.path, 'supervisor.db'), { checkpointer: false });
    try {
      const principal = { principal: 'local:test' };
      const session = new SessionStore(operator).createSession(principal, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner: sup.owner });
      const target = await sup.spawnTreeAsync({ command: '/bin/sh', args: ['-c', 'setsid sleep 307 & sleep 308'], timeoutMs: 60_000 });
      const bystander = await sup.spawnTreeAsync({ command: '/bin/sh', args: ['-c', 'sleep 309'], timeoutMs: 60_000 });
      const pids = await waitFor('both sleeps', () => {
        const p = markedPids(target.spawnId);
        return p.filter((pid) => readStat(pid)?.name === 'sleep').length === 2 ? p : null;
      });
      const asked = new SpawnRecordStore(operator).requestCancel(principal, target.spawnId, 'a test operator');
      assert.equal(asked.kind, 'requested');
      const outcome = await target.done;
      assert.equal(outcome.reason, 'cancelled');
      assert.equal(outcome.killed.survivors, 0);
      assert.ok(outcome.killed.escapees >= 1, JSON.stringify(outcome.killed));
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
      assert.equal(new SpawnRecordStore(operator).get(target.spawnId)?.status, 'cancelled');

      // Several more polls: the request is acted on once.
      await sleep(200);
      const events = operator.prepare("SELECT payload FROM runtime_events WHERE session_id = ? AND kind = 'tree.cancelled'").pluck().all(session.id) as string[];
      assert.equal(events.length, 1);
      assert.deepEqual(
        (({ spawn_id, requested_by, outcome: o }) => ({ spawn_id, requested_by, outcome: o }))(JSON.parse(events[0]!) as { spawn_id: string; requested_by: string; outcome: string }),
        { spawn_id: target.spawnId, requested_by: 'a test operator', outcome: 'cancelled' },
      );
      assert.equal(verifyChain(operator, session.id).ok, true);
      assert.ok(markedPids(bystander.spawnId).length > 0, 'the tree nobody asked about runs on');
    } finally {
      await sup.close();
      operator.close();
      dir.remove();
    }
  });
});
