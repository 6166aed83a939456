// Reading process identity from /proc. Every read tolerates the process vanishing mid-read.
import { closeSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  /** One-letter state: R, S, D, Z (zombie), T, X … */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Field 22: start time in clock ticks since boot; with the boot id, the process's identity. */
  startTime: string;
  /** Field 2: the kernel's name of the program (at most 15 bytes; the process can change it). */
  name: string;
  /** Fields 14 + 15: CPU time used, user and system, in clock ticks. */
  cpuTicks: number;
}

/**
 * Clock ticks per second as /proc reports them (USER_HZ): 100 on every Linux ABI Node runs on;
 * the kernel keeps it fixed for user space whatever its internal HZ.
 */
export const USER_HZ = 100;

let cachedBootId: string | undefined;

export function bootId(): string {
  if (cachedBootId === undefined) {
    cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  }
  return cachedBootId;
}

/** Parses /proc/<pid>/stat; the command name may hold spaces and parentheses, so split after the last ')'. */
export function parseStat(pid: number, text: string): ProcStat | null {
  const close = text.lastIndexOf(')');
  const open = text.indexOf('(');
  if (close < 0 || open < 0 || open > close) return null;
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state); field N is f[N - 3].
  const startTime = f[19];
  if (f[0] === undefined || startTime === undefined) return null;
  return {
    pid,
    state: f[0],
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    startTime,
    name: text.slice(open + 1, close),
    cpuTicks: Number(f[11]) + Number(f[12]),
  };
}

export function readStat(pid: number): ProcStat | null {
  const bytes = readProcFile(`/proc/${pid}/stat`);
  return bytes === null ? null : parseStat(pid, bytes.toString('latin1'));
}

// /proc files report size 0, so readFileSync grows fresh buffers for each one; a walk of /proc
// reads hundreds of them per tree that ends. One buffer, reused, grown only for a larger file.
let procBuffer = Buffer.allocUnsafe(64 * 1024);

/**
 * The whole file, as a view of the shared buffer: valid until the next call, so copy what you keep.
 * Null when it cannot be read (the process is gone, or not ours to read).
 */
function readProcFile(file: string): Buffer | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return null;
  }
  try {
    let length = 0;
    for (;;) {
      if (length === procBuffer.length) {
        const grown = Buffer.allocUnsafe(procBuffer.length * 2);
        procBuffer.copy(grown, 0, 0, length);
        procBuffer = grown;
      }
      const n = readSync(fd, procBuffer, length, procBuffer.length - length, null);
      if (n === 0) return procBuffer.subarray(0, length);
      length += n;
    }
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Resident memory (VmRSS of /proc/<pid>/status) in KiB; null when unreadable or a kernel thread. */
export function residentKib(pid: number): number | null {
  const bytes = readProcFile(`/proc/${pid}/status`);
  if (bytes === null) return null;
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(bytes.toString('latin1'));
  return m ? Number(m[1]) : null;
}

/** Seconds since boot (/proc/uptime), to turn a start time in ticks into a wall-clock time. */
export function uptimeSeconds(): number {
  const bytes = readProcFile('/proc/uptime');
  return bytes === null ? Number.NaN : Number(bytes.toString('latin1').split(' ')[0]);
}

export function startTimeOf(pid: number): string | null {
  return readStat(pid)?.startTime ?? null;
}

/** All numeric entries of /proc: a snapshot, stale by the time it returns. */
export function listPids(): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    out.push(Number(name));
  }
  return out;
}

/**
 * True when the process's initial environment holds exactly `NAME=value`.
 * A process can overwrite its own environ memory: the marker finds honest and careless
 * escapees, not adversarial ones (that is what cgroups are for).
 */
export function environHas(pid: number, needle: Buffer): boolean {
  const env = readEnviron(pid);
  return env !== null && environBufferHas(env, needle);
}

/** The process's initial environment (NUL-separated, a copy), or null when it cannot be read. */
export function readEnviron(pid: number): Buffer | null {
  const bytes = readProcFile(`/proc/${pid}/environ`);
  return bytes === null ? null : Buffer.from(bytes);
}

const MARKER_PREFIX = Buffer.from('SUPERVISOR_SPAWN_ID=');

interface MarkerEntry {
  startTime: string;
  /** Every SUPERVISOR_SPAWN_ID value in the environment as first read; null when it could not be read. */
  spawnIds: readonly string[] | null;
}

const markerCache = new Map<number, MarkerEntry>();

/**
 * The SUPERVISOR_SPAWN_ID values of process (pid, startTime), read from its environment once per
 * process lifetime: every tree that ends walks /proc, and without this each walk read the
 * environment of every process started after its leader again (O(trees × processes)). Keeping the
 * first reading is sound for membership: an exec or an overwrite of the environment memory can only
 * remove a marker, which would make a member look like a stranger; a process that gains a marker
 * later chose to be counted in a tree it was not in. A read that failed or came back empty (the
 * process was exiting, mid-exec, or not readable) is not kept: it is tried again on the next walk.
 */
export function spawnMarkersOf(pid: number, startTime: string): readonly string[] {
  const hit = markerCache.get(pid);
  if (hit !== undefined && hit.startTime === startTime && hit.spawnIds !== null) return hit.spawnIds;
  const env = readProcFile(`/proc/${pid}/environ`);
  // Empty is no evidence: a process in the middle of an exec (its new memory not yet set up), a
  // zombie and a kernel thread all read as empty. Read it again next time.
  const spawnIds = env === null || env.length === 0 ? null : markerValues(env);
  markerCache.set(pid, { startTime, spawnIds });
  return spawnIds ?? [];
}

/** Forgets the processes not in `livePids` (a fresh listing of /proc). */
export function pruneMarkerCache(livePids: ReadonlySet<number>): void {
  for (const pid of markerCache.keys()) if (!livePids.has(pid)) markerCache.delete(pid);
}

/** Every value of an entry `SUPERVISOR_SPAWN_ID=<value>` in a NUL-separated environment. */
function markerValues(env: Buffer): string[] {
  const out: string[] = [];
  let at = env.indexOf(MARKER_PREFIX);
  while (at >= 0) {
    if (at === 0 || env[at - 1] === 0) {
      const start = at + MARKER_PREFIX.length;
      const nul = env.indexOf(0, start);
      out.push(env.toString('latin1', start, nul < 0 ? env.length : nul));
    }
    at = env.indexOf(MARKER_PREFIX, at + 1);
  }
  return out;
}

/** True when `env` (a /proc environ) holds exactly the entry `needle` (`NAME=value`). */
export function environBufferHas(env: Buffer, needle: Buffer): boolean {
  let at = env.indexOf(needle);
  while (at >= 0) {
    if (at === 0 || env[at - 1] === 0) {
      const end = at + needle.length;
      if (end === env.length || env[end] === 0) return true;
    }
    at = env.indexOf(needle, at + 1);
  }
  return false;
}

/** Clock ticks since boot, for comparing with start times. */
export function ticksStartedBefore(a: string, b: string): boolean {
  return BigInt(a) < BigInt(b);
}

/** Live-or-zombie pids whose initial environment holds SUPERVISOR_SPAWN_ID=<value> exactly. */
export function pidsWithSpawnMarker(value: string): number[] {
  const needle = Buffer.from(`SUPERVISOR_SPAWN_ID=${value}`);
  return listPids().filter((pid) => pid !== process.pid && environHas(pid, needle));
}
