import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { markedPids } from '../helpers/procs.js';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type CgroupRoot,
  cgroupEntryWrapper,
  cgroupIsEmpty,
  cgroupPids,
  createTreeCgroup,
  detectCgroupV2,
  killCgroup,
  lastCgroupProbeReason,
  moveIntoCgroup,
  removeCgroup,
} from '../../src/process/linux/cgroup.js';

const root = detectCgroupV2();
const skipReason = root ? null : `no writable cgroup v2 here: ${lastCgroupProbeReason() ?? 'not probed'}`;
if (skipReason) console.log(`cgroup tests skipped: ${skipReason}`);

/** The cgroup root, or undefined after marking the test skipped with the probe's reason. */
function needRoot(t: TestContext): CgroupRoot | undefined {
  if (root) return root;
  t.skip(skipReason ?? 'no cgroup v2');
  return undefined;
}

function newSpawnId(): string {
  return `sp_${randomBytes(12).toString('hex')}`;
}

const pidsWithMarker = (marker: string): number[] => markedPids(marker);

function killMarked(marker: string): void {
  for (const pid of pidsWithMarker(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

async function waitFor(cond: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

test('detectCgroupV2 is cached and explains itself', () => {
  assert.equal(detectCgroupV2(), root);
  assert.ok((lastCgroupProbeReason() ?? '').length > 0);
});

test('createTreeCgroup refuses a spawn id that is not sp_<24 hex>', (t) => {
  const root = needRoot(t);
  if (!root) return;
  for (const bad of ['sp_123', '../x', 'sp_' + 'g'.repeat(24), `sp_${'a'.repeat(24)}/..`]) {
    assert.throws(() => createTreeCgroup(root, bad), { code: 'CGROUP_BAD_SPAWN_ID' });
  }
});

test('cgroupEntryWrapper passes awkward arguments through unchanged', async (t) => {
  const root = needRoot(t);
  if (!root) return;
  const dir = createTreeCgroup(root, newSpawnId());
  const marker = `cgroup-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    const weird = ['a b', `it's`, '"q"', '$HOME', '`id`', '; exit 3', '*', ''];
    const w = cgroupEntryWrapper(dir, 'printf', ['%s\\n', ...weird]);
    const r = spawnSync(w.command, w.args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: marker }, encoding: 'utf8', timeout: 5_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\n').slice(0, -1), weird);
  } finally {
    killMarked(marker);
    killCgroup(dir);
    await removeCgroup(dir, 2_000);
  }
});

test('a tree entered through the wrapper is killed whole by cgroup.kill, setsid escapee included', async (t) => {
  const root = needRoot(t);
  if (!root) return;
  const marker = `cgroup-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = createTreeCgroup(root, newSpawnId());
  let leaderPid: number | undefined;
  try {
    const w = cgroupEntryWrapper(dir, 'sh', ['-c', 'sleep 60 & setsid sleep 60 & sleep 60']);
    const child = spawn(w.command, w.args, {
      detached: true,
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: marker },
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_c, s) => resolve(s)));
    leaderPid = child.pid;
    assert.ok(leaderPid);
    // Three sleeps plus the shell (dash may exec the last sleep in place of itself), one of them in
    // a session of its own: the forked child is marked before setsid(1) has called setsid(2), so
    // wait for the escape itself, which is what the kill below is tested against.
    const sessionOf = (pid: number): string | undefined => {
      try {
        return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[3];
      } catch {
        return undefined;
      }
    };
    await waitFor(() => {
      const pids = pidsWithMarker(marker);
      return pids.length >= 3 && new Set(pids.map(sessionOf)).size >= 2;
    }, 5_000, 'the three sleeps to start, one of them escaped with setsid');
    const marked = pidsWithMarker(marker);
    const inCgroup = cgroupPids(dir);
    for (const pid of marked) assert.ok(inCgroup.includes(pid), `pid ${pid} (marker ${marker}) is not in ${dir}/cgroup.procs: ${inCgroup.join(',')}`);
    assert.ok(inCgroup.includes(leaderPid), 'exec kept the leader pid, which must be in the cgroup');
    assert.equal(cgroupIsEmpty(dir), false);

    killCgroup(dir);
    await waitFor(() => cgroupIsEmpty(dir), 5_000, `${dir} to become empty`);
    assert.equal(await exited, 'SIGKILL');
    assert.equal(await removeCgroup(dir, 2_000), true);
    assert.equal(fs.existsSync(dir), false);
    assert.deepEqual(pidsWithMarker(marker), [], 'no process of the tree may survive');
    // Removing again is fine (ENOENT is success).
    assert.equal(await removeCgroup(dir), true);
  } finally {
    killMarked(marker);
    if (leaderPid) {
      try {
        process.kill(leaderPid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    if (fs.existsSync(dir)) {
      killCgroup(dir);
      await waitFor(() => cgroupIsEmpty(dir), 5_000, 'cleanup');
      await removeCgroup(dir, 2_000);
    }
  }
});

test('moveIntoCgroup moves a running process; cgroups made inside are removed too', async (t) => {
  const root = needRoot(t);
  if (!root) return;
  const marker = `cgroup-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  const dir = createTreeCgroup(root, newSpawnId());
  try {
    const child = spawn('sleep', ['60'], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: marker } });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    assert.ok(child.pid);
    moveIntoCgroup(dir, child.pid);
    assert.deepEqual(cgroupPids(dir), [child.pid]);
    fs.mkdirSync(path.join(dir, 'nested'));
    killCgroup(dir);
    await exited;
    await waitFor(() => cgroupIsEmpty(dir), 5_000, `${dir} to become empty`);
    assert.equal(await removeCgroup(dir, 2_000), true);
    assert.equal(fs.existsSync(dir), false);
  } finally {
    killMarked(marker);
    if (fs.existsSync(dir)) {
      killCgroup(dir);
      await removeCgroup(dir, 2_000);
    }
  }
});
