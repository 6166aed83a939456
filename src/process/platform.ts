// The platform seam: one interface, one module per OS. The termination ladder and the
// SupervisedTree above it are platform-neutral; only these primitives differ.
import type { StartMarker } from './types.js';

/** What the platform needs to find and verify one tree. */
export interface TreeIdentity {
  spawnId: string;
  pid: number;
  pgid: number;
  sid: number;
  startMarker: StartMarker;
  cgroup: string | null;
  /**
   * Orphans re-parented to the supervisor (subreaper) that carry no marker: claimed by this tree
   * only when no other live tree could have produced them (started before them).
   */
  claimOrphan?: (startTime: bigint) => boolean;
}

export interface TreeMember {
  pid: number;
  startTime: string;
  /** Left the leader's session, or was already re-parented to the supervisor when first seen. */
  escapee: boolean;
  /** Runs in a session other than the leader's (called setsid). */
  leftSession: boolean;
}

/** What an operator is shown about one live member of a tree (`supervisor ps`, the web page). */
export interface ProcessUsage {
  /** Null where the platform's reader does not say (Windows: a job lists pids, not parents). */
  ppid: number | null;
  /** The kernel's name of the program, not its arguments (they may hold what a secret bound); '' when unknown. */
  name: string;
  /** One-letter state: R, S, D, T …; null where the OS has none to tell (Windows). */
  state: string | null;
  /** Wall-clock start, ms since the epoch: from the start marker the walk checked. */
  startedAt: number;
  /** CPU time used, user and system; null when the OS did not say (shown "n/a"). */
  cpuMs: number | null;
  /** Resident memory; null when the OS did not say (shown "n/a"). */
  rssKib: number | null;
}

export interface PreparedSpawn {
  command: string;
  args: string[];
  cgroup: string | null;
  /** Give the child Node's IPC channel as an extra stdio entry (the Windows job launcher waits on it). */
  ipc?: boolean;
  /**
   * Present when prepareSpawn was asked to leave OS resources for later (`offLoop`): makes them
   * (the cgroup directory) on the threadpool. Must settle before the leader is spawned.
   */
  ready?: () => Promise<void>;
}

export interface PlatformCapabilities {
  subreaper: boolean;
  pidfd: boolean;
  cgroup: boolean;
}

export interface PrepareOptions {
  offLoop?: boolean;
  plain?: boolean;
  /** The plain shape but with a stdin pipe the supervisor writes (MCP stdio servers, external runtimes). */
  stdinPipe?: boolean;
  /** A data channel as the child's fd 3 besides the stdio above (authored tool hosts); Windows starts it suspended (decision 116). */
  channel?: boolean;
}

