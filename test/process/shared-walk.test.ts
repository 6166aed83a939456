// Trees stopped together share the asynchronous /proc walks (decision 35): each request waits for
// the next walk and is judged by its own tree's rules. Stopping a dozen hostile trees at once must
// lose nothing: every descendant found, every orphan reaped, no survivor.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProcessSupervisor, SupervisedTree } from '../../src/process/index.js';
import { fixture, markedPids, waitFor } from '../helpers/procs.js';
import { linuxSupervisorSuite } from './supervisor-suite.js';

for (const mode of ['cgroup', 'no-cgroup'] as const) {
  describe(`trees stopped together (${mode})`, { skip: process.platform !== 'linux' && 'Linux /proc walk' }, () => {
    const started = new Set<string>();
    let sup!: ProcessSupervisor;
    linuxSupervisorSuite(mode, started, (s) => (sup = s));

    test('twelve trees with forks and double-forked orphans, stopped at once: all found, none left', async () => {
      const trees: { tree: SupervisedTree; kind: 'fork-20' | 'double-fork' }[] = [];
      for (let i = 0; i < 12; i++) {
        const kind = i % 2 === 0 ? 'fork-20' : 'double-fork';
        const tree = sup.spawnTree({ command: fixture(`${kind}.sh`), graceMs: 300 });
        started.add(tree.spawnId);
        trees.push({ tree, kind });
      }
      for (const { tree, kind } of trees) {
        await waitFor(`${tree.spawnId} ready`, () => markedPids(tree.spawnId).length >= (kind === 'fork-20' ? 21 : 2), 20_000);
      }
      let stalls = 0;
      let last = Date.now();
      const ticker = setInterval(() => {
        if (Date.now() - last > 1_000) stalls++;
        last = Date.now();
      }, 20);
      const outs = await Promise.all(trees.map(({ tree }) => tree.stop()));
      clearInterval(ticker);
      outs.forEach((out, i) => {
        const { tree, kind } = trees[i]!;
        assert.equal(out.killed.survivors, 0, `${kind} ${tree.spawnId}: ${JSON.stringify(out.killed)}`);
        if (kind === 'fork-20') assert.equal(out.killed.descendants, 20, JSON.stringify(out.killed));
        else assert.ok(out.killed.escapees >= 1, JSON.stringify(out.killed));
        assert.deepEqual(markedPids(tree.spawnId), []);
      });
      assert.equal(stalls, 0, 'the event loop kept turning while the trees were swept');
    });
  });
}
