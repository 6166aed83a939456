// Windows: one Job Object per tree with KILL_ON_JOB_CLOSE and no breakaway. The leader is a small
// launcher that waits on its IPC channel; the supervisor assigns it to the job, then says "go", so
// the command and all its descendants are in the job before they run. Only the supervisor holds
// the job handle: if it dies, the kernel closes the handle and kills the tree.
// Start marker: the creation time (GetProcessTimes, 100 ns ticks since 1601, absolute across boots).
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as k32 from '../../../native-helpers/kernel32.js';
import { debugOn, debugTree } from '../debug-log.js';
import type { PlatformCapabilities, PreparedSpawn, ProcessPlatform, TreeIdentity, TreeMember } from '../platform.js';
import type { StartMarker } from '../types.js';

const LAUNCHER = fileURLToPath(new URL('./job-launcher-entry.js', import.meta.url));
/** Exit code given to processes ended by TerminateJobObject (1 is what `taskkill /f` uses). */
export const JOB_KILL_EXIT_CODE = 1;

interface JobState {
  job: bigint;
}

export class Win32Platform implements ProcessPlatform {
  readonly name = 'win32' as const;
  private caps: PlatformCapabilities | undefined;
  private readonly jobs = new Map<string, JobState>();

  init(): PlatformCapabilities {
    if (this.caps) return this.caps;
    // Fail early and clearly: without kernel32 through ffi-rs there is no job to own a tree.
    if (!k32.kernel32Available()) {
      throw new k32.NativeHelperError('Windows supervision needs ffi-rs with its win32 binary to reach kernel32 (Job Objects)');
    }
    this.caps = { subreaper: false, pidfd: false, cgroup: false };
    return this.caps;
  }

  startMarker(pid: number): StartMarker | null {
    const t = withProcess(pid, (h) => k32.processCreationTime(h));
    return t === null || t === undefined ? null : { platform: 'win32', bootId: '', startTime: t.toString() };
  }

  isSameProcess(pid: number, marker: StartMarker): boolean {
    if (marker.platform !== 'win32') return false;
    return (
      withProcess(pid, (h) => k32.exitCodeOf(h) === k32.STILL_ACTIVE && k32.processCreationTime(h)?.toString() === marker.startTime) ===
      true
    );
  }

  prepareSpawn(spawnId: string, command: string, args: readonly string[]): PreparedSpawn {
    this.init();
    const job = k32.createJobObject();
    try {
      k32.setKillOnJobClose(job);
    } catch (err) {
      k32.closeHandle(job);
      throw err;
    }
    this.jobs.set(spawnId, { job });
    return { command: process.execPath, args: [LAUNCHER, command, ...args], cgroup: null, ipc: true };
  }

  adopt(spawnId: string, child: ChildProcess): void {
    const state = this.jobs.get(spawnId);
    if (!state || child.pid === undefined) throw new Error(`no job prepared for ${spawnId}`);
    const h = k32.openProcess(child.pid);
    if (h === null) throw new Error(`OpenProcess(${child.pid}) failed: the launcher is gone`);
    try {
      k32.assignProcessToJobObject(state.job, h);
    } finally {
      k32.closeHandle(h);
    }
    // Only now may the launcher start the command.
    child.send('go');
  }

  /** Pids in a live tree's job right now (diagnostics and tests); empty when the tree is not ours. */
  jobPids(spawnId: string): number[] {
    const state = this.jobs.get(spawnId);
    return state ? k32.jobProcessIds(state.job) : [];
  }

  members(tree: TreeIdentity, _leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    const state = this.jobs.get(tree.spawnId);
    const live: TreeMember[] = [];
    if (!state) {
      // A predecessor's tree (reconciliation): only the verified leader can be named.
      if (this.isSameProcess(tree.pid, tree.startMarker)) live.push({ pid: tree.pid, startTime: tree.startMarker.startTime, escapee: false, leftSession: false });
      return live;
    }
    for (const pid of k32.jobProcessIds(state.job)) {
      const t = withProcess(pid, (h) => (k32.exitCodeOf(h) === k32.STILL_ACTIVE ? k32.processCreationTime(h) : null));
      if (t === null || t === undefined) continue;
      const m: TreeMember = { pid, startTime: t.toString(), escapee: false, leftSession: false };
      seen.set(pid, m);
      live.push(m);
    }
    return live;
  }

  signalTree(tree: TreeIdentity, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    const live = this.members(tree, leaderHeld, seen);
    // Windows has no TERM for arbitrary processes; the graceful step is the tree closing stdin.
    if (signal !== 'SIGKILL') return live;
    const state = this.jobs.get(tree.spawnId);
    if (state) {
      const sent = k32.terminateJobObject(state.job, JOB_KILL_EXIT_CODE);
      if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig: 'KILL', via: 'job', found: live.length, sent });
    } else {
      for (const m of live) {
        const sent = withProcess(m.pid, (h) => k32.processCreationTime(h)?.toString() === m.startTime && k32.terminateProcess(h, JOB_KILL_EXIT_CODE));
        if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig: 'KILL', via: 'verified-pid', target: m.pid, sent: sent === true });
      }
    }
    return live;
  }

  reapAdopted(): number {
    return 0; // Windows has no zombies to reap.
  }

  releaseTree(tree: TreeIdentity): void {
    const state = this.jobs.get(tree.spawnId);
    if (!state) return;
    this.jobs.delete(tree.spawnId);
    // KILL_ON_JOB_CLOSE: anything still in the job dies with the last handle.
    k32.closeHandle(state.job);
  }
}

/** Runs `fn` with a process handle opened for querying and terminating; null when the pid is gone. */
function withProcess<T>(pid: number, fn: (h: bigint) => T): T | null {
  const h = k32.openProcess(pid);
  if (h === null) return null;
  try {
    return fn(h);
  } finally {
    k32.closeHandle(h);
  }
}
