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
