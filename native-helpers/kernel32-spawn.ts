// kernel32 bindings for starting a tree's leader suspended, inside its Job Object (issue 22):
// CreateProcessW with STARTUPINFOEXW and an explicit inherited-handle list, the pipe ends the child
// gets, and the wait for its exit. Main thread only, like every ffi-rs binding here (decision 9);
// only the exit wait runs on a thread of ffi-rs's own (runInNewThread), where nothing is loaded.
// Struct offsets are for x64 and named where they are written.
import { call, closeHandle, k32, NativeHelperError } from './kernel32.js';

// ffi-rs DataType numbers (as in kernel32.ts).
const I32 = 1;
const U8Array = 10;
const BigIntT = 16;
const U32 = 20;
const Void = 7;

/** CreateProcessW dwCreationFlags. */
export const CREATE_SUSPENDED = 0x0000_0004;
export const CREATE_NEW_PROCESS_GROUP = 0x0000_0200;
export const CREATE_UNICODE_ENVIRONMENT = 0x0000_0400;
export const EXTENDED_STARTUPINFO_PRESENT = 0x0008_0000;
/** A console of its own without a window (what Node's windowsHide gave the launcher's command). */
export const CREATE_NO_WINDOW = 0x0800_0000;
const PROC_THREAD_ATTRIBUTE_HANDLE_LIST = 0x2_0002n;
const STARTF_USESTDHANDLES = 0x100;
const HEAP_ZERO_MEMORY = 0x8;
export const GENERIC_READ = 0x8000_0000;
export const GENERIC_WRITE = 0x4000_0000;
const FILE_SHARE_READ = 0x1;
const FILE_SHARE_WRITE = 0x2;
const OPEN_EXISTING = 3;
/** CreateFileW: asynchronous I/O on the handle (what libuv expects of a pipe it opens as an fd). */
export const FILE_FLAG_OVERLAPPED = 0x4000_0000;
const ERROR_IO_PENDING = 997;
/** GetFileType results. */
const FILE_TYPE_CHAR = 2;
const FILE_TYPE_PIPE = 3;
/** The C runtime's per-fd flags in an inherited fd table (libuv's process-stdio.c, the CRT's ioinfo). */
const FOPEN = 0x01;
const FPIPE = 0x08;
const FDEV = 0x40;
const DUPLICATE_SAME_ACCESS = 0x2;
const INFINITE = 0xffff_ffff;
export const STD_INPUT_HANDLE = -10;
/** The pseudo handle GetCurrentProcess() returns. */
const CURRENT_PROCESS = -1n;

/** What CreateProcessW's last error means, for the messages users see. */
const WIN32_ERRORS: Record<number, string> = {
  2: 'the file was not found',
  3: 'the path was not found',
  5: 'access is denied',
  87: 'a parameter was refused',
  193: 'it is not a valid Windows program',
  267: 'the directory name is invalid',
};

export function win32ErrorText(code: number): string {
  return `${WIN32_ERRORS[code] ?? 'Windows error'} (GetLastError ${code})`;
}

function isInvalid(h: bigint): boolean {
  return h === 0n || h === -1n || h === 0xffff_ffff_ffff_ffffn;
}

/** SECURITY_ATTRIBUTES { nLength @0, lpSecurityDescriptor @8 (NULL: the default), bInheritHandle @16 }. */
function inheritableAttributes(): Buffer {
  const sa = Buffer.alloc(24);
  sa.writeUInt32LE(24, 0);
  sa.writeUInt32LE(1, 16);
  return sa;
}

/**
 * CreateFileW(path, access, share read+write, inheritable, OPEN_EXISTING, flags): the child's end
 * of a pipe or of NUL. Inheritable, so it may be named in a handle list; closed by the caller.
 */
export function openInheritable(path: string, access: number, flags = 0): bigint {
  const r = call<bigint>('CreateFileW', BigIntT, [U8Array, U32, U32, U8Array, U32, U32, BigIntT], [
    Buffer.from(`${path}\0`, 'utf16le'),
    access,
    FILE_SHARE_READ | FILE_SHARE_WRITE,
    inheritableAttributes(),
    OPEN_EXISTING,
    flags,
    0n,
  ]);
  if (isInvalid(r.value)) throw new NativeHelperError(`CreateFileW ${path} failed: ${win32ErrorText(r.lastError)}`);
  return r.value;
}

/**
 * WriteFile, all of `data` (a pipe's buffer takes a few bytes without a reader). The data and the
 * OVERLAPPED are native memory, so the same call serves an overlapped handle (the channel's end),
 * whose write may complete later: then GetOverlappedResult waits for it.
 */
