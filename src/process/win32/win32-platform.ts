// Windows: one Job Object per tree with KILL_ON_JOB_CLOSE and no breakaway, entered before the tree
// runs. A tree's leader is started as itself: CreateProcessW suspended, AssignProcessToJobObject,
// ResumeThread (decisions 85, 107), with stdin NUL, inherited or a pipe the supervisor writes, two
// output pipes, and for a tree with a data channel (authored tool hosts) a duplex pipe as its fd 3
// in the C runtime's inherited fd table, as Node's spawn() would pass it (decision 116); a .bat or
// .cmd the same way as cmd.exe with a command line quoted by cmd's rules (decision 108). The
// launcher, a small Node program that waits on its IPC channel until the supervisor has assigned it
// to the job and said "go", remains the fallback: SUPERVISOR_SPAWN=node, a Windows without the
// attribute list, a command that is no .exe/.com/.bat/.cmd (decision 109). Only the supervisor
// holds the job handle: if it dies, the kernel closes the handle and kills the tree.
// Start marker: the creation time (GetProcessTimes, 100 ns ticks since 1601, absolute across boots).
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import * as k32 from '../../../native-helpers/kernel32.js';
import { attributeListSize } from '../../../native-helpers/kernel32-spawn.js';
import { debugOn, debugTree } from '../debug-log.js';
import type { LeaderSpawnOptions, PlatformCapabilities, PrepareOptions, PreparedSpawn, ProcessPlatform, ProcessUsage, SpawnedLeader, TreeIdentity, TreeMember } from '../platform.js';
import { win32Usage, type Win32ProcessFacts } from './process-usage.js';
import { startSuspendedLeader, startSuspendedLeaderAsync, SuspendedLeader } from './suspended-leader.js';
import { BATCH_FILE, cmdArguments, cmdExePath, windowsProgram, type WindowsProgram } from './command-line.js';
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

/** What the suspended start runs: a program, or a script it hands to cmd.exe itself. */
const STARTABLE = /\.(exe|com|bat|cmd)$/i;

/** Trees that keep the launcher on a machine that starts the others suspended, and why (doctor, decision 109). */
export const LAUNCHER_TREES =
  'only a command that is no .exe, .com, .bat or .cmd uses the Node launcher, which waits in the job for "go"; SUPERVISOR_SPAWN=node sends every tree there';

interface JobState {
  job: bigint;
  start: WindowsStartPath;
  /** The suspended start's program and command line, checked when the tree was prepared. */
  program?: WindowsProgram;
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
    const shape = o.plain === true || o.stdinPipe === true || o.channel === true;
    const start: WindowsStartPath = shape && this.startChoice!.path === 'suspended' && STARTABLE.test(command) ? 'suspended' : 'launcher';
    // The command line first: one that cannot be quoted safely refuses the tree before any job exists.
    const program = start === 'suspended' ? windowsProgram(command, args) : undefined;
    const launcherArgs = start === 'launcher' ? launcherArguments(command, args) : [];
    const job = k32.createJobObject();
    try {
      k32.setKillOnJobClose(job);
    } catch (err) {
      k32.closeHandle(job);
      throw err;
    }
    this.jobs.set(spawnId, { job, start, program });
    if (start === 'suspended') return { command: program!.application, args: [...args], cgroup: null };
    return { command: process.execPath, args: launcherArgs, cgroup: null, ipc: true };
  }

  /**
   * The command itself (its program and command line as prepareSpawn fixed them), in its job
   * before it runs. Never null for a tree prepared for it: a Node
   * spawn() of the command would run it outside the job, so a failure throws (nothing is started).
   */
  spawnLeader(_command: string, _args: readonly string[], o: LeaderSpawnOptions): SpawnedLeader | null {
    const state = o.spawnId === undefined ? undefined : this.jobs.get(o.spawnId);
    if (state?.start !== 'suspended') return null;
    return startSuspendedLeader(state.program!, { cwd: o.cwd, env: o.env, stdin: o.stdin ?? 'ignore', channel: o.channel, job: state.job });
  }

  /**
   * spawnLeader with CreateProcessW on a thread (start(): background tasks), unless
   * SUPERVISOR_SPAWN=main-thread. Null for trees that take the launcher.
   */
  spawnLeaderAsync(_command: string, _args: readonly string[], o: LeaderSpawnOptions): Promise<SpawnedLeader> | null {
    const state = o.spawnId === undefined ? undefined : this.jobs.get(o.spawnId);
    if (state?.start !== 'suspended' || process.env.SUPERVISOR_SPAWN === 'main-thread') return null;
    return startSuspendedLeaderAsync(state.program!, { cwd: o.cwd, env: o.env, stdin: o.stdin ?? 'ignore', channel: o.channel, job: state.job });
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

  /** How a live tree's leader was started (diagnostics and tests); null when the tree is not ours. */
  treeStartPath(spawnId: string): WindowsStartPath | null {
    return this.jobs.get(spawnId)?.start ?? null;
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

/**
 * The launcher's command line: the command and its arguments, or for a batch file cmd.exe with the
 * same cmd-quoted line the suspended start uses, passed on verbatim (Node itself refuses to spawn a
 * .bat or .cmd without a shell since CVE-2024-27980).
 */
function launcherArguments(command: string, args: readonly string[]): string[] {
  if (!BATCH_FILE.test(command)) return [LAUNCHER, command, ...args];
  return [LAUNCHER, '--verbatim', cmdExePath(), cmdArguments(command, args)];
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
