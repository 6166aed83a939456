// macOS bindings through ffi-rs to libSystem: libproc (proc_listallpids, proc_pidinfo) and the BSD
// sysctl interface (sysctl for KERN_PROCARGS2, sysctlbyname for kern.bootsessionuuid, kern.boottime
// and kern.argmax), plus getsid. Raw calls only: every buffer comes back unparsed, the parsers live
// in src/process/darwin/proc-info.ts where they are unit-tested on any OS.
//
// Load on the main thread only: ffi-rs crashes the process when a worker that loaded it exits.
// Off macOS every function throws NativeHelperError; the Linux code path never calls them.
//
// Calling conventions (LP64 on both x86_64 and arm64 macOS): pointers and size_t are passed as
// 64-bit integers (I64 0 is NULL); an output buffer is a U8Array, which ffi-rs hands to C as a
// pointer into the Node Buffer itself, so writes by C are visible afterwards; a size_t in/out
// argument is an 8-byte U8Array holding a little-endian uint64 (both macOS ABIs are little-endian).
import { isMainThread } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { NativeHelperError } from './libc.js';

/** libSystem re-exports libproc (libsystem_kernel) and sysctl (libsystem_c); dlopen finds it in the shared cache. */
export const LIBSYSTEM_PATH = '/usr/lib/libSystem.B.dylib';
const LIB = 'libSystem';

/** <sys/proc_info.h>: flavor of proc_pidinfo that fills a struct proc_bsdinfo. */
export const PROC_PIDTBSDINFO = 3;
/** sizeof(struct proc_bsdinfo); the layout is documented in src/process/darwin/proc-info.ts. */
export const PROC_BSDINFO_SIZE = 136;
/** <sys/sysctl.h> */
export const CTL_KERN = 1;
export const KERN_PROCARGS2 = 49;
/** <sys/errno.h> (BSD numbering, same values as Linux for these). */
export const EPERM = 1;
export const ESRCH = 3;
export const ENOMEM = 12;
export const EINVAL = 22;

type FfiModule = typeof import('ffi-rs');

let loaded: FfiModule | undefined;
let loadError: Error | undefined;

function libSystem(): FfiModule {
  if (loaded) return loaded;
  if (loadError) throw loadError;
  if (!isMainThread) {
    loadError = new NativeHelperError('native-helpers/libproc: ffi-rs may only be loaded on the main thread');
    throw loadError;
  }
  if (process.platform !== 'darwin') {
    loadError = new NativeHelperError(
      `native-helpers/libproc: libproc and sysctl(KERN_PROCARGS2) exist only on macOS; this is ${process.platform}, whose process layer must not call them`,
    );
    throw loadError;
  }
  try {
    const require = createRequire(import.meta.url);
    const ffi = require('ffi-rs') as FfiModule;
    ffi.open({ library: LIB, path: LIBSYSTEM_PATH });
    loaded = ffi;
    return loaded;
  } catch (cause) {
    loadError = new NativeHelperError(`native-helpers/libproc: could not load ffi-rs or ${LIBSYSTEM_PATH} (is the optional darwin binary of ffi-rs installed?)`, { cause });
    throw loadError;
  }
}

const I32 = 1;
const I32Array = 3;
const I64 = 8;
const U8Array = 10;
const CString = 0;

interface RawResult {
  value: number;
  /** errno as left by the call; meaningful only when the call reports failure. */
  errno: number;
}

function call(funcName: string, paramsType: number[], paramsValue: unknown[]): RawResult {
  const ffi = libSystem();
  const r = ffi.load({
    library: LIB,
    funcName,
    retType: I32 as never,
    paramsType: paramsType as never,
    paramsValue,
    errno: true,
  }) as unknown as { value: number; errnoCode: number };
  return { value: Number(r.value), errno: r.errnoCode };
}

/** True when ffi-rs and libSystem can be loaded here (macOS, main thread, darwin binary present). */
export function libprocAvailable(): boolean {
  try {
    libSystem();
    return true;
  } catch {
    return false;
  }
}

/**
 * proc_listallpids(buffer, bytes): every pid the kernel lists now (zombies may be among them).
 * Called once with NULL for an estimate, then with room to spare; a full buffer means the table
 * grew in between, so the call is repeated with twice the room.
 */
export function procListAllPids(): number[] {
  // libproc reports failure as 0 (proc_listpids turns the syscall's -1 into 0), and a process
  // table holding not even this process is impossible: 0 is an error, never "nothing left".
  const estimate = call('proc_listallpids', [I64, I32], [0, 0]);
  if (estimate.value <= 0) {
    throw new NativeHelperError(`native-helpers/libproc: proc_listallpids(NULL, 0) failed (errno ${estimate.errno})`);
  }
  let slots = Math.max(256, estimate.value + 64);
  for (let attempt = 0; attempt < 5; attempt++) {
    const buf = Buffer.alloc(slots * 4);
    const r = call('proc_listallpids', [U8Array, I32], [buf, buf.length]);
    if (r.value <= 0) {
      throw new NativeHelperError(`native-helpers/libproc: proc_listallpids failed (errno ${r.errno})`);
    }
    if (r.value < slots) {
      const out: number[] = [];
      for (let i = 0; i < r.value; i++) {
        const pid = buf.readInt32LE(i * 4);
        if (pid > 0) out.push(pid);
      }
      return out;
    }
    slots *= 2;
  }
  throw new NativeHelperError('native-helpers/libproc: proc_listallpids kept filling the buffer; the process table grows faster than it can be read');
}

