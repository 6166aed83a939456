// A tree's leader started with glibc's posix_spawn (vfork-style) instead of Node's spawn(), which
// forks the whole supervisor (decision 58). Still synchronous and on the main thread, so the spawn
// record is written in the same block in which the pid appears (decision 4). libuv does not know
// these children: this module reaps them itself, one pid at a time (never waitpid(-1), decision 3),
// on SIGCHLD and on a backstop poll, and only from the event loop, so a leader is never reaped
// before the code that spawned it has run to its end. Until then its pid, group and session are ours.
import { EventEmitter } from 'node:events';
import { closeSync } from 'node:fs';
import { Socket } from 'node:net';
import { constants } from 'node:os';
import * as libc from '../../../native-helpers/libc.js';
import { noteDirectChild } from '../child-ledger.js';
import { PipeReader } from '../pipe-reader.js';

const live = new Map<number, NativeChild>();
let listening = false;
let backstop: NodeJS.Timeout | undefined;
const signalName = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([k, v]) => [v, k as NodeJS.Signals]));

/**
 * Tries to reap the children that may have exited: with pidfds, one poll() tells which (a pidfd is
 * readable once its process exited), so a pass costs one call plus one waitpid per exit instead
 * of one waitpid per live child (decision 59); a child without a pidfd is always tried.
 */
function reapAll(): void {
  const kids = [...live.values()];
  const polled = kids.filter((c) => c.pidfd >= 0);
  const ready = libc.pollReadable(polled.map((c) => c.pidfd));
  const exited = new Set<NativeChild>();
  if (ready) polled.forEach((c, i) => ready[i] && exited.add(c));
  for (const c of kids) if (c.pidfd < 0 || ready === null || exited.has(c)) c.tryReap();
  if (live.size === 0 && backstop) {
    clearInterval(backstop);
    backstop = undefined;
  }
}

/** SIGCHLDs of one turn are reaped in one pass (one poll of the pidfds, then a waitpid per exit). */
let reapQueued = false;
function onSigchld(): void {
  if (reapQueued) return;
  reapQueued = true;
  setImmediate(() => {
    reapQueued = false;
    reapAll();
  });
}

/** Before the first spawn, so no child's exit comes before the listener. */
function listen(): void {
  if (listening) return;
  listening = true;
  process.on('SIGCHLD', onSigchld);
}

/** The members of ChildProcess a supervised tree uses, for a leader Node did not spawn. */
export class NativeChild extends EventEmitter {
  readonly stdin = null;
  readonly stdio: [null, Socket, Socket];
  readonly stdout: Socket;
  readonly stderr: Socket;
  /** The pipes read into the supervisor's buffers (NativeSpawnOptions.readers); their sockets are stdout/stderr. */
  readonly readers: { stdout?: PipeReader; stderr?: PipeReader };
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  /** Polled for the exit (-1 without pidfd); opened while the pid is unreaped, so it names this child. */
  readonly pidfd: number;
  private readonly unledger: () => void;

  constructor(
    readonly pid: number,
    pipes: { stdout: Socket | PipeReader; stderr: Socket | PipeReader },
  ) {
    super();
    const socket = (p: Socket | PipeReader): Socket => (p instanceof PipeReader ? p.socket : p);
    this.stdout = socket(pipes.stdout);
    this.stderr = socket(pipes.stderr);
    this.readers = {
      ...(pipes.stdout instanceof PipeReader ? { stdout: pipes.stdout } : {}),
      ...(pipes.stderr instanceof PipeReader ? { stderr: pipes.stderr } : {}),
    };
    this.stdio = [null, this.stdout, this.stderr];
    this.unledger = noteDirectChild(pid);
    const fd = libc.pidfdOpen(pid);
    this.pidfd = fd.value >= 0 ? fd.value : -1;
    live.set(pid, this);
    listen();
    // Coalesced SIGCHLDs are covered (each pass checks every child); the poll is a backstop only.
    // Kept referenced, as Node's child handle is: a running leader keeps the process alive.
    backstop ??= setInterval(reapAll, 1_000);
  }

