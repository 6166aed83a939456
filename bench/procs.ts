// /proc helpers for the benchmarks: find processes by their SUPERVISOR_SPAWN_ID marker (the logic
// of test/helpers/procs.ts, copied so bench/ does not depend on test/), kill leftovers by pid, reap
// orphans this process adopted as a child subreaper, and a final sweep for every marker we used.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import * as libc from '../native-helpers/libc.js';
import { listPids, readStat, type ProcStat } from '../src/process/linux/procfs.js';

export const MARKER_VAR = 'SUPERVISOR_SPAWN_ID';

// The supervisor's own /proc parsing: the bench measures the supervisor, it need not re-derive it.
export type Stat = ProcStat;
export { readStat };

export function alive(pid: number): boolean {
  const s = readStat(pid)?.state;
  return s !== undefined && s !== 'Z' && s !== 'X';
}

const numericPids = listPids;

/** The marker value in a process's environment, or null (unreadable, zombie, none). */
export function markerOf(pid: number): string | null {
  let env: string;
  try {
    env = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return null;
  }
  const key = `${MARKER_VAR}=`;
  for (const kv of env.split('\0')) if (kv.startsWith(key)) return kv.slice(key.length);
  return null;
}

/** Live (non-zombie) processes whose environment carries SUPERVISOR_SPAWN_ID=<spawnId>. */
export function markedStats(spawnId: string): Stat[] {
  const out: Stat[] = [];
  for (const pid of numericPids()) {
    if (pid === process.pid) continue;
    if (markerOf(pid) !== spawnId) continue;
    const st = readStat(pid);
    if (st !== null && st.state !== 'Z' && st.state !== 'X') out.push(st);
  }
  return out;
}

export function markedPids(spawnId: string): number[] {
  return markedStats(spawnId).map((s) => s.pid);
}

/** Live processes carrying any marker in `ids`, with the marker they carry. */
export function sweep(ids: ReadonlySet<string>): Array<{ pid: number; marker: string; cmdline: string }> {
  const out: Array<{ pid: number; marker: string; cmdline: string }> = [];
  for (const pid of numericPids()) {
    if (pid === process.pid) continue;
    const m = markerOf(pid);
    if (m === null || !ids.has(m) || !alive(pid)) continue;
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
    } catch {
      // gone
    }
    out.push({ pid, marker: m, cmdline });
  }
  return out;
}

/** True when SIGTERM is ignored by the process (bit 15 of SigIgn in /proc/<pid>/status). */
export function ignoresTerm(pid: number): boolean {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'latin1');
    const m = /^SigIgn:\s*([0-9a-f]+)$/m.exec(status);
    return m !== null && (BigInt(`0x${m[1]}`) & (1n << 14n)) !== 0n;
  } catch {
    return false;
  }
}

export function comm(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'latin1').trim();
  } catch {
    return '';
  }
}

/** SIGKILL each process by pid, only if the pid still names the process first seen (start time). */
export function killMembers(members: Iterable<Stat>): number {
  let n = 0;
  for (const m of members) {
    const now = readStat(m.pid);
    if (now === null || now.startTime !== m.startTime || now.state === 'Z') continue;
    try {
      process.kill(m.pid, 'SIGKILL');
      n++;
    } catch {
      // already gone
    }
  }
  return n;
}

/**
 * Reaps, one pid at a time, zombies among `members` that were re-parented to this process (it is a
 * child subreaper once a supervisor is open). A pid is waited on only while it still names the
 * member first seen (same start time), and never if it is in `exclude` (children Node reaps itself).
 * Returns how many members are still not reaped (alive, or a zombie of ours not yet collected).
 */
export function reapAdopted(members: Iterable<Stat>, exclude: ReadonlySet<number> = new Set()): number {
  let pending = 0;
  for (const m of members) {
    if (exclude.has(m.pid)) continue;
    const st = readStat(m.pid);
    if (st === null || st.startTime !== m.startTime) continue;
    if (st.ppid !== process.pid) continue;
    if (st.state !== 'Z') {
      pending++;
      continue;
    }
    const r = libc.waitpidNoHang(m.pid);
    if (r.value !== m.pid && r.errno !== libc.ECHILD) pending++;
  }
  return pending;
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false | null, timeoutMs = 10_000, stepMs = 5): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(stepMs);
  }
}