export function writeAll(h: bigint, data: Buffer): void {
  const bytes = new HeapBlock(data.length);
  const overlapped = new HeapBlock(32); // OVERLAPPED, zeroed: offset 0, no event
  try {
    bytes.write(data);
    const written = Buffer.alloc(4);
    const r = call<number>('WriteFile', I32, [BigIntT, BigIntT, U32, U8Array, BigIntT], [h, bytes.address, data.length, written, overlapped.address]);
    if (r.value === 0 && r.lastError !== ERROR_IO_PENDING) throw new NativeHelperError(`WriteFile failed: ${win32ErrorText(r.lastError)}`);
    if (r.value === 0) {
      const done = call<number>('GetOverlappedResult', I32, [BigIntT, BigIntT, U8Array, I32], [h, overlapped.address, written, 1]);
      if (done.value === 0) throw new NativeHelperError(`WriteFile (overlapped) failed: ${win32ErrorText(done.lastError)}`);
    }
    if (written.readUInt32LE(0) !== data.length) throw new NativeHelperError(`WriteFile wrote ${written.readUInt32LE(0)} of ${data.length} bytes`);
  } finally {
    bytes.free();
    overlapped.free();
  }
}

/** GetStdHandle: null when this process has none (no console, or a detached start). */
export function stdHandle(which: number): bigint | null {
  const r = call<bigint>('GetStdHandle', BigIntT, [I32], [which]);
  return isInvalid(r.value) ? null : r.value;
}

/**
 * An inheritable duplicate of one of this process's handles: with the same access (the
 * supervisor's stdin for `inherit`), or with only `access` (the read-only end of a child's stdin pipe).
 */
export function duplicateInheritable(h: bigint, access?: number): bigint {
  const out = Buffer.alloc(8);
  const [desired, options] = access === undefined ? [0, DUPLICATE_SAME_ACCESS] : [access, 0];
  const r = call<number>('DuplicateHandle', I32, [BigIntT, BigIntT, BigIntT, U8Array, U32, I32, U32], [CURRENT_PROCESS, h, CURRENT_PROCESS, out, desired, 1, options]);
  if (r.value === 0) throw new NativeHelperError(`DuplicateHandle failed: ${win32ErrorText(r.lastError)}`);
  return out.readBigUInt64LE(0);
}

/**
 * Resolves with WaitForSingleObject's result once the process (or any waitable handle) is
 * signalled. The wait blocks a thread of ffi-rs's own, never the event loop; the handle must stay
 * open until the promise settles.
 */
export function waitSignalled(h: bigint): Promise<number> {
  return k32().load({
    library: 'kernel32',
    funcName: 'WaitForSingleObject',
    retType: U32 as never,
    paramsType: [BigIntT, U32] as never,
    paramsValue: [h, INFINITE],
    runInNewThread: true,
  }) as unknown as Promise<number>;
}

/** Native memory from the process heap, zeroed; for structures that hold pointers to each other. */
class HeapBlock {
  private static heap: bigint | undefined;
  readonly address: bigint;

  constructor(readonly size: number) {
    HeapBlock.heap ??= call<bigint>('GetProcessHeap', BigIntT, [], []).value;
    const r = call<bigint>('HeapAlloc', BigIntT, [BigIntT, U32, BigIntT], [HeapBlock.heap, HEAP_ZERO_MEMORY, BigInt(size)]);
    if (r.value === 0n) throw new NativeHelperError(`HeapAlloc(${size}) failed`);
    this.address = r.value;
  }

  write(data: Buffer): void {
    if (data.length > this.size) throw new RangeError(`HeapBlock: ${data.length} bytes do not fit in ${this.size}`);
    call<undefined>('RtlMoveMemory', Void, [BigIntT, U8Array, BigIntT], [this.address, data, BigInt(data.length)]);
  }

  free(): void {
    call<number>('HeapFree', I32, [BigIntT, U32, BigIntT], [HeapBlock.heap!, 0, this.address]);
  }
}

/** The size InitializeProcThreadAttributeList needs for one attribute; 0 when the call is missing. */
export function attributeListSize(): number {
  const size = Buffer.alloc(8);
  try {
    call<number>('InitializeProcThreadAttributeList', I32, [BigIntT, U32, U32, U8Array], [0n, 1, 0, size]);
  } catch {
    return 0; // no such export (before Windows Vista, or a loader that lacks it)
  }
  return Number(size.readBigUInt64LE(0));
}

export interface SuspendedStartRequest {
  /** The program's full path (lpApplicationName: no search, no guessing where the name ends). */
  application: string;
  /** The whole command line, argv[0] included, quoted by the MSVCRT rules. */
  commandLine: string;
  /** UTF-16LE environment block, sorted, ending in two NULs. */
  environment: Buffer;
  cwd: string;
  /** Inheritable handles: the only ones the child gets (PROC_THREAD_ATTRIBUTE_HANDLE_LIST). */
  stdin: bigint;
  stdout: bigint;
  stderr: bigint;
  /**
   * The child's fd 3 (a data channel's end), given with fds 0-2 in the C runtime's inherited fd
   * table (lpReserved2), which is how Node's spawn() hands extra stdio entries to a child.
   */
  channel?: bigint;
  /** The tree's Job Object; the process is in it before its first instruction. */
  job: bigint;
}

