// Windows: one Job Object per tree with KILL_ON_JOB_CLOSE and no breakaway, entered before the tree
// runs. A plain tree (stdin NUL or inherited, two output pipes) whose command is an .exe or .com is
// started as itself: CreateProcessW suspended, AssignProcessToJobObject, ResumeThread (decision 85).
// Other trees (a stdin pipe, IPC, a data channel; a .bat or .cmd), and every tree when the suspended
// start is not available here, get the launcher: a small Node program that waits on its IPC channel
// until the supervisor has assigned it to the job and said "go". Only the supervisor holds the job
// handle: if it dies, the kernel closes the handle and kills the tree.
// Start marker: the creation time (GetProcessTimes, 100 ns ticks since 1601, absolute across boots).
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as k32 from '../../../native-helpers/kernel32.js';
import { attributeListSize } from '../../../native-helpers/kernel32-spawn.js';
import { debugOn, debugTree } from '../debug-log.js';
import type { LeaderSpawnOptions, PlatformCapabilities, PrepareOptions, PreparedSpawn, ProcessPlatform, ProcessUsage, SpawnedLeader, TreeIdentity, TreeMember } from '../platform.js';
import { win32Usage, type Win32ProcessFacts } from './process-usage.js';
import { startSuspendedLeader, startSuspendedLeaderAsync, SuspendedLeader } from './suspended-leader.js';
import type { StartMarker } from '../types.js';

const LAUNCHER = fileURLToPath(new URL('./job-launcher-entry.js', import.meta.url));
/** Exit code given to processes ended by TerminateJobObject (1 is what `taskkill /f` uses). */
export const JOB_KILL_EXIT_CODE = 1;

/** How a tree's leader is started: the command itself, suspended, or the Node launcher. */
export type WindowsStartPath = 'suspended' | 'launcher';

export interface WindowsStartChoice {
  path: WindowsStartPath;
  /** Why, in a sentence `doctor` prints. */
  why: string;
}

/** What runs a command through CreateProcessW directly: a program, not a script for cmd.exe. */
const DIRECT_PROGRAM = /\.(exe|com)$/i;

interface JobState {
  job: bigint;
  start: WindowsStartPath;
}

/**
 * Suspended start unless SUPERVISOR_SPAWN=node asks for Node's spawn() (here: the launcher), or
 * this Windows has no PROC_THREAD_ATTRIBUTE_HANDLE_LIST (without it the child would inherit every
 * inheritable handle of the supervisor).
 */
export function chooseStartPath(env: NodeJS.ProcessEnv = process.env): WindowsStartChoice {
  if (env.SUPERVISOR_SPAWN === 'node') return { path: 'launcher', why: 'SUPERVISOR_SPAWN=node asks for Node spawn()' };
  if (attributeListSize() === 0) return { path: 'launcher', why: 'InitializeProcThreadAttributeList is missing, so no handle list could limit what the child inherits' };
  return { path: 'suspended', why: 'PROC_THREAD_ATTRIBUTE_HANDLE_LIST is available, so the child inherits its three stdio handles and nothing else' };
}

export class Win32Platform implements ProcessPlatform {
  readonly name = 'win32' as const;
  private caps: PlatformCapabilities | undefined;
  private startChoice: WindowsStartChoice | undefined;
  private readonly jobs = new Map<string, JobState>();

  /** The start path of plain trees on this machine, and why (doctor prints it). */
  get startPath(): WindowsStartChoice {
    this.init();
    return this.startChoice!;
  }

  init(): PlatformCapabilities {
    if (this.caps) return this.caps;
    // Fail early and clearly: without kernel32 through ffi-rs there is no job to own a tree.
    if (!k32.kernel32Available()) {
      throw new k32.NativeHelperError('Windows supervision needs ffi-rs with its win32 binary to reach kernel32 (Job Objects)');
    }
    this.startChoice = chooseStartPath();
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

  prepareSpawn(spawnId: string, command: string, args: readonly string[], o: PrepareOptions = {}): PreparedSpawn {
    this.init();
    const job = k32.createJobObject();
    try {
      k32.setKillOnJobClose(job);
    } catch (err) {
      k32.closeHandle(job);
      throw err;
    }
    const start: WindowsStartPath = o.plain === true && this.startChoice!.path === 'suspended' && DIRECT_PROGRAM.test(command) ? 'suspended' : 'launcher';
    this.jobs.set(spawnId, { job, start });
    if (start === 'suspended') return { command, args: [...args], cgroup: null };
    return { command: process.execPath, args: [LAUNCHER, command, ...args], cgroup: null, ipc: true };
  }

  /**
   * The command itself, in its job before it runs. Never null for a tree prepared for it: a Node
   * spawn() of the command would run it outside the job, so a failure throws (nothing is started).
   */
  spawnLeader(command: string, args: readonly string[], o: LeaderSpawnOptions): SpawnedLeader | null {
    const state = o.spawnId === undefined ? undefined : this.jobs.get(o.spawnId);
    if (state?.start !== 'suspended') return null;
    return startSuspendedLeader(command, args, { cwd: o.cwd, env: o.env, stdin: o.stdin ?? 'ignore', job: state.job });
  }

  /**
   * spawnLeader with CreateProcessW on a thread (start(): background tasks), unless
   * SUPERVISOR_SPAWN=main-thread. Null for trees that take the launcher.
   */
  spawnLeaderAsync(command: string, args: readonly string[], o: LeaderSpawnOptions): Promise<SpawnedLeader> | null {
    const state = o.spawnId === undefined ? undefined : this.jobs.get(o.spawnId);
    if (state?.start !== 'suspended' || process.env.SUPERVISOR_SPAWN === 'main-thread') return null;
    return startSuspendedLeaderAsync(command, args, { cwd: o.cwd, env: o.env, stdin: o.stdin ?? 'ignore', job: state.job });
  }

  adopt(spawnId: string, child: ChildProcess): void {
    const state = this.jobs.get(spawnId);
    if (!state || child.pid === undefined) throw new Error(`no job prepared for ${spawnId}`);
    if (state.start === 'suspended') {
      // Already in the job since before it ran; anything else was started outside it.
      if (!((child as unknown) instanceof SuspendedLeader)) throw new Error(`the tree ${spawnId} was prepared for a suspended start but its leader was not started by it`);
      return;
    }
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

  /** One handle, opened to query only, answers every figure: the process cannot change under the read. */
  usage(pid: number, startTime: string): ProcessUsage | null {
    return win32Usage(readProcessFacts, pid, startTime);
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

function readProcessFacts(pid: number): Win32ProcessFacts | null {
  return withProcess(
    pid,
    (h) => {
      const times = k32.processTimes(h);
      if (times === null) return null;
      return { ...times, running: k32.exitCodeOf(h) === k32.STILL_ACTIVE, workingSetBytes: k32.workingSetBytes(h), imagePath: k32.processImageName(h) };
    },
    k32.PROCESS_QUERY_LIMITED_INFORMATION | k32.PROCESS_VM_READ,
  );
}

/** Runs `fn` with a process handle (default: opened for querying and terminating); null when the pid is gone. */
function withProcess<T>(pid: number, fn: (h: bigint) => T, access?: number): T | null {
  const h = access === undefined ? k32.openProcess(pid) : k32.openProcess(pid, access);
  if (h === null) return null;
  try {
    return fn(h);
  } finally {
    k32.closeHandle(h);
  }
}
