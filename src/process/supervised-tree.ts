// One supervised process tree: spawned into its own session (and cgroup), recorded before it can
// do harm, drained with bounds, and stopped as a whole by a single-flight ladder.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { SpawnRecordStore } from '../store/spawn-records.js';
import { isLiveRedaction, LiveStreamRedactor, RedactionPatterns, StreamRedactor, type ChunkRedactor, type LiveRedaction as LiveRedactionSource } from '../redaction/index.js';
import { artifactPath, createArtifactDir } from './artifacts.js';
import { SyncCleanupStack } from './cleanup-stack.js';
import { commandName, debugOn, debugTree } from './debug-log.js';
import { allowlistedEnv } from './child-env.js';
import { SpawnError } from './errors.js';
import { StreamCapture } from './output-capture.js';
import type { PipeReader } from './pipe-reader.js';
import type { PreparedSpawn, ProcessPlatform, SpawnedLeader, TreeIdentity, TreeMember } from './platform.js';
import { resolveCommand } from './resolve-command.js';
import { terminateTree, killTreeSync } from './terminate.js';
import { settlesWithin } from './wait.js';
import type {
  ArtifactDescriptor,
  KillReport,
  OutcomeReason,
  SpawnTreeOptions,
  StartMarker,
  StreamSummary,
  SupervisedTree,
  TreeOutcome,
} from './types.js';

export const SPAWN_ID_ENV = 'SUPERVISOR_SPAWN_ID';
/** Names the fd of the dedicated data pipe in a child spawned with `channel: true`. */
export const CHANNEL_FD_ENV = 'SUPERVISOR_CHANNEL_FD';
const DEFAULT_GRACE_MS = 2_000;
const DEFAULT_DRAIN_AFTER_EXIT_MS = 2_000;
/** After the ladder every holder of the pipes is dead; anything still open is out of reach. */
const DRAIN_AFTER_KILL_MS = 500;
/** See drain(): how long a plain tree's slow output waits to be read, and what counts as slow. */
const GATHER_MS = 10;
const GATHER_BELOW_BYTES = 4096;

export interface TreeContext {
  platform: ProcessPlatform;
  records: SpawnRecordStore;
  stateDir: string;
  ownerPid: number;
  ownerStartMarker: string;
  /** The supervisor's principal, recorded on a tree that names none itself. */
  principal: string | null;
  leaders(): ReadonlySet<number>;
  /** True when no live tree other than `self` started before `startTime`. */
  soleOwner(self: LiveTree, startTime: bigint): boolean;
  settled(tree: LiveTree): void;
  pollMs: number;
}

export function newSpawnId(): string {
  return `sp_${randomBytes(12).toString('hex')}`;
}

export function serializeMarker(m: StartMarker): string {
  return `${m.platform}:${m.bootId}:${m.startTime}`;
}

type StopReason = 'cancelled' | 'timeout' | 'failed';
/** How the leader was started, for the debug log: posix_spawn on a thread, on the main thread, CreateProcessW suspended (Windows), or Node's spawn(). */
type SpawnPath = 'posix_spawn-thread' | 'posix_spawn-main' | 'win32-suspended' | 'node';

export class LiveTree implements SupervisedTree {
  readonly spawnId: string;
  // Set once the leader exists: in the constructor, or after the spawn of start() returned.
  pid!: number;
  pgid!: number;
  sid!: number;
  startMarker!: StartMarker;
  readonly cgroup: string | null;
  startedAt!: number;
  done!: Promise<TreeOutcome>;
  stdin!: NodeJS.WritableStream | null;
  channel!: Duplex | null;
  stdout!: NodeJS.ReadableStream | null;

