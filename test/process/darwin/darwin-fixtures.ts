// Test doubles for the macOS process layer: byte-exact builders for proc_bsdinfo and KERN_PROCARGS2
// (offsets written as literals from <sys/proc_info.h>, independent of the constants under test),
// and a fake process table implementing DarwinProcessSource.
import { envHas, parseBsdInfo, parseProcArgs2, type PsUsage } from '../../../src/process/darwin/proc-info.js';
import { psUsage } from '../../../src/process/darwin/ps-source.js';
import type { DarwinProc, DarwinProcessSource } from '../../../src/process/darwin/process-source.js';

export interface BsdFields {
  pid: number;
  ppid?: number;
  pgid?: number;
  status?: number;
  flags?: number;
  uid?: number;
  ruid?: number;
  comm?: string;
  name?: string;
  startSec: bigint;
  startUsec: number;
}

/** A struct proc_bsdinfo as the kernel would copy it out (little-endian, 136 bytes). */
export function buildBsdInfo(f: BsdFields): Buffer {
  const b = Buffer.alloc(136, 0xee); // garbage everywhere the builder does not write
  b.writeUInt32LE(f.flags ?? 0, 0); // pbi_flags
  b.writeUInt32LE(f.status ?? 2, 4); // pbi_status (SRUN)
  b.writeUInt32LE(0, 8); // pbi_xstatus
  b.writeUInt32LE(f.pid, 12); // pbi_pid
  b.writeUInt32LE(f.ppid ?? 1, 16); // pbi_ppid
  b.writeUInt32LE(f.uid ?? 501, 20); // pbi_uid
  b.writeUInt32LE(20, 24); // pbi_gid
  b.writeUInt32LE(f.ruid ?? 501, 28); // pbi_ruid
  b.writeUInt32LE(20, 32); // pbi_rgid
  b.writeUInt32LE(501, 36); // pbi_svuid
  b.writeUInt32LE(20, 40); // pbi_svgid
  b.writeUInt32LE(0, 44); // rfu_1
  b.fill(0, 48, 64); // pbi_comm[16]
  b.write(f.comm ?? 'proc', 48, 16, 'utf8');
  b.fill(0, 64, 96); // pbi_name[32]
  b.write(f.name ?? '', 64, 32, 'utf8');
  b.writeUInt32LE(3, 96); // pbi_nfiles
  b.writeUInt32LE(f.pgid ?? f.pid, 100); // pbi_pgid
  b.writeUInt32LE(0, 104); // pbi_pjobc
  b.writeUInt32LE(0xffffffff, 108); // e_tdev (NODEV)
  b.writeUInt32LE(0, 112); // e_tpgid
  b.writeInt32LE(0, 116); // pbi_nice
  b.writeBigUInt64LE(f.startSec, 120); // pbi_start_tvsec
  b.writeBigUInt64LE(BigInt(f.startUsec), 128); // pbi_start_tvusec
  return b;
}

export interface ProcArgsFields {
  execPath: string;
  argv: string[];
  env: string[];
  /** Pad the exec path with NULs up to this alignment (the kernel pads to the pointer size). */
  padTo?: number;
  /** Override the argc word. */
  argc?: number;
}

/** A KERN_PROCARGS2 answer: int32 argc, exec path, NUL padding, argv, env. */
export function buildProcArgs2(f: ProcArgsFields): Buffer {
  const head = Buffer.alloc(4);
  head.writeInt32LE(f.argc ?? f.argv.length, 0);
  let path = Buffer.from(`${f.execPath}\0`, 'latin1');
  const pad = f.padTo ?? 8;
  const padded = Math.ceil(path.length / pad) * pad;
  path = Buffer.concat([path, Buffer.alloc(padded - path.length)]);
  const strings = [...f.argv, ...f.env].map((s) => Buffer.from(`${s}\0`, 'latin1'));
  return Buffer.concat([head, path, ...strings]);
}

export interface FakeProc {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** Microseconds since the epoch. */
  start: bigint;
  env?: string[];
  zombie?: boolean;
  /** Survives SIGTERM. */
  ignoresTerm?: boolean;
  /** What `ps -o pid=,ppid=,stat=,rss=,time=,etime=,ucomm=` prints of it (none: ps answers nothing). */
  ps?: { stat: string; rss: number; time: string; name: string; /** etime of another start than `start` (a reused pid). */ startedMsLater?: number };
}

