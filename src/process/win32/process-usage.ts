// What an operator is shown of a live Windows process (`supervisor ps`, the web page), from what
// one process handle answers: creation time (the identity the walk checked), CPU time, working
// set and image name. Windows has no one-letter state and a job lists pids, not parents: those are
// null, shown "n/a". The reading is behind a small interface so the rules run against a fake
// table on any OS; the native reader (win32-platform.ts) opens one handle per look.
import type { ProcessUsage } from '../platform.js';

/** One process as one handle answers it; null when it cannot be opened (gone, or not ours to query). */
export interface Win32ProcessFacts {
  /** Creation time, FILETIME (100 ns ticks since 1601): the start marker. */
  creation: bigint;
  /** GetExitCodeProcess said STILL_ACTIVE. */
  running: boolean;
  /** Kernel plus user time, 100 ns units. */
  cpu100ns: bigint;
  workingSetBytes: bigint | null;
  imagePath: string | null;
}

export type Win32ProcessReader = (pid: number) => Win32ProcessFacts | null;

/** FILETIME ticks at the Unix epoch. */
const UNIX_EPOCH_TICKS = 116_444_736_000_000_000n;

/** The figures of `pid` if it is still the process the walk saw (its creation time is `startTime`). */
export function win32Usage(read: Win32ProcessReader, pid: number, startTime: string): ProcessUsage | null {
  const f = read(pid);
  if (f === null || !f.running || f.creation.toString() !== startTime) return null;
  return {
    ppid: null,
    // The image's file name only: a path names the user's directories, and the views show a program's name.
    name: f.imagePath === null ? '' : (f.imagePath.split(/[\\/]/).pop() ?? ''),
    state: null,
    startedAt: Number((f.creation - UNIX_EPOCH_TICKS) / 10_000n),
    cpuMs: Number(f.cpu100ns / 10_000n),
    rssKib: f.workingSetBytes === null ? null : Number(f.workingSetBytes / 1024n),
  };
}