/**
 * proc_pidinfo(pid, PROC_PIDTBSDINFO, arg, buf, 136): the raw struct proc_bsdinfo, or null with
 * errno (ESRCH: no such process; EPERM: another user's process and we are not root).
 * `withZombies` passes arg = 1, which makes the kernel also look up zombies (pbi_status SZOMB);
 * with arg = 0 a zombie reads as ESRCH.
 */
export function procPidBsdInfo(pid: number, withZombies = true): { info: Buffer | null; errno: number } {
  const buf = Buffer.alloc(PROC_BSDINFO_SIZE);
  const r = call('proc_pidinfo', [I32, I32, I64, U8Array, I32], [pid, PROC_PIDTBSDINFO, withZombies ? 1 : 0, buf, PROC_BSDINFO_SIZE]);
  // proc_pidinfo returns the bytes written, 0 (libproc) or -1 on failure.
  if (r.value !== PROC_BSDINFO_SIZE) return { info: null, errno: r.errno || ESRCH };
  return { info: buf, errno: 0 };
}

/** getsid(pid): the session id, or -1 with errno (ESRCH). XNU does not restrict it to the caller's session. */
export function getsid(pid: number): { value: number; errno: number } {
  const r = call('getsid', [I32], [pid]);
  return { value: r.value, errno: r.value < 0 ? r.errno : 0 };
}

/**
 * sysctl(mib, miblen, out, &len, NULL, 0). Returns the bytes the kernel wrote (len on return), or
 * -1 with errno. `out` is written in place.
 */
export function sysctlMib(mib: readonly number[], out: Buffer): { length: number; errno: number } {
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(out.length));
  const r = call('sysctl', [I32Array, I32, U8Array, U8Array, I64, I64], [[...mib], mib.length, out, len, 0, 0]);
  if (r.value !== 0) return { length: -1, errno: r.errno };
  return { length: Number(len.readBigUInt64LE()), errno: 0 };
}

/** sysctlbyname(name, out, &len, NULL, 0): bytes written, or -1 with errno (ENOENT: no such name). */
export function sysctlByName(name: string, out: Buffer): { length: number; errno: number } {
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(out.length));
  const r = call('sysctlbyname', [CString, U8Array, U8Array, I64, I64], [name, out, len, 0, 0]);
  if (r.value !== 0) return { length: -1, errno: r.errno };
  return { length: Number(len.readBigUInt64LE()), errno: 0 };
}

let argMax: number | undefined;

/** kern.argmax (ARG_MAX: 1 MiB on current macOS, 256 KiB on older releases). */
export function kernArgMax(): number {
  if (argMax !== undefined) return argMax;
  const buf = Buffer.alloc(8);
  const r = sysctlByName('kern.argmax', buf);
  argMax = r.length === 4 || r.length === 8 ? buf.readInt32LE(0) : 256 * 1024;
  if (!(argMax > 4096)) argMax = 256 * 1024;
  return argMax;
}

let procArgsBuffer: Buffer | undefined;

/**
 * sysctl({CTL_KERN, KERN_PROCARGS2, pid}): int argc, then the exec path, NUL padding, argv and
 * (unless the kernel withholds it) the environment as NUL-terminated strings. The kernel rejects a
 * buffer larger than ARG_MAX + sizeof(int) and, given one smaller than the data, returns its tail
 * instead of its head; ARG_MAX + sizeof(int) bytes always hold all of it. Returns a copy of the
 * bytes written, or null with errno (EINVAL: no such process, or not readable by us; EPERM).
 *
 * Who may read: root, or the same user; processes under the hardened runtime or with the
 * no-read-procargs entitlement (with SIP on) come back without their environment.
 */
export function sysctlProcArgs2(pid: number): { bytes: Buffer | null; errno: number } {
  const size = kernArgMax() + 4;
  // One buffer for every call: the calls are synchronous and main-thread only.
  if (!procArgsBuffer || procArgsBuffer.length !== size) procArgsBuffer = Buffer.alloc(size);
  const r = sysctlMib([CTL_KERN, KERN_PROCARGS2, pid], procArgsBuffer);
  if (r.length < 0) return { bytes: null, errno: r.errno };
  return { bytes: Buffer.from(procArgsBuffer.subarray(0, Math.min(r.length, size))), errno: 0 };
}

/** kern.bootsessionuuid: a UUID string that changes at every boot. Null where the name does not exist. */
export function bootSessionUuid(): string | null {
  const buf = Buffer.alloc(128);
  const r = sysctlByName('kern.bootsessionuuid', buf);
  if (r.length <= 0) return null;
  const end = buf.indexOf(0);
  const s = buf.toString('latin1', 0, end >= 0 && end < r.length ? end : r.length).trim();
  return s.length > 0 ? s : null;
}

/** kern.boottime: the raw struct timeval (16 bytes on LP64), or null. */
export function bootTimeRaw(): Buffer | null {
  const buf = Buffer.alloc(16);
  const r = sysctlByName('kern.boottime', buf);
  return r.length >= 12 ? buf.subarray(0, r.length) : null;
}