/** What a tree uses of its leader's ChildProcess, for a leader Node did not spawn. */
export interface SpawnedLeader {
  readonly pid: number;
  /** Null unless started with `stdin: 'pipe'`. */
  readonly stdin: import('node:stream').Writable | null;
  /** A socket on Linux (the pipe itself); a stream fed by the named pipe's socket on Windows. */
  readonly stdout: import('node:stream').Readable;
  readonly stderr: import('node:stream').Readable;
  /** Pipes handed over as readers (LeaderSpawnOptions.readers): drain through these, not the stream, which yields nothing. */
  readonly readers?: { stdout?: import('./pipe-reader.js').PipeReader; stderr?: import('./pipe-reader.js').PipeReader };
  readonly stdio: readonly unknown[];
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  kill(signal?: NodeJS.Signals): boolean;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  on(event: 'exit' | 'error', fn: (...a: any[]) => void): unknown;
  once(event: 'exit', fn: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
}

/** How spawnLeader starts a leader: its directory, its whole environment, and its stdin. */
export interface LeaderSpawnOptions {
  cwd: string;
  env: Readonly<Record<string, string>>;
  /**
   * /dev/null (default), the supervisor's own stdin (`exec` at a terminal), or a pipe the
   * supervisor writes (only where prepareSpawn was told `stdinPipe`; a platform that cannot start
   * that shape natively returns null).
   */
  stdin?: 'ignore' | 'inherit' | 'pipe';
  /** A data channel as fd 3, the leader's `stdio[3]` (only where prepareSpawn was told `channel`; else null). */
  channel?: boolean;
  /** The tree being started (Windows: whose Job Object the leader enters before it runs). */
  spawnId?: string;
  /**
   * The pipes the supervisor drains itself, which a platform may hand over as PipeReaders
   * (SpawnedLeader.readers, decision 117) instead of streams. Default none.
   */
  readers?: ReadonlyArray<'stdout' | 'stderr'>;
}

/**
 * `leaderHeld` means the leader's pid is still unreaped by this process (Node has not seen its
 * exit), so the pid, and the process group and session named after it, cannot have been reused.
 */
export interface ProcessPlatform {
  readonly name: NodeJS.Platform;
  /** Idempotent: become a child subreaper where the OS has one; probe pidfd and cgroups. */
  init(): PlatformCapabilities;
  startMarker(pid: number): StartMarker | null;
  /** True only when `pid` is alive now and is the same process the marker was taken from. */
  isSameProcess(pid: number, marker: StartMarker): boolean;
  /**
   * Wraps the command so it enters its own control group (where one exists) before it runs.
   * `offLoop`: name the group now but make it in `ready()`, off the event loop (a mkdir in a
   * cgroup filesystem waits for the kernel's cgroup_mutex, which a starved leader entering its
   * own cgroup can hold for as long as it waits for a CPU).
   * `plain`: the tree has the shape spawnLeader can start (stdin ignored or inherited, two output
   * pipes, nothing else); Windows then starts the command itself, suspended, instead of a launcher.
   * `stdinPipe`: the same with a stdin pipe; Windows starts that shape suspended too (decision 107).
   */
  prepareSpawn(spawnId: string, command: string, args: readonly string[], o?: PrepareOptions): PreparedSpawn;
  /**
   * Called synchronously once spawn() returned a pid, before the child may run the command (the
   * Windows launcher waits for it). Throws to refuse the tree; the caller then kills the child.
   */
  adopt?(spawnId: string, child: import('node:child_process').ChildProcess): void;
  /**
   * Starts the (prepared) leader without forking the supervisor (Linux: posix_spawn, decision 58),
   * for a tree with stdin ignored or inherited, stdout and stderr piped and no other descriptor.
   * Synchronous; throws when the spawn failed. Absent or null: the caller uses Node's spawn().
   */
  spawnLeader?(command: string, args: readonly string[], o: LeaderSpawnOptions): SpawnedLeader | null;
  /**
   * spawnLeader with the spawn itself off the event loop (Linux: posix_spawn on a thread of its
   * own, decision 59). The child runs before the promise settles, so the caller records the tree
   * (a `starting` spawn record) before calling it. Null when not available here.
   */
  spawnLeaderAsync?(command: string, args: readonly string[], o: LeaderSpawnOptions): Promise<SpawnedLeader> | null;
  /**
   * What the operator is shown of process (pid, startTime): null when it is gone or is another
   * process now. Absent where the platform has no reader for it yet (the view shows pids only).
   */
  usage?(pid: number, startTime: string): ProcessUsage | null;
  /**
   * usage() of several processes with one read of the OS where a read costs a process (macOS's
   * `ps`): by pid, null for one gone or changed. The observer calls it once per tree when present.
   */
  usageOfMany?(members: readonly { pid: number; startTime: string }[]): Map<number, ProcessUsage | null>;
  /** Live (not zombie) members of the tree, seen now. `seen` remembers every member observed. */
  members(tree: TreeIdentity, leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[];
  /**
   * members() and signalTree() with the enumeration spread over several turns of the event loop
   * (the ladder uses them when present). `leaderHeld` is read when trust in the group is decided,
   * again when the walk ends, and right before signalling.
   */
  membersAsync?(tree: TreeIdentity, leaderHeld: () => boolean, seen: Map<number, TreeMember>): Promise<TreeMember[]>;
  signalTreeAsync?(tree: TreeIdentity, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: () => boolean, seen: Map<number, TreeMember>): Promise<TreeMember[]>;
  /** One signal round to the whole tree, every bare pid verified first. Returns the live members found. */
  signalTree(tree: TreeIdentity, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[];
  /**
   * Reaps, one pid at a time, zombies that this process adopted as subreaper and that were seen
   * as members of a tree. Never waits on `exclude` (live leaders Node itself will reap).
   * Returns how many are still waiting to be reaped. `tree` only names the tree in the debug log.
   */
  reapAdopted(seen: Map<number, TreeMember>, exclude: ReadonlySet<number>, tree?: Pick<TreeIdentity, 'spawnId' | 'pid'>): number;
  /** Frees per-tree OS resources (the cgroup directory), possibly off the loop: see settle(). */
  releaseTree(tree: TreeIdentity): void;
  /** Resolves once every release begun so far has finished (the supervisor's close awaits it). */
  settle?(): Promise<void>;
}

export class PlatformNotImplementedError extends Error {
  readonly code = 'PLATFORM_NOT_IMPLEMENTED';
  constructor(platform: string, what: string) {
    super(`${what} is not implemented on ${platform}: the supervisor's lifecycle layer supports Linux, macOS and Windows`);
    this.name = 'PlatformNotImplementedError';
  }
}