  /** Signals the leader while it is unreaped (its pid cannot have been reused). */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exitCode !== null || this.signalCode !== null) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  tryReap(): void {
    if (!live.has(this.pid)) return;
    const r = libc.waitpidStatusNoHang(this.pid);
    if (!r.reaped && r.errno !== libc.ECHILD) return;
    live.delete(this.pid);
    this.unledger();
    if (this.pidfd >= 0) closeSync(this.pidfd);
    if (r.reaped && r.signal !== null) this.signalCode = signalName.get(r.signal) ?? 'SIGKILL';
    else this.exitCode = r.code ?? -1; // ECHILD: reaped elsewhere, status unknown (never expected)
    this.emit('exit', this.exitCode, this.signalCode);
  }
}

export interface NativeSpawnOptions {
  cwd: string;
  env: Readonly<Record<string, string>>;
  stdin?: 'ignore' | 'inherit';
  /**
   * The pipes the supervisor drains itself: read by a PipeReader into its own buffers, not started
   * until its reader is (decision 117). The others are Node's streams (a raw stdout, the doctor's probe).
   */
  readers?: ReadonlyArray<'stdout' | 'stderr'>;
}

/**
 * posix_spawnp `file` in a new session with stdin from /dev/null (or the supervisor's, `inherit`)
 * and stdout/stderr on pipes; the child's ends are closed here. Throws (nothing left open) when the
 * spawn fails.
 */
export function spawnNative(file: string, args: readonly string[], o: NativeSpawnOptions): NativeChild {
  const fds = openPipes();
  let pid: number;
  try {
    pid = libc.posixSpawnp({ file, argv: [file, ...args], env: o.env, cwd: o.cwd, stdout: fds[1], stderr: fds[3], stdin: o.stdin ?? 'ignore' });
  } catch (e) {
    for (const fd of fds) closeSync(fd);
    throw e;
  }
  return adoptSpawned(pid, fds, o.readers ?? []);
}

/**
 * spawnNative with posix_spawnp on a thread of its own (decision 59). Until the promise settles
 * the child is not ours to reap (it is in no NativeChild), so its pid, group and session stay
 * unreused however long the caller takes to record it.
 */
export async function spawnNativeAsync(file: string, args: readonly string[], o: NativeSpawnOptions): Promise<NativeChild> {
  const fds = openPipes();
  let pid: number;
  try {
    pid = await libc.posixSpawnpAsync({ file, argv: [file, ...args], env: o.env, cwd: o.cwd, stdout: fds[1], stderr: fds[3], stdin: o.stdin ?? 'ignore' });
  } catch (e) {
    for (const fd of fds) closeSync(fd);
    throw e;
  }
  return adoptSpawned(pid, fds, o.readers ?? []);
}

/** Capacity asked for the stdout pipe. */
const STDOUT_PIPE_BYTES = 1024 * 1024;

/** [stdout read, stdout write, stderr read, stderr write], all close-on-exec. */
function openPipes(): [number, number, number, number] {
  listen();
  const fds: number[] = [];
  const out = libc.pipeCloexec();
  fds.push(...out);
  // A fast producer fills a 64 KiB pipe between two of Node's reads and then sleeps; with 1 MiB
  // it keeps writing while the loop redacts (decision 77). Refused above /proc/sys/fs/pipe-max-size:
  // the pipe keeps its size.
  libc.setPipeSize(out[0], STDOUT_PIPE_BYTES);
  let err: [number, number];
  try {
    err = libc.pipeCloexec();
  } catch (e) {
    for (const fd of fds) closeSync(fd);
    throw e;
  }
  fds.push(...err);
  return fds as [number, number, number, number];
}

function adoptSpawned(pid: number, fds: readonly [number, number, number, number], readers: ReadonlyArray<'stdout' | 'stderr'>): NativeChild {
  closeSync(fds[1]);
  closeSync(fds[3]);
  const pipe = (name: 'stdout' | 'stderr', fd: number): Socket | PipeReader =>
    readers.includes(name) ? new PipeReader(fd) : new Socket({ fd, readable: true, writable: false });
  return new NativeChild(pid, { stdout: pipe('stdout', fds[0]), stderr: pipe('stderr', fds[2]) });
}