  private child!: ChildProcess | SpawnedLeader;
  private identity!: TreeIdentity;
  private readonly seen = new Map<number, TreeMember>();
  private readonly tally = new Map<string, TreeMember>();
  private readonly captures: { stdout: StreamCapture; stderr: StreamCapture };
  private readonly artifacts: ArtifactDescriptor | null;
  private stopReason: StopReason | null = null;
  private stopSignal!: () => void;
  private readonly stopRequested = new Promise<void>((r) => (this.stopSignal = r));
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private exited!: Promise<void>;
  private pipesClosed!: Promise<void>;
  private readonly prepared: PreparedSpawn;
  private readonly cwd: string;
  private readonly env: Record<string, string>;
  /** The leader's stdin when it is one posix_spawn can give (the plain shape), else null. */
  private readonly plainStdin: 'ignore' | 'inherit' | null;
  private readonly channelFd: number;
  /** start(): the leader is spawned off the event loop after a `starting` record (decision 59). */
  private readonly recordedStarting: boolean;
  /** Stdin ignored or inherited, stdout and stderr piped, nothing else: nothing talks to the supervisor over stdio. */
  private readonly plain: boolean;
  private spawnFailure: Error | null = null;
  private spawnPath: SpawnPath = 'node';
  private finished = false;
  private timer: NodeJS.Timeout | undefined;
  /** What opening the tree holds until its leader is launched: every refused open unwinds it. */
  private readonly opening = new SyncCleanupStack();

  /**
   * Spawns the leader, synchronously, or for start() (`deferred`) only records the tree as
   * `starting` and leaves the spawn to it.
   */
  constructor(
    private readonly ctx: TreeContext,
    private readonly opts: SpawnTreeOptions,
    deferred = false,
  ) {
    const cwd = opts.cwd ?? process.cwd();
    const spawnId = newSpawnId();
    const env: Record<string, string> = { ...(opts.env ?? allowlistedEnv()), [SPAWN_ID_ENV]: spawnId };
    const resolved = resolveCommand(opts.command, env.PATH, cwd);
    if (resolved === null) {
      throw new SpawnError('COMMAND_NOT_FOUND', `command not found: ${opts.command} (looked on the child's PATH${env.PATH ? `: ${env.PATH}` : ', which is empty'})`);
    }

    // Artifacts first: if they cannot be written, nothing is spawned.
    ({ artifacts: this.artifacts, captures: this.captures } = this.openCaptures(spawnId));

    // Without forking the supervisor where the platform can (posix_spawn on Linux, decision 58):
    // only for the plain shape (stdin ignored or inherited, two pipes, nothing else). Inherited is
    // `exec` at a terminal, whose fork of the whole supervisor cost it ~20% of its start (decision
    // 67). start() spawns it off the loop, and then the cgroup is made off the loop too.
    // A stdin pipe and nothing else (MCP stdio servers, external runtimes) is offered too: Windows
    // starts that shape suspended (decision 107); Linux gives it to Node's spawn().
    const stdin = opts.stdin ?? 'ignore';
    const plainShape = (stdin === 'ignore' || stdin === 'inherit') && !opts.channel;
    const stdinPipeShape = stdin === 'pipe' && !opts.channel;
    const offLoop = deferred && plainShape && ctx.platform.spawnLeaderAsync !== undefined;
    let prepared: PreparedSpawn;
    try {
      prepared = ctx.platform.prepareSpawn(spawnId, resolved, opts.args ?? [], { offLoop, plain: plainShape, stdinPipe: stdinPipeShape, channel: opts.channel === true });
    } catch (cause) {
      // Nothing was started (an argument Windows cannot carry, a cgroup that could not be made): the captures go.
      this.abandon();
      throw new SpawnError('SPAWN_FAILED', `${opts.command} was not started: ${(cause as Error).message}`, { cause });
    }
    this.prepared = prepared;
    this.spawnId = spawnId;
    this.cgroup = prepared.cgroup;
    this.opening.defer(() => ctx.platform.releaseTree({ spawnId, cgroup: prepared.cgroup } as TreeIdentity));
    this.cwd = cwd;
    this.env = env;
    const stdio: ('ignore' | 'inherit' | 'pipe' | 'ipc')[] = [opts.stdin ?? 'ignore', 'pipe', 'pipe'];
    if (prepared.ipc) stdio.push('ipc');
    // The data pipe takes the next free index (3, or 4 after the Windows launcher's IPC slot).
    const channelFd = opts.channel ? stdio.length : -1;
    if (opts.channel) {
      stdio.push('pipe');
      env[CHANNEL_FD_ENV] = String(channelFd);
    }
    this.channelFd = channelFd;
    const plain = plainShape && !prepared.ipc;
    this.plain = plain;
    this.plainStdin = plain ? (stdin as 'ignore' | 'inherit') : null;
    // A channel tree is offered too (Windows starts it suspended, decision 116; Linux declines).
    const leaderStdin = prepared.ipc ? null : plain ? this.plainStdin : stdinPipeShape || opts.channel ? stdin : null;
    this.recordedStarting = offLoop && plain;
    if (this.recordedStarting) {
      // On record before any process of the tree exists: a supervisor killed while the spawn runs
      // on its thread leaves a row that reconcile resolves by cgroup and marker.
      try {
        ctx.records.insertStarting({
          spawnId,
          platform: process.platform,
          bootId: ctx.ownerStartMarker.split(':')[1] ?? '',
          startMarker: ctx.ownerStartMarker,
          cgroup: prepared.cgroup,
          command: opts.command,
          ownerPid: ctx.ownerPid,
          ownerStartMarker: ctx.ownerStartMarker,
          principal: opts.principal ?? ctx.principal,
          startedAt: Date.now(),
        });
      } catch (cause) {
        this.abandon();
        throw new SpawnError('SPAWN_FAILED', `the spawn record could not be written, so nothing was started: ${(cause as Error).message}`, { cause });
      }
      return;
    }
    let child: ChildProcess | SpawnedLeader;
    try {
      const native = (leaderStdin !== null ? ctx.platform.spawnLeader?.(prepared.command, prepared.args, { cwd, env, stdin: leaderStdin, channel: opts.channel === true, spawnId, readers: this.drainedPipes() }) : null) ?? null;
      if (native) this.spawnPath = nativePath(ctx.platform);
      child =
        native ??
        spawn(prepared.command, prepared.args, {
          cwd,
          env,
          detached: true, // a new session and process group: the tree's own
          stdio,
          windowsHide: true,
        });
    } catch (cause) {
      if (debugOn()) debugTree('spawn-failed', spawnId, undefined, { cmd: commandName(opts.command), error: (cause as NodeJS.ErrnoException).code ?? 'spawn' });
      this.abandon();
      throw new SpawnError('SPAWN_FAILED', `spawn ${opts.command} failed: ${(cause as Error).message}`, { cause });
    }
    this.launch(child);
  }

