// ffi-rs bindings to the few libc calls the Linux process layer needs.
// Load on the main thread only: ffi-rs crashes the process when a worker that loaded it exits.
import { NativeHelperError, openLibrary, type FfiModule } from './ffi.js';

export interface SyscallResult {
  value: number;
  errno: number;
}

export { NativeHelperError };

export const PR_SET_CHILD_SUBREAPER = 36;
export const PR_GET_CHILD_SUBREAPER = 37;
export const SYS_PIDFD_OPEN = 434;
export const SYS_PIDFD_SEND_SIGNAL = 424;
export const WNOHANG = 1;
export const ESRCH = 3;
export const ECHILD = 10;
export const EINTR = 4;

interface LoadedLibc {
  ffi: FfiModule;
}

function libc(): LoadedLibc {
  if (process.platform !== 'linux' && process.platform !== 'darwin') {
    throw new NativeHelperError(`native-helpers/libc: libc bindings are for Linux and macOS, not ${process.platform}`);
  }
  // On macOS libc lives in libSystem; an empty path means the process's own symbols on Linux.
  const path = process.platform === 'darwin' ? '/usr/lib/libSystem.B.dylib' : '';
  return { ffi: openLibrary('native-helpers/libc', 'libc', path) };
}

function call(funcName: string, paramsType: number[], paramsValue: unknown[], retType?: number): SyscallResult {
  const { ffi } = libc();
  const r = ffi.load({
    library: 'libc',
    funcName,
    retType: (retType ?? ffi.DataType.I64) as never,
    paramsType: paramsType as never,
    paramsValue,
    errno: true,
  }) as unknown as { value: number; errnoCode: number };
  return { value: Number(r.value), errno: r.value < 0 ? r.errnoCode : 0 };
}

/** True when ffi-rs and libc can be loaded here. */
export function libcAvailable(): boolean {
  try {
    libc();
    return true;
  } catch {
    return false;
  }
}

const I64 = 8;
const I32 = 1;
const U8Array = 10;
const String_ = 0;

export function prctl(option: number, arg2: number): SyscallResult {
  return call('prctl', [I32, I64, I64, I64, I64], [option, arg2, 0, 0, 0], I32);
}

/** PR_GET_CHILD_SUBREAPER: reads the flag into an int. */
export function getChildSubreaper(): boolean {
  const buf = Buffer.alloc(4);
  const r = call('prctl', [I32, U8Array, I64, I64, I64], [PR_GET_CHILD_SUBREAPER, buf, 0, 0, 0], I32);
  if (r.value < 0) return false;
  return buf.readInt32LE(0) !== 0;
}

