// Drives one supervisor through the lifecycle events that NODE_DEBUG=supervisor logs, for
// test/process/debug-log.test.ts, which runs it with and without the variable and reads stderr.
// Tree 1 (sh that ignores TERM, a child `sleep 60` that inherits the ignore, and an orphan
// `sleep 61` re-parented to this process) is stopped: TERM, the grace, then KILL. Tree 2 is killed
// by killAllSync, the forced kill of a shutdown. Prints one JSON line on stdout; exits 0.
// Usage: node debug-log-tree.js <stateDir> <cgroup|no-cgroup> <thread|main>
import { ProcessSupervisor } from '../../src/process/index.js';
import { LinuxPlatform } from '../../src/process/linux/linux-platform.js';
import type { SupervisedTree } from '../../src/process/types.js';
import { markedPids, waitFor } from '../helpers/procs.js';

const [stateDir, mode, path] = process.argv.slice(2) as [string, string, string];
const sup = ProcessSupervisor.open({ stateDir, platform: new LinuxPlatform({ cgroups: mode === 'cgroup' }) });
const started: string[] = [];
try {
  let out = '';
  let ready!: () => void;
  const printed = new Promise<void>((r) => (ready = r));
  const opts = {
    command: '/bin/sh',
    // The argument is logged nowhere: the test looks for this word in stderr.
    args: ['-c', "trap '' TERM; sleep 60 & (sleep 61 &); echo ready; while :; do sleep 0.1; done", 'not-in-the-log'],
    graceMs: 300,
    artifacts: false,
    onStdout: (c: Buffer) => {
      out += c.toString();
      if (out.includes('ready')) ready();
    },
  } as const;
  const tree: SupervisedTree = path === 'thread' ? await sup.spawnTreeAsync(opts) : sup.spawnTree(opts);
  started.push(tree.spawnId);
  await printed;
  // The leader, sleep 60, sleep 61 and the loop's current sleep 0.1 (at least the first three).
  const members = await waitFor('the tree’s processes', () => (markedPids(tree.spawnId).length >= 3 ? markedPids(tree.spawnId) : null));
  const outcome = await tree.stop();

  const second = sup.spawnTree({ command: 'sleep', args: ['60'], artifacts: false });
  started.push(second.spawnId);
  await waitFor('the second tree', () => markedPids(second.spawnId).length >= 1);
  const forced = sup.killAllSync();
  const outcome2 = await second.done;
  await sup.close();
  process.stdout.write(
    `${JSON.stringify({
      spawnId: tree.spawnId,
      pid: tree.pid,
      cgroup: tree.cgroup,
      members: members.filter((p) => p !== tree.pid),
      subreaper: sup.capabilities.subreaper,
      signal: outcome.signal,
      reason: outcome.reason,
      survivors: outcome.killed.survivors,
      second: { spawnId: second.spawnId, pid: second.pid, forced, signal: outcome2.signal },
    })}\n`,
  );
} catch (err) {
  process.stderr.write(`scenario failed: ${(err as Error).stack}\n`);
  sup.killAllSync();
  await sup.close();
  process.exitCode = 1;
}