export interface StartedProcess {
  /** PROCESS_ALL_ACCESS handle: held until the exit is seen, so the pid cannot be reused before. */
  process: bigint;
  pid: number;
}

/**
 * CreateProcessW suspended (new process group, Unicode environment, extended startup info that
 * lists the only handles to inherit), AssignProcessToJobObject, then ResumeThread. When the
 * assignment fails the process is terminated before it ran and the error is thrown.
 */
export function startSuspendedInJob(req: SuspendedStartRequest): StartedProcess {
  const start = new StartupBlock(req);
  try {
    const r = call<number>('CreateProcessW', I32, CREATE_PROCESS_TYPES, start.createProcessArgs());
    return assignAndResume(req, start.finish(r.value, r.lastError));
  } finally {
    start.release();
  }
}

/**
 * startSuspendedInJob with CreateProcessW itself on a thread of ffi-rs's own (Wine takes 60–100 ms
 * in it; decision 86). The job assignment and the resume follow on the main thread, and until they
 * have, the process is suspended: it runs nothing outside the job whatever the loop does meanwhile.
 */
export async function startSuspendedInJobAsync(req: SuspendedStartRequest): Promise<StartedProcess> {
  const start = new StartupBlock(req);
  try {
    const r = (await (k32().load({
      library: 'kernel32',
      funcName: 'CreateProcessW',
      retType: I32 as never,
      paramsType: CREATE_PROCESS_TYPES as never,
      paramsValue: start.createProcessArgs(),
      errno: true,
      runInNewThread: true,
    }) as unknown as Promise<{ value: number; errnoCode: number }>));
    return assignAndResume(req, start.finish(r.value, r.errnoCode));
  } finally {
    start.release();
  }
}

const CREATE_PROCESS_TYPES = [U8Array, U8Array, BigIntT, BigIntT, I32, U32, U8Array, U8Array, U8Array, U8Array];

/**
 * Everything CreateProcessW reads, kept alive until release(): the attribute list and the handle
 * array in native memory (the list points at the array), the startup info, the strings.
 */
class StartupBlock {
  private readonly attributes: HeapBlock;
  private readonly handleList: HeapBlock;
  /** The CRT fd table lpReserved2 points at; only for a request with a channel. */
  private crtFds: HeapBlock | null = null;
  private initialized = false;
  private readonly si = Buffer.alloc(112);
  private readonly pi = Buffer.alloc(24);
  private readonly strings: Buffer[];

  constructor(private readonly req: SuspendedStartRequest) {
    const fds = req.channel === undefined ? [req.stdin, req.stdout, req.stderr] : [req.stdin, req.stdout, req.stderr, req.channel];
    const handles = [...new Set(fds)];
    const size = attributeListSize();
    if (size === 0) throw new NativeHelperError('InitializeProcThreadAttributeList is not available: no explicit handle list can be given');
    this.attributes = new HeapBlock(size);
    try {
      this.handleList = new HeapBlock(8 * handles.length);
    } catch (e) {
      this.attributes.free();
      throw e;
    }
    try {
      this.fillAttributes(size, handles);
      if (req.channel !== undefined) this.crtFds = inheritedFdTable(fds);
    } catch (e) {
      this.release();
      throw e;
    }
    // STARTUPINFOEXW (112 bytes): StartupInfo.cb @0, dwFlags @60, cbReserved2 @66, lpReserved2 @72,
    // hStdInput @80, hStdOutput @88, hStdError @96, lpAttributeList @104.
    this.si.writeUInt32LE(this.si.length, 0);
    this.si.writeUInt32LE(STARTF_USESTDHANDLES, 60);
    if (this.crtFds !== null) {
      this.si.writeUInt16LE(this.crtFds.size, 66);
      this.si.writeBigUInt64LE(this.crtFds.address, 72);
    }
    this.si.writeBigUInt64LE(req.stdin, 80);
    this.si.writeBigUInt64LE(req.stdout, 88);
    this.si.writeBigUInt64LE(req.stderr, 96);
    this.si.writeBigUInt64LE(this.attributes.address, 104);
    this.strings = [
      Buffer.from(`${req.application}\0`, 'utf16le'),
      // CreateProcessW may write into the command line: it gets a buffer of its own.
      Buffer.from(`${req.commandLine}\0`, 'utf16le'),
      Buffer.from(`${req.cwd}\0`, 'utf16le'),
    ];
  }