export function setChildSubreaper(): SyscallResult {
  return prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/** pidfd_open(pid, 0): a descriptor that keeps naming this one process, even after pid reuse. */
export function pidfdOpen(pid: number): SyscallResult {
  return call('syscall', [I64, I64, I64], [SYS_PIDFD_OPEN, pid, 0]);
}

/** pidfd_send_signal(fd, sig, NULL, 0): ESRCH once the process is gone, never a stranger. */
export function pidfdSendSignal(fd: number, signal: number): SyscallResult {
  return call('syscall', [I64, I64, I64, I64, I64], [SYS_PIDFD_SEND_SIGNAL, fd, signal, 0, 0]);
}

export function kill(pid: number, signal: number): SyscallResult {
  return call('kill', [I32, I32], [pid, signal], I32);
}

/** waitpid(pid, NULL, WNOHANG) for one pid: never -1, which would steal libuv's children. */
export function waitpidNoHang(pid: number): SyscallResult {
  if (!(pid > 0)) throw new RangeError(`waitpidNoHang: refusing pid ${pid}; only one positive pid at a time`);
  return call('waitpid', [I32, I64, I32], [pid, 0, WNOHANG], I32);
}

export function getpgid(pid: number): SyscallResult {
  return call('getpgid', [I32], [pid], I32);
}

export function getsid(pid: number): SyscallResult {
  return call('getsid', [I32], [pid], I32);
}

// posix_spawn (vfork-style: the parent's page tables are not copied) for the Linux spawn path.
// glibc's structures are treated as opaque buffers larger than their size (80, 336, 128 bytes).
const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const O_CLOEXEC = 0o2000000;
const O_RDONLY = 0;

/** pipe2(fds, O_CLOEXEC): [read end, write end]. */
export function pipeCloexec(): [number, number] {
  const buf = Buffer.alloc(8);
  const r = call('pipe2', [U8Array, I32], [buf, O_CLOEXEC], I32);
  if (r.value !== 0) throw new NativeHelperError(`pipe2 failed (errno ${r.errno})`);
  return [buf.readInt32LE(0), buf.readInt32LE(4)];
}

const F_SETPIPE_SZ = 1031;

/**
 * fcntl(fd, F_SETPIPE_SZ, bytes) (Linux): the pipe's new capacity in bytes, or -1 when the kernel
 * refused (above /proc/sys/fs/pipe-max-size for an unprivileged user, or not a pipe).
 */
export function setPipeSize(fd: number, bytes: number): number {
  const r = call('fcntl', [I32, I32, I32], [fd, F_SETPIPE_SZ, bytes], I32);
  return r.value < 0 ? -1 : r.value;
}

/** NULL-terminated char*[] in malloc'd memory (ffi-rs's StringArray is not NULL-terminated); free with freePtr. */
export function cStringArray(list: readonly string[]): number {
  const { ffi } = libc();
  const table = 8 * (list.length + 1);
  const bytes = list.map((x) => Buffer.from(`${x}\0`, 'utf8'));
  const total = table + bytes.reduce((a, b) => a + b.length, 0);
  const base = Number(ffi.load({ library: 'libc', funcName: 'malloc', retType: ffi.DataType.I64, paramsType: [ffi.DataType.I64], paramsValue: [total] } as never));
  if (!(base > 0)) throw new NativeHelperError('malloc failed');
  const buf = Buffer.alloc(total);
  let off = table;
  bytes.forEach((b, i) => {
    buf.writeBigUInt64LE(BigInt(base + off), 8 * i);
    b.copy(buf, off);
    off += b.length;
  });
  ffi.load({ library: 'libc', funcName: 'memcpy', retType: ffi.DataType.I64, paramsType: [ffi.DataType.I64, ffi.DataType.U8Array, ffi.DataType.I64], paramsValue: [base, buf, total] } as never);
  return base;
}

function freePtr(p: number): void {
  const { ffi } = libc();
  ffi.load({ library: 'libc', funcName: 'free', retType: ffi.DataType.Void, paramsType: [ffi.DataType.I64], paramsValue: [p] } as never);
}

function check(what: string, r: SyscallResult): void {
  // posix_spawn* return the error number itself.
  if (r.value !== 0) throw new NativeHelperError(`${what} failed (error ${r.value})`);
}

export interface PosixSpawnRequest {
  file: string;
  argv: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** The child's stdout and stderr: write ends, dup'd onto 1 and 2. */
  stdout: number;
  stderr: number;
  /** The child's stdin: /dev/null (default), or the supervisor's own fd 0 (`exec` at a terminal). */
  stdin?: 'ignore' | 'inherit';
}

/**
 * posix_spawnp in a new session, with every signal at its default and none blocked (Node ignores
 * SIGPIPE and blocks some; a child must not inherit that), stdin from /dev/null or inherited. Returns the pid,
 * or throws with the error posix_spawn returned (an exec failure included: glibc reports it).
 */
export function posixSpawnp(req: PosixSpawnRequest): number {
  const s = spawnSetup(req);
  try {
    return s.finish(call('posix_spawnp', [U8Array, String_, U8Array, U8Array, I64, I64], [s.pid, req.file, s.fa, s.attr, s.argv, s.envp], I32).value);
  } finally {
    s.release();
  }
}

/**
 * posixSpawnp with the call itself on a thread of its own (ffi-rs runInNewThread): the loop only
 * builds the arguments (~0.2 ms) instead of waiting for the child's exec (decision 59). The
 * buffers stay referenced until the thread is done; the pid comes back in `pid`.
 */
export async function posixSpawnpAsync(req: PosixSpawnRequest): Promise<number> {
  const s = spawnSetup(req);
  try {
    const { ffi } = libc();
    const rc = await (ffi.load({
      library: 'libc',
      funcName: 'posix_spawnp',
      retType: ffi.DataType.I32,
      paramsType: [U8Array, String_, U8Array, U8Array, I64, I64],
      paramsValue: [s.pid, req.file, s.fa, s.attr, s.argv, s.envp],
      runInNewThread: true,
    } as never) as unknown as Promise<number>);
    return s.finish(Number(rc));
  } finally {
    s.release();
  }
}

interface SpawnSetup {
  fa: Buffer;
  attr: Buffer;
  pid: Buffer;
  argv: number;
  envp: number;
  /** The pid, or throws with posix_spawnp's error number. */
  finish(rc: number): number;
  release(): void;
}

function spawnSetup(req: PosixSpawnRequest): SpawnSetup {
  const fa = Buffer.alloc(256);
  const attr = Buffer.alloc(512);
  const all = Buffer.alloc(256);
  const none = Buffer.alloc(256);
  const pid = Buffer.alloc(4);
  check('posix_spawn_file_actions_init', call('posix_spawn_file_actions_init', [U8Array], [fa], I32));
  let attrInit = false;
  let argv = 0;
  let envp = 0;
  const release = (): void => {
    if (attrInit) call('posix_spawnattr_destroy', [U8Array], [attr], I32);
    call('posix_spawn_file_actions_destroy', [U8Array], [fa], I32);
    if (argv) freePtr(argv);
    if (envp) freePtr(envp);
  };
  try {
    check('posix_spawnattr_init', call('posix_spawnattr_init', [U8Array], [attr], I32));
    attrInit = true;
    if (req.stdin === 'inherit') {
      // dup2 of fd 0 onto itself clears its close-on-exec flag in the child (glibc >= 2.29), as
      // Node's spawn() does for an inherited descriptor.
      check('adddup2', call('posix_spawn_file_actions_adddup2', [U8Array, I32, I32], [fa, 0, 0], I32));
    } else {
      check('addopen', call('posix_spawn_file_actions_addopen', [U8Array, I32, String_, I32, I32], [fa, 0, '/dev/null', O_RDONLY, 0], I32));
    }
    check('adddup2', call('posix_spawn_file_actions_adddup2', [U8Array, I32, I32], [fa, req.stdout, 1], I32));
    check('adddup2', call('posix_spawn_file_actions_adddup2', [U8Array, I32, I32], [fa, req.stderr, 2], I32));
    check('addchdir_np', call('posix_spawn_file_actions_addchdir_np', [U8Array, String_], [fa, req.cwd], I32));
    // Nothing else the supervisor holds reaches the tree: descriptors it inherited without
    // close-on-exec from whatever started it (a harness's pipe, a terminal's extra fd) included.
    check('addclosefrom_np', call('posix_spawn_file_actions_addclosefrom_np', [U8Array, I32], [fa, 3], I32));
    // Every signal, glibc's two internal ones (32, 33) included: sigfillset leaves them out, and
    // the spawn child would then leave them ignored across the exec.
    all.fill(0xff, 0, 128);
    call('sigemptyset', [U8Array], [none], I32);
    check('setsigdefault', call('posix_spawnattr_setsigdefault', [U8Array, U8Array], [attr, all], I32));
    check('setsigmask', call('posix_spawnattr_setsigmask', [U8Array, U8Array], [attr, none], I32));
    check('setflags', call('posix_spawnattr_setflags', [U8Array, I32], [attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK], I32));
    argv = cStringArray(req.argv);
    envp = cStringArray(Object.entries(req.env).map(([k, v]) => `${k}=${v}`));
  } catch (e) {
    release();
    throw e;
  }
  return {
    fa,
    attr,
    pid,
    argv,
    envp,
    finish(rc: number): number {
      if (rc !== 0) {
        const e = new NativeHelperError(`posix_spawnp ${req.file} failed (error ${rc})`) as NativeHelperError & { errno: number };
        e.errno = rc;
        throw e;
      }
      // glibc passes file actions by pointer: a pointer-sized slot holds its allocations, so the buffer
      // is the same memory ffi-rs was given (what getChildSubreaper relies on as well).
      return pid.readInt32LE(0);
    },
    release,
  };
}

const POLLIN = 0x1;

/**
 * poll(fds, n, 0) for readability, in one call: which of `fds` are readable now (a pidfd is once
 * its process has exited). Null when poll itself failed.
 */
export function pollReadable(fds: readonly number[]): boolean[] | null {
  if (fds.length === 0) return [];
  // struct pollfd { int fd; short events; short revents; }
  const buf = Buffer.alloc(8 * fds.length);
  fds.forEach((fd, i) => {
    buf.writeInt32LE(fd, 8 * i);
    buf.writeInt16LE(POLLIN, 8 * i + 4);
  });
  const r = call('poll', [U8Array, I64, I32], [buf, fds.length, 0], I32);
  if (r.value < 0) return null;
  // Any revents (POLLIN, POLLHUP, POLLERR, POLLNVAL) means: look at this one.
  return fds.map((_, i) => buf.readInt16LE(8 * i + 6) !== 0);
}

/** waitpid(pid, &status, WNOHANG) for one pid: null while it runs; its exit code or signal number once reaped. */
export function waitpidStatusNoHang(pid: number): { reaped: boolean; errno: number; code: number | null; signal: number | null } {
  if (!(pid > 0)) throw new RangeError(`waitpidStatusNoHang: refusing pid ${pid}; only one positive pid at a time`);
  const st = Buffer.alloc(4);
  const r = call('waitpid', [I32, U8Array, I32], [pid, st, WNOHANG], I32);
  if (r.value !== pid) return { reaped: false, errno: r.errno, code: null, signal: null };
  const s = st.readInt32LE(0);
  const sig = s & 0x7f;
  return sig === 0 ? { reaped: true, errno: 0, code: (s >> 8) & 0xff, signal: null } : { reaped: true, errno: 0, code: null, signal: sig };
}