  /**
   * The redactors, the artifact directory and the two stream captures, in that order; their end
   * is the first thing `opening` holds.
   */
  private openCaptures(spawnId: string): { artifacts: ArtifactDescriptor | null; captures: { stdout: StreamCapture; stderr: StreamCapture } } {
    const opts = this.opts;
    // Compiled once for both streams and shared with every tree given the same values (tens of ms
    // for many secrets); a set that cannot be redacted safely throws here, before anything is spawned.
    // A live set (the session's secrets) is followed chunk by chunk: a secret resolved while the
    // tree runs is redacted from its next bytes on.
    const source = opts.redact;
    const fixed = isLiveRedaction(source) ? null : RedactionPatterns.shared(source ?? []);
    const newRedactor = (): ChunkRedactor => (fixed ? new StreamRedactor(fixed) : new LiveStreamRedactor(source as LiveRedactionSource));
    newRedactor(); // compiles (and may refuse) the current set before anything is spawned
    const artifacts = opts.artifacts === false ? null : createArtifactsOrThrow(this.ctx.stateDir, spawnId);
    const capture = (name: 'stdout' | 'stderr', on?: (c: Buffer) => void) =>
      new StreamCapture({
        name,
        artifactPath: artifacts ? artifactPath(artifacts, name) : null,
        redactor: newRedactor(),
        tailChars: opts.tailChars ?? 12_000,
        ...(on ? { onRedacted: on } : {}),
        // A persistence failure ends the tree before the failure is published.
        onFailure: () => this.requestStop('failed'),
        // The artifact backlog fell: let the pipe flow again.
        onDrain: () => this.readers[name]?.drained(),
      });
    const captures = { stdout: capture('stdout', opts.onStdout), stderr: capture('stderr', opts.onStderr) };
    this.opening.defer(() => {
      void captures.stdout.end();
      void captures.stderr.end();
    });
    const openFailure = captures.stdout.failure ?? captures.stderr.failure;
    if (openFailure) {
      this.abandon();
      throw new SpawnError('SPAWN_FAILED', `artifact could not be opened (${openFailure.code}): ${openFailure.message}`);
    }
    return { artifacts, captures };
  }

