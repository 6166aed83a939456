// kernel32 bindings for Windows Job Objects, through ffi-rs (main thread only).
// Handles are 64-bit values passed as BigInt; structs are byte buffers with documented offsets.
import { NativeHelperError, openLibrary, type FfiModule } from './ffi.js';

export { NativeHelperError };

/** JOBOBJECTINFOCLASS values. */
export const JobObjectBasicProcessIdList = 3;
export const JobObjectExtendedLimitInformation = 9;
/** JOBOBJECT_BASIC_LIMIT_INFORMATION.LimitFlags */
export const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
/** OpenProcess access rights the supervisor needs: assign to a job, terminate, read times, wait. */
export const PROCESS_TERMINATE = 0x0001;
export const PROCESS_SET_QUOTA = 0x0100;
export const PROCESS_QUERY_LIMITED_INFORMATION = 0x1000;
export const SYNCHRONIZE = 0x0010_0000;
/** With PROCESS_QUERY_LIMITED_INFORMATION: what K32GetProcessMemoryInfo needs (an observer asks for nothing more). */
export const PROCESS_VM_READ = 0x0010;
export const WAIT_OBJECT_0 = 0;
export const WAIT_TIMEOUT = 0x102;
export const STILL_ACTIVE = 259;

export interface Win32Result<T> {
  value: T;
  /** GetLastError() captured by ffi-rs right after the call; meaningful only when the call failed. */
  lastError: number;
}

// ffi-rs DataType numbers (kept literal so this file loads no types at import time).
const I32 = 1;
const U8Array = 10;
const BigIntT = 16;
const U32 = 20;

export function k32(): FfiModule {
  if (process.platform !== 'win32') {
    throw new NativeHelperError(`native-helpers/kernel32: Windows only, not ${process.platform}`);
  }
  return openLibrary('native-helpers/kernel32', 'kernel32', 'kernel32.dll');
}

/** One kernel32 call with GetLastError captured by ffi-rs (kernel32-spawn.ts shares it). */
export function call<T>(funcName: string, retType: number, paramsType: number[], paramsValue: unknown[]): Win32Result<T> {
  const r = k32().load({
    library: 'kernel32',
    funcName,
    retType: retType as never,
    paramsType: paramsType as never,
    paramsValue,
    errno: true,
  }) as unknown as { value: T; errnoCode: number };
  return { value: r.value, lastError: r.errnoCode };
}

function ok(r: Win32Result<number>, what: string): void {
  if (r.value === 0) throw new NativeHelperError(`${what} failed (GetLastError ${r.lastError})`);
}

/** CreateJobObjectW(NULL, NULL): an anonymous job whose handle is not inheritable. */
export function createJobObject(): bigint {
  const r = call<bigint>('CreateJobObjectW', BigIntT, [BigIntT, BigIntT], [0n, 0n]);
  if (r.value === 0n) throw new NativeHelperError(`CreateJobObjectW failed (GetLastError ${r.lastError})`);
  return r.value;
}

/**
 * Sets JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and nothing else: in particular no BREAKAWAY_OK and no
 * SILENT_BREAKAWAY_OK, so every descendant stays in the job.
 * JOBOBJECT_EXTENDED_LIMIT_INFORMATION is 144 bytes on x64; BasicLimitInformation.LimitFlags is
 * the DWORD at offset 16 (after two LARGE_INTEGER time limits).
 */
export function setKillOnJobClose(job: bigint): void {
  const info = Buffer.alloc(144);
  info.writeUInt32LE(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, 16);
  ok(call<number>('SetInformationJobObject', I32, [BigIntT, I32, U8Array, U32], [job, JobObjectExtendedLimitInformation, info, info.length]), 'SetInformationJobObject');
}

export function openProcess(pid: number, access = PROCESS_SET_QUOTA | PROCESS_TERMINATE | PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE): bigint | null {
  const r = call<bigint>('OpenProcess', BigIntT, [U32, I32, U32], [access, 0, pid]);
  return r.value === 0n ? null : r.value;
}

export function assignProcessToJobObject(job: bigint, process: bigint): void {
  ok(call<number>('AssignProcessToJobObject', I32, [BigIntT, BigIntT], [job, process]), 'AssignProcessToJobObject');
}

export function terminateJobObject(job: bigint, exitCode: number): boolean {
  return call<number>('TerminateJobObject', I32, [BigIntT, U32], [job, exitCode]).value !== 0;
}

