// What DarwinPlatform needs from the OS, behind one small interface: the membership and signalling
// logic runs against a fake process table in tests on any OS, and against libproc (or `ps`) on macOS.
import type { PsUsage } from './proc-info.js';

/** One process as the source sees it now. */
export interface DarwinProc {
  pid: number;
  ppid: number;
  pgid: number;
  /** p_stat SZOMB (or ps state Z): exited, not yet reaped. Never a live member, never signalled. */
  zombie: boolean;
  /** Microseconds since the epoch, decimal (whole seconds from `ps`). With the boot id: the identity. */
  startTime: string;
}

export interface DarwinProcessSource {
  /** 'libproc', 'ps', or a test double's name: shown by diagnostics. */
  readonly kind: string;
  /** True when start times have whole-second precision only (`ps`). */
  readonly coarseStartTime: boolean;
  /** Changes at every boot (kern.bootsessionuuid); '' when unknown. */
  bootId(): string;
  /** Every process visible to us now, zombies included. A snapshot, stale by the time it returns. */
  list(): DarwinProc[];
  /** One process now, zombie included; null when gone or not visible to us. */
  info(pid: number): DarwinProc | null;
  /** Session id (getsid), or null when unknown (gone, or the `ps` fallback, which cannot tell). */
  sid(pid: number): number | null;
  /** True when the process's initial environment holds exactly NAME=value. */
  environHas(pid: number, name: string, value: string): boolean;
  /**
   * The figures (ppid, state, RSS, CPU time, elapsed time, accounting name) of each of `pids`
   * still there, read at once; a pid gone is missing from the map. Absent: this source has none,
   * and the operator's views say "n/a".
   */
  usage?(pids: readonly number[]): Map<number, PsUsage>;
  /** kill(2): a negative pid names a process group. True when the signal was delivered. */
  kill(pid: number, signal: NodeJS.Signals): boolean;
}

/** A macOS-only facility was asked for on another OS. The Linux code path never does this. */
export class DarwinOnlyError extends Error {
  readonly code = 'PLATFORM_MISMATCH';
  constructor(what: string) {
    super(`${what} exists only on macOS; this process runs on ${process.platform}, whose process layer is not DarwinPlatform`);
    this.name = 'DarwinOnlyError';
  }
}

/** kill(2) through Node, which throws ESRCH/EPERM: false when nothing was signalled. */
export function nodeKill(pid: number, signal: NodeJS.Signals): boolean {
  // 0 and -1 name our own group and every process we may signal: never meant here.
  if (pid === 0 || pid === -1) return false;
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