  /**
   * A tree whose leader is spawned off the event loop (decision 59): the `starting` record is
   * written first, then posix_spawn runs on a thread of its own; the pid, start marker and the
   * running record follow in the block in which the spawn's result is seen. Until then the child
   * is in no reaping list, so its pid cannot be reused. Falls back to the constructor's spawn.
   */
  static async start(ctx: TreeContext, opts: SpawnTreeOptions, starting?: Set<LiveTree>): Promise<LiveTree> {
    const tree = new LiveTree(ctx, opts, true);
    if (!tree.recordedStarting) return tree;
    let child: ChildProcess | SpawnedLeader;
    starting?.add(tree);
    try {
      await tree.prepared.ready?.();
      const p = ctx.platform.spawnLeaderAsync!(tree.prepared.command, tree.prepared.args, { cwd: tree.cwd, env: tree.env, stdin: tree.plainStdin!, spawnId: tree.spawnId, readers: tree.drainedPipes() });
      if (p) {
        child = await p;
        tree.spawnPath = 'posix_spawn-thread';
      } else {
        const native = ctx.platform.spawnLeader?.(tree.prepared.command, tree.prepared.args, { cwd: tree.cwd, env: tree.env, stdin: tree.plainStdin!, spawnId: tree.spawnId, readers: tree.drainedPipes() }) ?? null;
        if (native) tree.spawnPath = nativePath(ctx.platform);
        child = native ?? tree.nodeSpawn();
      }
    } catch (cause) {
      if (debugOn()) debugTree('spawn-failed', tree.spawnId, undefined, { cmd: commandName(opts.command), error: (cause as NodeJS.ErrnoException).code ?? 'spawn' });
      tree.abandon();
      tree.finishQuietly('failed', `spawn failed: ${(cause as Error).message}`);
      throw new SpawnError('SPAWN_FAILED', `spawn ${opts.command} failed: ${(cause as Error).message}`, { cause });
    } finally {
      starting?.delete(tree);
    }
    if (tree.killedWhileStarting) {
      // killStartingSync ran while the spawn was on its thread. The leader is unreaped (nothing
      // reaps it before its NativeChild does), so this KILL cannot reach a stranger.
      if (debugOn()) debugTree('signal', tree.spawnId, child.pid, { sig: 'KILL', via: 'leader', why: 'killed-while-starting' });
      child.kill('SIGKILL');
      closePipes(child);
      tree.abandon();
      throw new SpawnError('SPAWN_FAILED', 'the supervisor was shut down while the tree was starting; it was killed');
    }
    tree.launch(child);
    return tree;
  }

  private killedWhileStarting = false;

  /**
   * For a forced shutdown while this tree's spawn is still on its thread (no pid known): KILL by
   * cgroup and marker, as reconcile does for a dead owner's starting row, and end the record.
   */
  killStartingSync(): KillReport {
    const [platform, bootId, startTime] = this.ctx.ownerStartMarker.split(':');
    const identity: TreeIdentity = {
      spawnId: this.spawnId,
      pid: -1,
      pgid: -1,
      sid: -1,
      startMarker: { platform: platform as NodeJS.Platform, bootId: bootId ?? '', startTime: startTime ?? '0' },
      cgroup: this.cgroup,
    };
    this.killedWhileStarting = true;
    // Nothing is reaped here: the leader's pid is not known yet, and reaping it (a direct child)
    // before its NativeChild exists would let that pid be reused under it. Every member seen is
    // left to its own reaper (the leader's NativeChild; orphans, once this process exits, to init).
    const report = killTreeSync({ platform: this.ctx.platform, tree: identity, leaderHeld: () => false, leaders: () => new Set(this.seen.keys()), seen: this.seen, tally: this.tally });
    if (debugOn()) debugTree('force-kill', this.spawnId, undefined, { starting: true, descendants: report.descendants, survivors: report.survivors });
    // If the write fails the record stays `starting`: the next reconcile resolves it by cgroup and marker.
    recordForcedKill(this.ctx.records, this.spawnId, `while the tree was starting: ${report.descendants} process(es), ${report.survivors} survivor(s)`);
    return report;
  }

