// The fallback macOS source when ffi-rs cannot be loaded: /bin/ps for the table (whole-second start
// times, no session ids) and `ps -E` for the marker. Every call is a synchronous child process, so
// it is slower and coarser than libproc; it exists so that a missing native binary degrades the
// supervisor instead of disabling it.
import { spawnSync } from 'node:child_process';
import { bootIdentity, parseBoottimeText, parsePsTable, parsePsUsage, parsePsUsageRows, psCommandHasEnv, PS_ENV, PS_TABLE_ARGS, PS_USAGE_FIELDS, type PsUsage } from './proc-info.js';
import { DarwinOnlyError, nodeKill, type DarwinProc, type DarwinProcessSource } from './process-source.js';

export const PS_PATH = '/bin/ps';
export const SYSCTL_PATH = '/usr/sbin/sysctl';

/** Runs a tool with a fixed environment; stdout on exit status 0, otherwise null. */
export type ToolRunner = (file: string, args: readonly string[]) => string | null;

export function runTool(file: string, args: readonly string[]): string | null {
  const r = spawnSync(file, [...args], { env: PS_ENV, encoding: 'utf8', timeout: 10_000, maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'ignore'] });
  return r.status === 0 && typeof r.stdout === 'string' ? r.stdout : null;
}

/**
 * The figures of `pids` through one `ps -o PS_USAGE_FIELDS -p PID,PID,…` (both macOS sources use
 * it). An answer refused as a whole (a failed ps, e.g. a pid gone meanwhile; a name that forged a
 * line) is asked again one pid at a time, where only each answer's first line is read.
 */
export function psUsage(run: ToolRunner, pids: readonly number[]): Map<number, PsUsage> {
  const asked = new Set(pids.filter((pid) => pid > 0));
  if (asked.size === 0) return new Map();
  const all = run(PS_PATH, ['-o', PS_USAGE_FIELDS, '-p', [...asked].join(',')]);
  const rows = all === null ? null : parsePsUsageRows(all, asked);
  if (rows !== null) return rows;
  const out = new Map<number, PsUsage>();
  for (const pid of asked) {
    const text = run(PS_PATH, ['-o', PS_USAGE_FIELDS, '-p', String(pid)]);
    const row = text === null ? null : parsePsUsage(text, pid);
    if (row !== null) out.set(pid, row);
  }
  return out;
}

export class PsSource implements DarwinProcessSource {
  readonly kind = 'ps';
  readonly coarseStartTime = true;
  private boot: string | undefined;

  /** `run` is replaceable for tests; the default runs the real tools and only on macOS. */
  constructor(private readonly run: ToolRunner = runTool) {
    if (run === runTool && process.platform !== 'darwin') throw new DarwinOnlyError('the ps process source (BSD ps -E, sysctl kern.bootsessionuuid)');
  }

  bootId(): string {
    if (this.boot === undefined) {
      const uuid = this.run(SYSCTL_PATH, ['-n', 'kern.bootsessionuuid'])?.trim() ?? null;
      this.boot = bootIdentity(uuid, uuid ? null : parseBoottimeText(this.run(SYSCTL_PATH, ['-n', 'kern.boottime'])));
    }
    return this.boot;
  }

  list(): DarwinProc[] {
    const text = this.run(PS_PATH, PS_TABLE_ARGS);
    // An empty answer would read as "the tree is gone": fail loudly instead.
    if (text === null) throw new Error(`${PS_PATH} ${PS_TABLE_ARGS.join(' ')} failed: the macOS process table cannot be read`);
    return parsePsTable(text).rows.map(({ pid, ppid, pgid, zombie, startTime }) => ({ pid, ppid, pgid, zombie, startTime }));
  }

  info(pid: number): DarwinProc | null {
    if (!(pid > 0)) return null;
    const text = this.run(PS_PATH, ['-o', 'pid=,ppid=,pgid=,stat=,lstart=', '-p', String(pid)]);
    const row = text === null ? undefined : parsePsTable(text).rows.find((r) => r.pid === pid);
    return row ? { pid, ppid: row.ppid, pgid: row.pgid, zombie: row.zombie, startTime: row.startTime } : null;
  }

  sid(_pid: number): number | null {
    return null;
  }

  environHas(pid: number, name: string, value: string): boolean {
    if (!(pid > 0)) return false;
    const text = this.run(PS_PATH, ['-wwE', '-o', 'command=', '-p', String(pid)]);
    return text !== null && psCommandHasEnv(text, name, value);
  }

  usage(pids: readonly number[]): Map<number, PsUsage> {
    return psUsage(this.run, pids);
  }

  kill(pid: number, signal: NodeJS.Signals): boolean {
    return nodeKill(pid, signal);
  }
}
