// Decision 66: many busy trees must not take the supervisor's event loop from it. The trees share
// one CPU group (where the kernel has one to give), a tree's end does not read the memory of other
// trees' processes, and slow output is read in bursts rather than line by line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProcessSupervisor } from '../../src/process/index.js';
import { detectCgroupV2 } from '../../src/process/linux/cgroup.js';
import { LiveTree } from '../../src/process/supervised-tree.js';
import { detectTreeCpuGroup, TREE_CPU_GROUP_ENV, v1CpuCgroupOf } from '../../src/process/linux/cpu-group.js';
import { alive, markedPids, waitFor } from '../helpers/procs.js';
import { linuxSupervisorSuite } from './supervisor-suite.js';

const linux = process.platform === 'linux';
const v2 = linux ? detectCgroupV2() : null;
const cpuGroup = linux ? detectTreeCpuGroup(v2) : { group: null, reason: 'Linux only' };
const v1Group = cpuGroup.group?.entryDir ?? null;

/** A tree that prints `ready` once its leader and one child run, then waits. */
const READY_WITH_CHILD = ['-c', 'sleep 30 & echo ready; wait'];

describe('trees and the supervisor share the CPU as two, not as 1 + n', { skip: !linux && 'Linux only' }, () => {
  const started = new Set<string>();
  let sup!: ProcessSupervisor;
  linuxSupervisorSuite('cgroup', started, (s) => (sup = s));

  test('every tree, started either way, runs in the trees\' CPU group and the supervisor does not', { skip: v1Group === null && `no cgroup v1 cpu group here: ${cpuGroup.reason}` }, async () => {
    // This process's own group: each supervisor's trees weigh one share together.
    const want = `/isolation-supervisor-trees-${process.pid}`;
    for (const start of ['async', 'sync'] as const) {
      let out = '';
      const options = { command: '/bin/sh', args: READY_WITH_CHILD, onStdout: (c: Buffer) => (out += c.toString()) };
      const tree = start === 'async' ? await sup.spawnTreeAsync(options) : sup.spawnTree(options);
      started.add(tree.spawnId);
      await waitFor(`${start} tree ready`, () => out.includes('ready'));
      // Waited for, not sampled: `ready` can be printed while the child is still exec'ing sleep,
      // when its /proc environ (and so its marker) reads empty for a moment (failed once at load 12).
      const members = await waitFor(`${start} tree's leader and child, both marked`, () => {
        const pids = markedPids(tree.spawnId);
        return pids.length === 2 ? pids : null;
      }).catch(() => markedPids(tree.spawnId));
      assert.equal(members.length, 2, `leader and child: ${members.join(', ')}`);
      for (const pid of members) assert.ok(v1CpuCgroupOf(pid)?.endsWith(want), `${start} tree member ${pid} is in cpu cgroup ${v1CpuCgroupOf(pid)}`);
      assert.ok(!v1CpuCgroupOf(process.pid)?.endsWith(want), 'the supervisor stays in its own CPU group');
      const outcome = await tree.stop();
      assert.equal(outcome.killed.survivors, 0);
    }
  });

  test(`${TREE_CPU_GROUP_ENV}=0 leaves trees where the supervisor is`, { skip: v1Group === null && `no cgroup v1 cpu group here: ${cpuGroup.reason}` }, async () => {
    process.env[TREE_CPU_GROUP_ENV] = '0';
    try {
      assert.equal(detectTreeCpuGroup(v2, { refresh: true }).group, null);
      let out = '';
      const tree = await sup.spawnTreeAsync({ command: '/bin/sh', args: READY_WITH_CHILD, onStdout: (c) => (out += c.toString()) });
      started.add(tree.spawnId);
      await waitFor('tree ready', () => out.includes('ready'));
      assert.equal(v1CpuCgroupOf(tree.pid), v1CpuCgroupOf(process.pid));
      await tree.stop();
    } finally {
      delete process.env[TREE_CPU_GROUP_ENV];
      detectTreeCpuGroup(v2, { refresh: true });
    }
  });

  /**
   * Trees A and B, where B's child claims to be A's: the marker a careless escapee of A would still
   * carry. It never left B's cgroup, so A's end must not touch it (nor wait on reading its memory),
   * and B's end must kill it.
   */
  async function treeAndImpostor() {
    const a = await sup.spawnTreeAsync({ command: 'sleep', args: ['30'], graceMs: 300 });
    started.add(a.spawnId);
    let out = '';
    const b = await sup.spawnTreeAsync({
      command: '/bin/sh',
      args: ['-c', 'SUPERVISOR_SPAWN_ID="$1" sleep 30 & echo ready; wait', 'sh', a.spawnId],
      graceMs: 300,
      onStdout: (c) => (out += c.toString()),
    });
    started.add(b.spawnId);
    await waitFor('B ready', () => out.includes('ready'));
    // `ready` can be printed before the background child has exec'd sleep with the marker (its
    // environ is the one it was exec'd with): wait for the marker, do not sample once.
    const impostor = await waitFor('B\'s child carrying A\'s marker', () => markedPids(a.spawnId).find((pid) => pid !== a.pid));
    return { a, b, impostor };
  }

  test('a process in another tree\'s cgroup belongs to that tree, whatever marker it carries', { skip: v2 === null && 'needs per-tree cgroups (cgroup v2)' }, async () => {
    const { a, b, impostor } = await treeAndImpostor();
    const endA = await a.stop();
    assert.equal(endA.killed.descendants, 0, JSON.stringify(endA.killed));
    assert.ok(alive(impostor), 'A\'s end left B\'s process alone');
    const endB = await b.stop();
    assert.equal(endB.killed.survivors, 0, JSON.stringify(endB.killed));
    await waitFor('B\'s child gone', () => !alive(impostor) || null);
  });

  test('the synchronous kill (process exit, the walk redone when the leader died during it) leaves another tree\'s process alone too', { skip: v2 === null && 'needs per-tree cgroups (cgroup v2)' }, async () => {
    // The asynchronous walk skipped other trees' cgroups; the synchronous one did not. A's stop
    // falls back to it when A's leader dies during a walk (the TERM it just sent), which under
    // load is most walks: B's process carrying A's marker was then killed as A's escapee.
    const { a, b, impostor } = await treeAndImpostor();
    // killSync is what killAllSync runs per tree at process exit; the public tree has stop() only.
    assert.ok(a instanceof LiveTree);
    const endA = a.killSync();
    assert.equal(endA.descendants, 0, JSON.stringify(endA));
    assert.ok(alive(impostor), 'A\'s synchronous kill left B\'s process alone');
    await a.done;
    const endB = await b.stop();
    assert.equal(endB.killed.survivors, 0, JSON.stringify(endB.killed));
    await waitFor('B\'s child gone', () => !alive(impostor) || null);
  });

  test('a root process of tree A that moves itself into B\'s cgroup outlives A\'s end and dies with B; moved anywhere else, A\'s end finds it', { skip: v2 === null && 'needs per-tree cgroups (cgroup v2)' }, async () => {
    const hider = async (target: (b: string) => string): Promise<{ a: import('../../src/process/index.js').SupervisedTree; b: import('../../src/process/index.js').SupervisedTree; pid: number }> => {
      let out = '';
      const b = await sup.spawnTreeAsync({ command: 'sleep', args: ['30'], graceMs: 300 });
      started.add(b.spawnId);
      // The attacker: a setsid'd child that writes itself into another cgroup, then reports.
      const a = await sup.spawnTreeAsync({
        command: '/bin/sh',
        args: ['-c', 'setsid sh -c \'echo $$ > "$1/cgroup.procs" && echo "moved $$" && exec sleep 30\' sh "$1" & wait', 'sh', target(b.cgroup!)],
        graceMs: 300,
        onStdout: (c) => (out += c.toString()),
      });
      started.add(a.spawnId);
      const pid = Number((await waitFor('the move', () => /moved (\d+)/.exec(out)))[1]);
      return { a, b, pid };
    };
    // Into another live tree's cgroup: that tree owns it now (decision 66), so A's end leaves it
    // and B's end kills it: it never outlives both.
    const intoB = await hider((b) => b);
    await intoB.a.stop();
    assert.ok(alive(intoB.pid), 'left to the tree whose cgroup it entered');
    const endB = await intoB.b.stop();
    assert.equal(endB.killed.survivors, 0);
    await waitFor('the hider gone with B', () => !alive(intoB.pid) || null);
    // Into the parent of every tree cgroup, which is no tree's: A's end finds it by its marker.
    const intoBase = await hider((b) => path.dirname(b));
    const endA = await intoBase.a.stop();
    assert.ok(endA.killed.escapees >= 1, JSON.stringify(endA.killed));
    await waitFor('the hider gone with A', () => !alive(intoBase.pid) || null);
    await intoBase.b.stop();
  });

  test('a plain tree\'s slow output is read in bursts, complete and in order', async () => {
    // A line every millisecond, without a fork per line (which alone can take 10 ms under load).
    const script = "let i = 0; const t = setInterval(() => { process.stdout.write(`line ${++i}\\n`); if (i === 40) clearInterval(t); }, 1);";
    const reads = async (gatherOutput: boolean): Promise<{ at: number[]; text: string }> => {
      const at: number[] = [];
      let text = '';
      const tree = await sup.spawnTreeAsync({ command: process.execPath, args: ['-e', script], gatherOutput, onStdout: (c) => {
        at.push(performance.now());
        text += c.toString();
      } });
      started.add(tree.spawnId);
      const outcome = await tree.done;
      assert.equal(outcome.exitCode, 0);
      return { at, text };
    };
    const expected = Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join('');
    const gathered = await reads(true);
    assert.equal(gathered.text, expected);
    const immediate = await reads(false);
    assert.equal(immediate.text, expected);
    // At most one read per 10 ms (a slower writer on a loaded machine only makes reads rarer):
    // about five reads for these 40 lines where taking each line as it lands needs about forty.
    const spanMs = gathered.at[gathered.at.length - 1]! - gathered.at[0]!;
    const bound = 2 + Math.floor(spanMs / 9);
    assert.ok(gathered.at.length <= bound, `gathered: ${gathered.at.length} reads in ${spanMs.toFixed(0)} ms, more than one per 10 ms (read at once: ${immediate.at.length})`);
  });

  test('a clean close leaves no tree cgroup behind, though removal runs off the loop', { skip: v2 === null && 'needs per-tree cgroups (cgroup v2)' }, async () => {
    const tree = await sup.spawnTreeAsync({ command: 'true' });
    started.add(tree.spawnId);
    await tree.done;
    await sup.close();
    assert.equal(fs.existsSync(path.join(v2!.base, tree.spawnId)), false, 'its cgroup directory was removed before close returned');
  });
});