  /** Ends a `starting` record whose spawn did not happen. */
  private finishQuietly(status: 'failed', detail: string): void {
    try {
      this.ctx.records.finish(this.spawnId, { status, exitCode: null, signal: null, endedAt: Date.now(), detail: detail.slice(0, 500) });
    } catch {
      // Left `starting`: the next reconcile finds nothing of it and marks it.
    }
  }

  /** start()'s fallback for its plain tree when no native spawn is available. */
  private nodeSpawn(): ChildProcess {
    return spawn(this.prepared.command, this.prepared.args, { cwd: this.cwd, env: this.env, detached: true, stdio: [this.plainStdin!, 'pipe', 'pipe'], windowsHide: true });
  }

  /** The pipes this tree's captures drain (a raw stdout is the caller's to read). */
  private drainedPipes(): Array<'stdout' | 'stderr'> {
    return this.opts.stdout === 'raw' ? ['stderr'] : ['stdout', 'stderr'];
  }

  /** The tree will not run: what opening it holds is let go, newest first (the cgroup, then the artifact files). */
  private abandon(): void {
    this.opening.unwind();
  }

  /** The leader exists: identity, record, streams, deadlines. Synchronous, in the block the pid appeared in. */
  private launch(child: ChildProcess | SpawnedLeader): void {
    const { ctx, opts, spawnId, channelFd } = this;
    const prepared = this.prepared;
    child.on('error', (err) => {
      this.spawnFailure ??= err;
    });
    if (child.pid === undefined) {
      this.abandon();
      if (this.recordedStarting) this.finishQuietly('failed', 'no pid was assigned');
      throw new SpawnError('SPAWN_FAILED', `spawn ${opts.command} failed: no pid was assigned`);
    }
    if (ctx.platform.adopt) {
      try {
        ctx.platform.adopt(spawnId, child as ChildProcess);
      } catch (cause) {
        // The command has not run yet (the launcher waits for adoption): end it and refuse.
        if (debugOn()) debugTree('signal', spawnId, child.pid, { sig: 'KILL', via: 'leader', why: 'adopt-failed' });
        child.kill('SIGKILL');
        closePipes(child);
        this.abandon();
        throw new SpawnError('SPAWN_FAILED', `the tree could not be put under supervision: ${(cause as Error).message}`, { cause });
      }
    }
    this.child = child;
    this.pid = child.pid;
    this.pgid = child.pid;
    this.sid = child.pid;
    this.startedAt = Date.now();
    // The child cannot be reaped before this line runs (Node reaps on the event loop), so its
    // /proc entry is there even if it already exited.
    this.startMarker = ctx.platform.startMarker(this.pid) ?? { platform: process.platform, bootId: '', startTime: '0' };
    this.identity = {
      spawnId,
      pid: this.pid,
      pgid: this.pgid,
      sid: this.sid,
      startMarker: this.startMarker,
      cgroup: this.cgroup,
      claimOrphan: (t) => ctx.soleOwner(this, t),
    };
    try {
      if (this.recordedStarting) {
        ctx.records.started({ spawnId, pid: this.pid, pgid: this.pgid, sid: this.sid, bootId: this.startMarker.bootId, startMarker: serializeMarker(this.startMarker), startedAt: this.startedAt });
      } else ctx.records.insert({
        spawnId,
        pid: this.pid,
        pgid: this.pgid,
        sid: this.sid,
        platform: process.platform,
        bootId: this.startMarker.bootId,
        startMarker: serializeMarker(this.startMarker),
        cgroup: this.cgroup,
        command: opts.command,
        ownerPid: ctx.ownerPid,
        ownerStartMarker: ctx.ownerStartMarker,
        principal: opts.principal ?? ctx.principal,
        startedAt: this.startedAt,
      });
    } catch (cause) {
      // An unrecorded tree could outlive a crash unseen: it does not get to run.
      // This tree is not among the supervisor's live ones yet: its leader is named here, or the
      // adopted-orphan reaping would take its exit status from Node, whose handle would then keep
      // the event loop alive forever.
      const leaders = (): ReadonlySet<number> => new Set([...ctx.leaders(), this.pid]);
      if (debugOn()) debugTree('spawn-refused', spawnId, this.pid, { why: 'record-write-failed', path: this.spawnPath, cmd: commandName(opts.command) });
      killTreeSync({ platform: ctx.platform, tree: this.identity, leaderHeld: () => this.leaderHeld, leaders, seen: this.seen, tally: this.tally });
      closePipes(child);
      this.abandon();
      throw new SpawnError('SPAWN_FAILED', `the spawn record could not be written, so the process was killed: ${(cause as Error).message}`, { cause });
    }
    if (debugOn()) {
      debugTree('spawn', spawnId, this.pid, { pgid: this.pgid, sid: this.sid, cgroup: this.cgroup ?? undefined, path: this.spawnPath, cmd: commandName(opts.command) });
    }
    this.stdin = child.stdin ?? null;
    this.channel = channelFd >= 0 ? ((child.stdio[channelFd] as Duplex | null | undefined) ?? null) : null;
    const rawStdout = opts.stdout === 'raw';
    this.stdout = rawStdout ? child.stdout : null;
    const readers = 'readers' in child ? child.readers : undefined;

    this.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        if (debugOn()) debugTree('reap', spawnId, this.pid, { who: 'leader', code, signal });
        this.exitInfo = { code, signal };
        resolve();
      });
    });
    this.pipesClosed = Promise.all([
      // A raw stdout belongs to the caller; its close still bounds the drain after exit.
      rawStdout ? closed(child.stdout!) : this.drain(child.stdout!, this.captures.stdout, 'stdout', readers?.stdout),
      this.drain(child.stderr!, this.captures.stderr, 'stderr', readers?.stderr),
    ]).then(() => undefined);

    if (opts.timeoutMs !== undefined) {
      this.timer = setTimeout(() => void this.requestStop('timeout'), opts.timeoutMs);
    }
    if (opts.signal) {
      if (opts.signal.aborted) this.requestStop('cancelled');
      else opts.signal.addEventListener('abort', () => this.requestStop('cancelled'), { once: true });
    }
    this.done = this.run();
  }

  /** True while Node has not reaped the leader: its pid, group and session ids are still ours. */
  get leaderHeld(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  get isFinished(): boolean {
    return this.finished;
  }

  stop(reason: 'cancelled' | 'timeout' = 'cancelled'): Promise<TreeOutcome> {
    this.requestStop(reason);
    return this.done;
  }

  /** Synchronous KILL of the whole tree, for the process 'exit' handler and a forced shutdown. */
  killSync(): KillReport {
    this.requestStop('cancelled');
    const report = killTreeSync({
      platform: this.ctx.platform,
      tree: this.identity,
      leaderHeld: () => this.leaderHeld,
      leaders: () => this.ctx.leaders(),
      seen: this.seen,
      tally: this.tally,
    });
    // The process is about to exit: the record must not wait for a run() that will never finish.
    // If the write fails the record stays `running`: the next start reconciles it.
    if (debugOn()) debugTree('force-kill', this.spawnId, this.pid, { descendants: report.descendants, survivors: report.survivors });
    if (!this.finished) recordForcedKill(this.ctx.records, this.spawnId, `${report.descendants} descendant(s), ${report.survivors} survivor(s)`);
    return report;
  }

  private requestStop(reason: StopReason): void {
    if (this.finished || this.stopReason !== null) return;
    this.stopReason = reason;
    // The gentlest step, and on Windows the only graceful one: end of input.
    try {
      this.child?.stdin?.end();
    } catch {
      // Already closed.
    }
    this.stopSignal();
  }

  /**
   * Feeds one pipe to its capture until the pipe closes: through `reader` when the platform handed
   * the pipe over as one (libuv reads into reused buffers, lent to the capture until written,
   * decision 117), else through Node's stream.
   */
  private drain(stream: NodeJS.ReadableStream & { destroy(): void }, capture: StreamCapture, name: 'stdout' | 'stderr', reader?: PipeReader): Promise<void> {
    // A plain tree's slow output (a read smaller than GATHER_BELOW_BYTES: the pipe was nearly
    // empty) is taken again only after GATHER_MS, and then all at once (the pipe, or read() of the
    // stream in paused mode, joins what arrived meanwhile): with many trees printing at once,
    // taking each line as it landed cost one wake-up, one redaction pass and one capture step per
    // line (decision 66). The pipe holds 64 KiB (stdout 1 MiB), so the child waits only if it fills
    // that within the pause; fast output is taken without pauses. Trees that talk over stdio (MCP
    // servers, hosts) are not plain and are never paused.
    const gather = this.plain && this.opts.gatherOutput !== false;
    let backpressured = false;
    let gathering: NodeJS.Timeout | undefined;
    /** One read to the capture; false: take no more until resume(). */
    const accept = (chunk: Buffer, release?: () => void): boolean => {
      // Back-pressure from the artifact writer: the child blocks on a full pipe, memory stays bounded.
      if (!capture.write(chunk, release)) {
        backpressured = true;
        return false;
      }
      if (gather && chunk.length < GATHER_BELOW_BYTES) {
        gathering = setTimeout(() => {
          gathering = undefined;
          if (!backpressured) resume();
        }, GATHER_MS);
        return false;
      }
      return true;
    };
    const take = (): void => {
      for (let chunk = stream.read() as Buffer | null; chunk !== null; chunk = stream.read() as Buffer | null) {
        if (!accept(chunk)) return;
      }
    };
    const resume = reader ? () => reader.resume() : take;
    this.readers[name] = {
      drained: () => {
        backpressured = false;
        if (gathering === undefined) resume();
      },
    };
    return new Promise<void>((resolve) => {
      if (reader) reader.start(accept);
      else {
        stream.on('readable', () => {
          if (gathering === undefined && !backpressured) take();
        });
      }
      // 'end' comes only once everything was taken; 'close' may come first on an error.
      stream.once('close', () => {
        clearTimeout(gathering);
        resolve();
      });
      stream.once('error', () => {
        clearTimeout(gathering);
        resolve();
      });
    });
  }

  /** Per stream: what the artifact writer calls once its backlog fell (see drain). */
  private readonly readers: Partial<Record<'stdout' | 'stderr', { drained(): void }>> = {};

  private async run(): Promise<TreeOutcome> {
    await Promise.race([this.exited, this.stopRequested]);
    // Only a stop that came before the leader's own exit names the outcome.
    const stoppedFirst = this.exitInfo === null ? this.stopReason : null;
    if (this.exitInfo !== null) {
      // Grandchildren may still hold the pipes: drain, but only for so long.
      await settlesWithin(Promise.race([this.pipesClosed, this.stopRequested]), this.opts.drainAfterExitMs ?? DEFAULT_DRAIN_AFTER_EXIT_MS);
    }
    const graceMs = this.opts.graceMs ?? DEFAULT_GRACE_MS;
    if (debugOn()) debugTree('stop', this.spawnId, this.pid, { reason: stoppedFirst ?? 'exited', grace: graceMs });
    const killed = await terminateTree({
      platform: this.ctx.platform,
      tree: this.identity,
      graceMs,
      leaderHeld: () => this.leaderHeld,
      leaders: () => this.ctx.leaders(),
      seen: this.seen,
      tally: this.tally,
      pollMs: this.ctx.pollMs,
    });
    await settlesWithin(this.exited, 5_000);
    await settlesWithin(this.pipesClosed, DRAIN_AFTER_KILL_MS);
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
    this.channel?.destroy();
    if (this.timer) clearTimeout(this.timer);

    const [stdout, stderr]: [StreamSummary, StreamSummary] = await Promise.all([this.captures.stdout.end(), this.captures.stderr.end()]);
    const failure = this.captures.stdout.failure ?? this.captures.stderr.failure;
    let reason: OutcomeReason = stoppedFirst === null ? 'exited' : stoppedFirst;
    let error: TreeOutcome['error'];
    if (failure) {
      reason = 'failed';
      error = { code: failure.code, message: failure.message };
    } else if (this.spawnFailure) {
      reason = 'failed';
      error = { code: 'SPAWN_FAILED', message: this.spawnFailure.message };
    } else if (stoppedFirst === 'failed') {
      reason = 'failed';
    }
    if (killed.survivors > 0 && !error) {
      error = { code: 'SURVIVORS', message: `${killed.survivors} process(es) of the tree were still alive after KILL` };
    }
    const endedAt = Date.now();
    const outcome: TreeOutcome = {
      spawnId: this.spawnId,
      pid: this.pid,
      reason,
      exitCode: this.exitInfo?.code ?? null,
      signal: this.exitInfo?.signal ?? null,
      durationMs: endedAt - this.startedAt,
      stdout,
      stderr,
      artifacts: this.artifacts,
      killed,
      ...(error ? { error } : {}),
    };
    try {
      this.ctx.platform.releaseTree(this.identity);
    } catch {
      // A cgroup directory left behind is harmless and is retried by the next reconcile.
    }
    try {
      this.ctx.records.finish(this.spawnId, {
        status: reason,
        exitCode: outcome.exitCode,
        signal: outcome.signal,
        endedAt,
        detail: error ? `${error.code}: ${error.message}`.slice(0, 500) : null,
      });
    } catch (cause) {
      // The tree is gone either way; a record left `running` is marked interrupted by the next start.
      outcome.error ??= { code: 'STORE_WRITE_FAILED', message: `the spawn record could not be finalized: ${(cause as Error).message}` };
    }
    if (debugOn()) {
      debugTree('end', this.spawnId, this.pid, {
        reason,
        code: outcome.exitCode,
        signal: outcome.signal,
        descendants: killed.descendants,
        escapees: killed.escapees,
        survivors: killed.survivors,
        ms: outcome.durationMs,
        error: outcome.error?.code,
      });
    }
    this.finished = true;
    this.ctx.settled(this);
    return outcome;
  }
}

