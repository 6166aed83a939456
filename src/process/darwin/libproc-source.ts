// The primary macOS source: proc_listallpids + proc_pidinfo(PROC_PIDTBSDINFO) for the process
// table and start markers, getsid for sessions, sysctl(KERN_PROCARGS2) for the marker, all through
// ffi-rs (native-helpers/libproc.ts, main thread only).
import * as libproc from '../../../native-helpers/libproc.js';
import { bootIdentity, envHas, parseBsdInfo, parseProcArgs2, parseTimeval, type PsUsage } from './proc-info.js';
import { psUsage, runTool } from './ps-source.js';
import { DarwinOnlyError, nodeKill, type DarwinProc, type DarwinProcessSource } from './process-source.js';

export class LibprocSource implements DarwinProcessSource {
  readonly kind = 'libproc';
  readonly coarseStartTime = false;
  private boot: string | undefined;

  constructor() {
    if (process.platform !== 'darwin') throw new DarwinOnlyError('the libproc process source (proc_pidinfo, sysctl KERN_PROCARGS2)');
  }

  bootId(): string {
    this.boot ??= bootIdentity(libproc.bootSessionUuid(), parseTimeval(libproc.bootTimeRaw()));
    return this.boot;
  }

  list(): DarwinProc[] {
    const out: DarwinProc[] = [];
    for (const pid of libproc.procListAllPids()) {
      const p = this.info(pid);
      if (p) out.push(p);
    }
    return out;
  }

  info(pid: number): DarwinProc | null {
    if (!(pid > 0)) return null;
    const r = libproc.procPidBsdInfo(pid, true);
    if (!r.info) return null;
    const b = parseBsdInfo(r.info);
    // A struct for another pid would mean a layout or binding error: never trust it.
    if (!b || b.pid !== pid) return null;
    return { pid, ppid: b.ppid, pgid: b.pgid, zombie: b.zombie, startTime: b.startTime };
  }

  sid(pid: number): number | null {
    const r = libproc.getsid(pid);
    return r.value >= 0 ? r.value : null;
  }

  environHas(pid: number, name: string, value: string): boolean {
    const r = libproc.sysctlProcArgs2(pid);
    return r.bytes !== null && envHas(parseProcArgs2(r.bytes), name, value);
  }

  /** Through ps (one child process per look at a tree): only an operator's view asks, never the ladder. */
  usage(pids: readonly number[]): Map<number, PsUsage> {
    return psUsage(runTool, pids);
  }

  kill(pid: number, signal: NodeJS.Signals): boolean {
    return nodeKill(pid, signal);
  }
}
