// Loads ffi-rs once, on the main thread only: ffi-rs crashes the process when a worker that
// loaded it exits, so a worker gets a clear error instead.
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { createRequire } from 'node:module';

export type FfiModule = typeof import('ffi-rs');

export class NativeHelperError extends Error {
  readonly code = 'NATIVE_HELPER_UNAVAILABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NativeHelperError';
  }
}

let ffiModule: FfiModule | undefined;
let ffiError: Error | undefined;
const opened = new Map<string, Error | null>();

export function loadFfi(who: string): FfiModule {
  if (ffiModule) return ffiModule;
  if (ffiError) throw ffiError;
  if (!isMainThread) {
    ffiError = new NativeHelperError(`${who}: ffi-rs may only be loaded on the main thread`);
    throw ffiError;
  }
  try {
    ffiModule = withoutGlibcReport(() => createRequire(import.meta.url)('ffi-rs') as FfiModule);
    return ffiModule;
  } catch (cause) {
    ffiError = new NativeHelperError(`${who}: could not load ffi-rs (is its binary for ${process.platform}-${process.arch} installed?)`, { cause });
    throw ffiError;
  }
}

/** Opens a native library under `name` once; later calls return the same outcome. */
export function openLibrary(who: string, name: string, path: string): FfiModule {
  const ffi = loadFfi(who);
  const prior = opened.get(name);
  if (prior === null) return ffi;
  if (prior) throw prior;
  try {
    ffi.open({ library: name, path });
    opened.set(name, null);
    return ffi;
  } catch (cause) {
    const err = new NativeHelperError(`${who}: could not open ${path || name}`, { cause });
    opened.set(name, err);
    throw err;
  }
}

/**
 * ffi-rs picks its binary on Linux by asking process.report.getReport() whether libc is glibc: a
 * full diagnostic report (heap, handles, shared objects) on every start, 6–25 ms (issue 17). When
 * this process has glibc mapped, the loader is given that answer without the report; otherwise
 * (musl, not Linux, maps unreadable) it asks the real one. Restored before returning, even on error.
 */
function withoutGlibcReport<T>(load: () => T): T {
  if (process.platform !== 'linux') return load();
  let glibc = false;
  try {
    glibc = /\/libc(?:\.so\.6|-2\.\d+\.so)$/m.test(readFileSync('/proc/self/maps', 'latin1'));
  } catch {
    // the loader's own check decides
  }
  const report = process.report;
  const real = report?.getReport;
  if (!glibc || typeof real !== 'function') return load();
  report.getReport = (() => ({ header: { glibcVersionRuntime: 'mapped' } })) as unknown as typeof real;
  try {
    return load();
  } finally {
    report.getReport = real;
  }
}