/** The synchronous native start's name in the debug log. */
function nativePath(platform: ProcessPlatform): SpawnPath {
  return platform.name === 'win32' ? 'win32-suspended' : 'posix_spawn-main';
}

/**
 * The pipes of a leader that will not be launched. A PipeReader reads only once started, so it
 * would never see the end of a killed child's pipe and close by itself.
 */
function closePipes(child: ChildProcess | SpawnedLeader): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}

function closed(stream: NodeJS.ReadableStream): Promise<void> {
  return new Promise<void>((resolve) => {
    stream.once('close', () => resolve());
    stream.once('error', () => resolve());
  });
}

function createArtifactsOrThrow(stateDir: string, spawnId: string): ArtifactDescriptor {
  try {
    return createArtifactDir(stateDir, spawnId);
  } catch (cause) {
    throw new SpawnError('SPAWN_FAILED', `artifact directory could not be created under ${stateDir}: ${(cause as Error).message}`, { cause });
  }
}

/**
 * Ends a record with the forced kill of the supervisor's shutdown, best effort: the process is
 * about to exit, and a record that cannot be written is left for reconciliation.
 */
function recordForcedKill(records: { finish(spawnId: string, end: { status: 'cancelled'; exitCode: null; signal: 'SIGKILL'; endedAt: number; detail: string }): unknown }, spawnId: string, what: string): void {
  try {
    records.finish(spawnId, { status: 'cancelled', exitCode: null, signal: 'SIGKILL', endedAt: Date.now(), detail: `forced kill by the supervisor's shutdown: ${what}` });
  } catch {
    // left for reconciliation (see the callers)
  }
}
