// Reading process identity from /proc. Every read tolerates the process vanishing mid-read.
import { readFileSync, readdirSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  /** One-letter state: R, S, D, Z (zombie), T, X … */
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  /** Field 22: start time in clock ticks since boot; with the boot id, the process's identity. */
  startTime: string;
}

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
  if (close < 0) return null;
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
  };
}

export function readStat(pid: number): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  return parseStat(pid, text);
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

/** The process's initial environment (NUL-separated), or null when it cannot be read. */
export function readEnviron(pid: number): Buffer | null {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
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