  private fillAttributes(size: number, handles: bigint[]): void {
    const sizeBuf = Buffer.alloc(8);
    sizeBuf.writeBigUInt64LE(BigInt(size));
    const init = call<number>('InitializeProcThreadAttributeList', I32, [BigIntT, U32, U32, U8Array], [this.attributes.address, 1, 0, sizeBuf]);
    if (init.value === 0) throw new NativeHelperError(`InitializeProcThreadAttributeList failed: ${win32ErrorText(init.lastError)}`);
    this.initialized = true;
    const list = Buffer.alloc(8 * handles.length);
    handles.forEach((h, i) => list.writeBigUInt64LE(h, 8 * i));
    this.handleList.write(list);
    const upd = call<number>('UpdateProcThreadAttribute', I32, [BigIntT, U32, BigIntT, BigIntT, BigIntT, BigIntT, BigIntT], [
      this.attributes.address,
      0,
      PROC_THREAD_ATTRIBUTE_HANDLE_LIST,
      this.handleList.address,
      BigInt(list.length),
      0n,
      0n,
    ]);
    if (upd.value === 0) throw new NativeHelperError(`UpdateProcThreadAttribute(HANDLE_LIST) failed: ${win32ErrorText(upd.lastError)}`);
  }

  createProcessArgs(): unknown[] {
    const flags = CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP | CREATE_UNICODE_ENVIRONMENT | EXTENDED_STARTUPINFO_PRESENT | CREATE_NO_WINDOW;
    const [application, commandLine, cwd] = this.strings;
    // bInheritHandles is TRUE, and the handle list narrows it to the three stdio handles.
    return [application, commandLine, 0n, 0n, 1, flags, this.req.environment, cwd, this.si, this.pi];
  }

  /** PROCESS_INFORMATION (hProcess @0, hThread @8, dwProcessId @16) once CreateProcessW succeeded. */
  finish(created: number, code: number): { process: bigint; thread: bigint; pid: number } {
    if (created === 0) {
      const e = new NativeHelperError(`CreateProcessW ${this.req.application} failed: ${win32ErrorText(code)}`) as NativeHelperError & { winError: number };
      e.winError = code;
      throw e;
    }
    return { process: this.pi.readBigUInt64LE(0), thread: this.pi.readBigUInt64LE(8), pid: this.pi.readUInt32LE(16) };
  }

  release(): void {
    if (this.initialized) call<undefined>('DeleteProcThreadAttributeList', Void, [BigIntT], [this.attributes.address]);
    this.initialized = false;
    this.attributes.free();
    this.handleList.free();
    this.crtFds?.free();
    this.crtFds = null;
  }
}

/**
 * The C runtime's inherited fd table, as libuv writes it for Node's spawn() (process-stdio.c) and
 * the child's CRT reads it at start-up: an int count, then one flag byte per fd, then one
 * HANDLE-sized value per fd (unaligned). fd N is `handles[N]`; its flags say open, and pipe or
 * character device as GetFileType sees it (libuv's choice too).
 */
function inheritedFdTable(handles: readonly bigint[]): HeapBlock {
  const table = Buffer.alloc(4 + handles.length + 8 * handles.length);
  table.writeUInt32LE(handles.length, 0);
  handles.forEach((h, fd) => {
    const type = call<number>('GetFileType', U32, [BigIntT], [h]).value;
    table.writeUInt8(FOPEN | (type === FILE_TYPE_PIPE ? FPIPE : type === FILE_TYPE_CHAR ? FDEV : 0), 4 + fd);
    table.writeBigUInt64LE(h, 4 + handles.length + 8 * fd);
  });
  const block = new HeapBlock(table.length);
  block.write(table);
  return block;
}

function assignAndResume(req: SuspendedStartRequest, created: { process: bigint; thread: bigint; pid: number }): StartedProcess {
  const { process, thread, pid } = created;
  try {
    const assigned = call<number>('AssignProcessToJobObject', I32, [BigIntT, BigIntT], [req.job, process]);
    if (assigned.value === 0) {
      // Still suspended: it never ran an instruction of its own.
      call<number>('TerminateProcess', I32, [BigIntT, U32], [process, 1]);
      closeHandle(process);
      throw new NativeHelperError(`AssignProcessToJobObject failed for the suspended pid ${pid}: ${win32ErrorText(assigned.lastError)}`);
    }
    const resumed = call<number>('ResumeThread', U32, [BigIntT], [thread]);
    if (resumed.value === 0xffff_ffff) {
      call<number>('TerminateProcess', I32, [BigIntT, U32], [process, 1]);
      closeHandle(process);
      throw new NativeHelperError(`ResumeThread failed for pid ${pid}: ${win32ErrorText(resumed.lastError)}`);
    }
  } finally {
    closeHandle(thread);
  }
  return { process, pid };
}