/** ps's etime, "[[dd-]hh:]mm:ss", written here independently of the parser under test. */
function etime(ms: number): string {
  const s = Math.floor(ms / 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  const [d, h, m, sec] = [Math.floor(s / 86400), Math.floor(s / 3600) % 24, Math.floor(s / 60) % 60, s % 60];
  return d > 0 ? `${d}-${two(h)}:${two(m)}:${two(sec)}` : h > 0 ? `${two(h)}:${two(m)}:${two(sec)}` : `${two(m)}:${two(sec)}`;
}

/**
 * A process table that answers through the same parsers as the real source: info() round-trips a
 * proc_bsdinfo buffer, environHas() a KERN_PROCARGS2 buffer. Signals are recorded and applied:
 * SIGKILL (and SIGTERM unless ignored) turns the process into a zombie that its parent reaps on
 * the next reap() (or at once when `autoReap`).
 */
export class FakeProcessTable implements DarwinProcessSource {
  readonly kind = 'fake';
  coarseStartTime = false;
  boot = 'BOOT-A';
  autoReap = true;
  readonly procs = new Map<number, FakeProc>();
  readonly signals: { pid: number; signal: NodeJS.Signals; delivered: boolean }[] = [];
  /** Runs once before the next kill(): lets a test change the table between the scan and the signals. */
  beforeKill: (() => void) | null = null;

  add(...ps: FakeProc[]): this {
    for (const p of ps) this.procs.set(p.pid, { ...p });
    return this;
  }

  bootId(): string {
    return this.boot;
  }

  list(): DarwinProc[] {
    const out: DarwinProc[] = [];
    for (const pid of this.procs.keys()) {
      const p = this.info(pid);
      if (p) out.push(p);
    }
    return out;
  }

  info(pid: number): DarwinProc | null {
    const p = this.procs.get(pid);
    if (!p) return null;
    const b = parseBsdInfo(
      buildBsdInfo({ pid: p.pid, ppid: p.ppid, pgid: p.pgid, status: p.zombie ? 5 : 3, startSec: p.start / 1_000_000n, startUsec: Number(p.start % 1_000_000n) }),
    )!;
    return { pid: b.pid, ppid: b.ppid, pgid: b.pgid, zombie: b.zombie, startTime: b.startTime };
  }

  sid(pid: number): number | null {
    return this.procs.get(pid)?.sid ?? null;
  }

  environHas(pid: number, name: string, value: string): boolean {
    const p = this.procs.get(pid);
    if (!p) return false;
    return envHas(parseProcArgs2(buildProcArgs2({ execPath: '/bin/fake', argv: ['fake'], env: p.env ?? [] })), name, value);
  }

  /** The `ps` command lines run for usage (each a child process on macOS). */
  readonly psRuns: string[][] = [];

  /**
   * Through the real reader (psUsage: one ps for all pids, per pid when refused) and parsers, from
   * ps output built as macOS ps prints it. Like ps, a pid that is not there fails the whole run.
   */
  usage(pids: readonly number[]): Map<number, PsUsage> {
    return psUsage((file, args) => {
      this.psRuns.push([file, ...args]);
      const asked = args[args.length - 1]!.split(',').map(Number);
      const lines: string[] = [];
      for (const pid of asked) {
        const p = this.procs.get(pid);
        if (!p?.ps) return null;
        const elapsed = Date.now() - Number(p.start / 1000n) - (p.ps.startedMsLater ?? 0);
        lines.push(`${String(p.pid).padStart(5)} ${String(p.ppid).padStart(5)} ${p.ps.stat.padEnd(4)} ${String(p.ps.rss).padStart(6)} ${p.ps.time.padStart(9)} ${etime(elapsed).padStart(11)} ${p.ps.name}\n`);
      }
      return lines.join('');
    }, pids);
  }

  kill(pid: number, signal: NodeJS.Signals): boolean {
    const hook = this.beforeKill;
    this.beforeKill = null;
    hook?.();
    const targets = pid < 0 ? [...this.procs.values()].filter((p) => p.pgid === -pid && !p.zombie) : [this.procs.get(pid)].filter((p) => p !== undefined);
    this.signals.push({ pid, signal, delivered: targets.length > 0 });
    for (const p of targets) {
      if (p.zombie) continue;
      if (signal === 'SIGKILL' || (signal === 'SIGTERM' && !p.ignoresTerm)) this.exit(p.pid);
    }
    return targets.length > 0;
  }

  /** The process exits: a zombie until reaped; its children go to launchd. */
  exit(pid: number): void {
    const p = this.procs.get(pid);
    if (!p) return;
    p.zombie = true;
    for (const c of this.procs.values()) if (c.ppid === pid && !c.zombie) c.ppid = 1;
    if (this.autoReap) this.procs.delete(pid);
  }

  /** Pids that received `signal` individually (not through a group). */
  signalled(signal?: NodeJS.Signals): number[] {
    return this.signals.filter((s) => s.pid > 0 && (signal === undefined || s.signal === signal)).map((s) => s.pid);
  }

  groupSignals(): { pgid: number; signal: NodeJS.Signals }[] {
    return this.signals.filter((s) => s.pid < 0).map((s) => ({ pgid: -s.pid, signal: s.signal }));
  }
}
