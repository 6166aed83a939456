// /proc reads behind tree membership: the environment marker is read once per process and kept, so
// a member that execs with its marker removed after it was seen is still found by it; reads through
// the shared buffer return whole files, however large.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readEnviron, readStat, spawnMarkersOf, pruneMarkerCache } from '../../src/process/linux/procfs.js';
import { waitFor } from '../helpers/procs.js';

const linuxOnly = process.platform !== 'linux' && 'Linux /proc';

function start(command: string, env: Record<string, string>): ChildProcess {
  const child = spawn('/bin/sh', ['-c', command], { env, stdio: 'ignore' });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((r) => child.once('close', r));
  child.kill('SIGKILL');
  await closed;
}

describe('procfs reads for tree membership', { skip: linuxOnly }, () => {
  test('a process that execs without its marker after it was seen still carries it', async () => {
    const id = 'sp_0123456789abcdef01234567';
    // The shell waits for a file, then replaces itself with a process whose environment is empty.
    const gate = `/tmp/procfs-gate-${process.pid}-${Date.now()}`;
    const child = start(`while [ ! -e ${gate} ]; do sleep 0.02; done; exec env -i /bin/sleep 30`, { PATH: process.env.PATH ?? '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: id });
    try {
      const pid = child.pid!;
      await waitFor('the shell is running', () => readStat(pid) !== null, 5_000);
      const before = readStat(pid)!;
      assert.deepEqual(spawnMarkersOf(pid, before.startTime), [id]);
      writeFileSync(gate, '');
      try {
        // An environment read mid-exec can come back empty: wait for sleep itself.
        await waitFor('sleep runs with an empty environment', () => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' && readEnviron(pid)?.length === 0, 5_000);
      } finally {
        rmSync(gate, { force: true });
      }
      const after = readStat(pid)!;
      assert.equal(after.startTime, before.startTime, 'an exec keeps the process identity');
      // A fresh read finds nothing now; the membership rule keeps what it saw.
      assert.deepEqual(spawnMarkersOf(pid, after.startTime), [id]);
      // A new identity for the same pid (as after reuse) is read again.
      assert.deepEqual(spawnMarkersOf(pid, String(BigInt(after.startTime) + 1n)), []);
      pruneMarkerCache(new Set());
      assert.deepEqual(spawnMarkersOf(pid, after.startTime), [], 'a pruned entry is read afresh');
    } finally {
      await stop(child);
    }
  });

  test('an empty environment read is not kept: the marker an exec then shows is found', async () => {
    // Mid-exec, /proc/<pid>/environ reads as empty; so does a process started with no environment.
    const child = spawn('/usr/bin/env', ['-i', '/bin/sh', '-c', 'while [ ! -e "$0" ]; do sleep 0.02; done; exec /usr/bin/env SUPERVISOR_SPAWN_ID=sp_late /bin/sleep 30', `/tmp/procfs-gate2-${process.pid}-${Date.now()}`], { stdio: 'ignore' });
    const gate = child.spawnargs[child.spawnargs.length - 1]!;
    try {
      const pid = child.pid!;
      await waitFor('the shell runs with no environment', () => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sh' && readEnviron(pid)?.length === 0, 5_000);
      const st = readStat(pid)!;
      assert.deepEqual(spawnMarkersOf(pid, st.startTime), []);
      writeFileSync(gate, '');
      await waitFor('sleep runs with the marker', () => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' && (readEnviron(pid)?.includes('SUPERVISOR_SPAWN_ID=sp_late') ?? false), 5_000);
      assert.deepEqual(spawnMarkersOf(pid, st.startTime), ['sp_late']);
    } finally {
      rmSync(gate, { force: true });
      await stop(child);
    }
  });

  test('only whole SUPERVISOR_SPAWN_ID entries count, not a value that spells one', async () => {
    const child = spawn('/usr/bin/env', ['-i', 'X=SUPERVISOR_SPAWN_ID=sp_fake', 'SUPERVISOR_SPAWN_ID=sp_b', 'Y=1', '/bin/sleep', '30'], { stdio: 'ignore' });
    try {
      const pid = child.pid!;
      // Until the exec the child shows this process's environment: wait for sleep's own.
      await waitFor('sleep has its environment', () => (readEnviron(pid)?.includes('X=SUPERVISOR_SPAWN_ID=sp_fake') ?? false), 5_000);
      const st = readStat(pid)!;
      pruneMarkerCache(new Set());
      assert.deepEqual(spawnMarkersOf(pid, st.startTime), ['sp_b']);
    } finally {
      await stop(child);
    }
  });

  test('an environment larger than the shared buffer is read whole', async () => {
    // One string may not exceed 128 KiB (MAX_ARG_STRLEN): four of 60 KiB make 240 KiB.
    const big = 'x'.repeat(60 * 1024);
    const child = spawn('/bin/sleep', ['30'], { env: { BIG1: big, BIG2: big, BIG3: big, BIG4: big, LAST: 'end' }, stdio: 'ignore' });
    try {
      const pid = child.pid!;
      // Until (and during) the exec the child shows this process's environment, or none: wait for sleep's own.
      await waitFor('sleep has its environment', () => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep' && (readEnviron(pid)?.includes('LAST=end') ?? false), 5_000);
      const env = readEnviron(pid)!;
      for (const name of ['BIG1', 'BIG2', 'BIG3', 'BIG4']) assert.ok(env.includes(`${name}=${big}\0`), `${name} read whole (${env.length} bytes)`);
      // The copy is the caller's: a later read does not change it.
      const copy = Buffer.from(env);
      readStat(process.pid);
      assert.ok(env.equals(copy));
    } finally {
      await stop(child);
    }
  });
});