export function terminateProcess(h: bigint, exitCode: number): boolean {
  return call<number>('TerminateProcess', I32, [BigIntT, U32], [h, exitCode]).value !== 0;
}

export function closeHandle(h: bigint): boolean {
  return call<number>('CloseHandle', I32, [BigIntT], [h]).value !== 0;
}

/**
 * Pids in the job (JOBOBJECT_BASIC_PROCESS_ID_LIST: DWORD assigned, DWORD in list, then
 * ULONG_PTR ids from offset 8). Grows the buffer until every pid fits.
 */
export function jobProcessIds(job: bigint): number[] {
  let capacity = 64;
  for (;;) {
    const buf = Buffer.alloc(8 + capacity * 8);
    const r = call<number>('QueryInformationJobObject', I32, [BigIntT, I32, U8Array, U32, BigIntT], [job, JobObjectBasicProcessIdList, buf, buf.length, 0n]);
    const assigned = buf.readUInt32LE(0);
    const listed = buf.readUInt32LE(4);
    // ERROR_MORE_DATA (234): the list was cut; ask again with room for all.
    if (r.value === 0 && r.lastError !== 234) throw new NativeHelperError(`QueryInformationJobObject failed (GetLastError ${r.lastError})`);
    if (listed < assigned && capacity < 65_536) {
      capacity = Math.max(capacity * 2, assigned + 16);
      continue;
    }
    const out: number[] = [];
    for (let i = 0; i < listed; i++) out.push(Number(buf.readBigUInt64LE(8 + i * 8)));
    return out;
  }
}

/** GetProcessTimes: the creation time (FILETIME, 100 ns ticks since 1601) and the CPU time used, kernel plus user, in 100 ns units. */
export function processTimes(h: bigint): { creation: bigint; cpu100ns: bigint } | null {
  const creation = Buffer.alloc(8);
  const exit = Buffer.alloc(8);
  const kernel = Buffer.alloc(8);
  const user = Buffer.alloc(8);
  const r = call<number>('GetProcessTimes', I32, [BigIntT, U8Array, U8Array, U8Array, U8Array], [h, creation, exit, kernel, user]);
  return r.value === 0 ? null : { creation: creation.readBigUInt64LE(0), cpu100ns: kernel.readBigUInt64LE(0) + user.readBigUInt64LE(0) };
}

/** Creation time as a FILETIME (100 ns ticks since 1601), the process's start marker. */
export function processCreationTime(h: bigint): bigint | null {
  return processTimes(h)?.creation ?? null;
}

/**
 * K32GetProcessMemoryInfo: the working set in bytes. PROCESS_MEMORY_COUNTERS on x64 is 72 bytes:
 * cb (DWORD) at 0, PageFaultCount at 4, PeakWorkingSetSize (SIZE_T) at 8, WorkingSetSize at 16.
 */
export function workingSetBytes(h: bigint): bigint | null {
  const counters = Buffer.alloc(72);
  counters.writeUInt32LE(72, 0);
  const r = call<number>('K32GetProcessMemoryInfo', I32, [BigIntT, U8Array, U32], [h, counters, counters.length]);
  return r.value === 0 ? null : counters.readBigUInt64LE(16);
}

/** QueryFullProcessImageNameW (flags 0: the Win32 path form): the program's path, no arguments. */
export function processImageName(h: bigint): string | null {
  const chars = 1024;
  const name = Buffer.alloc(chars * 2);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(chars, 0);
  const r = call<number>('QueryFullProcessImageNameW', I32, [BigIntT, U32, U8Array, U8Array], [h, 0, name, size]);
  return r.value === 0 ? null : name.toString('utf16le', 0, Math.min(size.readUInt32LE(0), chars) * 2);
}

/** GetExitCodeProcess: STILL_ACTIVE (259) while running. */
export function exitCodeOf(h: bigint): number | null {
  const code = Buffer.alloc(4);
  const r = call<number>('GetExitCodeProcess', I32, [BigIntT, U8Array], [h, code]);
  return r.value === 0 ? null : code.readUInt32LE(0);
}

export function waitForSingleObject(h: bigint, ms: number): number {
  return call<number>('WaitForSingleObject', U32, [BigIntT, U32], [h, ms]).value;
}

/** True when kernel32 can be loaded here (Windows with ffi-rs's win32 binary). */
export function kernel32Available(): boolean {
  try {
    k32();
    return true;
  } catch {
    return false;
  }
}
