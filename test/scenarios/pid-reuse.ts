// Runs as pid 1 of a private pid namespace (unshare -p -f --mount-proc). Forces the pid of a dead
// supervised leader onto a new, unrelated session leader through ns_last_pid, then points every
// kill path that holds the stale record at it. Prints one JSON line; the test asserts on it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProcessSupervisor } from '../../src/process/index.js';
import { LinuxPlatform } from '../../src/process/linux/linux-platform.js';
import { readStat } from '../../src/process/linux/procfs.js';
import { killTreeSync } from '../../src/process/terminate.js';
import type { TreeMember } from '../../src/process/platform.js';

const stateDir = process.argv[2]!;
const platform = new LinuxPlatform({ cgroups: false });
const sup = ProcessSupervisor.open({ stateDir, platform, reconcile: false });

const tree = sup.spawnTree({ command: 'sleep', args: ['30'], artifacts: false, graceMs: 100 });
const stale = sup.records.get(tree.spawnId)!;
const oldPid = tree.pid;
const oldMarker = tree.startMarker;
await tree.stop();

// The record goes back to `running` and its owner becomes a process that never existed, as if
// the supervisor had died with the tree still up.
sup.records.finish(tree.spawnId, { status: 'running', exitCode: null, signal: null, endedAt: 0, detail: null });
const db = (sup as unknown as { db: { prepare(s: string): { run(...a: unknown[]): void } } }).db;
db.prepare('UPDATE spawns SET owner_pid = ?, owner_start_marker = ? WHERE spawn_id = ?').run(999_999, 'linux:x:1', tree.spawnId);

// Force the next pid to be the dead leader's: a detached (new session, group leader) stranger.
await sleep(50);
writeFileSync('/proc/sys/kernel/ns_last_pid', String(oldPid - 1));
const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
const reused = stranger.pid === oldPid;
const strangerStat = readStat(stranger.pid!);

// 1. A stale in-process handle: the leader is no longer held, the marker no longer matches.
const seen = new Map<number, TreeMember>();
const tally = new Map<string, TreeMember>();
killTreeSync({
  platform,
  tree: { spawnId: stale.spawnId, pid: oldPid, pgid: oldPid, sid: oldPid, startMarker: oldMarker, cgroup: null },
  leaderHeld: () => false,
  leaders: () => new Set<number>(),
  seen,
  tally,
});
await sleep(100);
const aliveAfterStaleKill = readStat(stranger.pid!)?.state !== undefined && readStat(stranger.pid!)?.state !== 'Z';

// 2. Crash reconciliation from the stale record.
const report = sup.reconcile();
await sleep(100);
const aliveAfterReconcile = readStat(stranger.pid!)?.state !== undefined && readStat(stranger.pid!)?.state !== 'Z';
const after = sup.records.get(tree.spawnId)!;

process.stdout.write(
  JSON.stringify({
    oldPid,
    strangerPid: stranger.pid,
    reused,
    strangerPgid: strangerStat?.pgrp,
    aliveAfterStaleKill,
    aliveAfterReconcile,
    staleKillTally: tally.size,
    report,
    statusAfter: after.status,
  }) + '\n',
);
stranger.kill('SIGKILL');
await sup.close();
process.exit(0);
