// Two principals' sessions in one library process (decision 110's residual risk): their trees share
// the owning process's pid and start marker, so ownership cannot be inferred from the owner alone.
// The attacker is principal A in the same process: it lists the live trees and asks to cancel
// principal B's tree (a plain tree and B's MCP server on a shared host) by spawn id. What it got is
// asserted: nothing listed, `not-found`, and B's processes still alive in /proc. B cancelling its own
// tree is the control.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSession, openSessionHost, type Session } from '../../src/index.js';
import { openStore } from '../../src/store/index.js';
import { requestTreeCancel } from '../../src/operator/tree-cancel.js';
import { liveTrees } from '../../src/operator/live-trees.js';
import { removeTempCores } from '../core/temp-core.js';
import { memoryServerCore } from '../helpers/memory-core.js';
import { alive, tempDir, waitFor } from '../helpers/procs.js';
import { AlwaysApprove } from '../helpers/approvers.js';

const memoryCore = (): string => memoryServerCore('two-principals', 'auto');

describe("one process, two principals: neither sees nor cancels the other's trees", () => {
  const state = tempDir('principal-trees-');
  after(() => {
    state.remove();
    removeTempCores();
  });

  test("principal A (the older session) asks to cancel B's plain tree and B's MCP server by spawn id: not-found, both alive; B's own cancel works", async () => {
    const core = memoryCore();
    const host = openSessionHost({ stateDir: state.path });
    const opened: Session[] = [];
    const db = openStore(join(state.path, 'supervisor.db'));
    try {
      // A opens first: before the fix, a tree without a task was given to the oldest running
      // session of any principal in the owning process.
      const a = await openSession({ core, host, approver: new AlwaysApprove(), principal: 'local:alice' });
      opened.push(a);
      const b = await openSession({ core, host, approver: new AlwaysApprove(), principal: 'local:bob' });
      opened.push(b);
      const bTree = b.spawnTree({ command: 'sleep', args: ['30'], artifacts: false });
      const bServer = b.mcp!.servers.find((m) => m.server === 'memory')!;
      assert.equal(bServer.connection, 'new');
      const bServerPid = bServer.pid!;
      const bServerTree = (db.prepare('SELECT spawn_id FROM spawns WHERE pid = ?').get(bServerPid) as { spawn_id: string }).spawn_id;
      await waitFor('B\'s tree recorded running', () => (db.prepare("SELECT status FROM spawns WHERE spawn_id = ?").get(bTree.spawnId) as { status: string } | undefined)?.status === 'running', 5_000);

      const seenByA = (await liveTrees(db, { principal: 'local:alice' })).map((t) => t.spawnId);
      assert.ok(!seenByA.includes(bTree.spawnId), `A is shown B's tree: ${seenByA.join(', ')}`);
      assert.ok(!seenByA.includes(bServerTree), `A is shown B's MCP server: ${seenByA.join(', ')}`);
      const seenByB = (await liveTrees(db, { principal: 'local:bob' })).map((t) => t.spawnId);
      assert.ok(seenByB.includes(bTree.spawnId) && seenByB.includes(bServerTree), 'B sees its own trees');

      for (const id of [bTree.spawnId, bServerTree]) {
        assert.equal(requestTreeCancel(db, { principal: 'local:alice' }, id, 'principal A').kind, 'not-found', `A's cancel of ${id}`);
      }
      await new Promise((r) => setTimeout(r, 600)); // three of the owner's polls: a request would have acted
      assert.ok(alive(bTree.pid), "B's tree still runs");
      assert.ok(alive(bServerPid), "B's MCP server still runs");

      assert.equal(requestTreeCancel(db, { principal: 'local:bob' }, bTree.spawnId, 'principal B').kind, 'requested');
      assert.equal((await bTree.done).reason, 'cancelled');
      assert.ok(!alive(bTree.pid), "B's own cancel stopped its tree");
    } finally {
      db.close();
      for (const s of opened.reverse()) await s.close();
      await host.close();
    }
  });
});
