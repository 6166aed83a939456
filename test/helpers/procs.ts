// Test helpers: find processes by their SUPERVISOR_SPAWN_ID marker, wait for conditions, and make
// sure nothing a test started outlives it.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

export const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));
export const fixture = (name: string): string => join(FIXTURES, name);
export const CLI = fileURLToPath(new URL('../../../bin/supervisor.js', import.meta.url));

function stateOf(pid: number): string | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return s.slice(s.lastIndexOf(')') + 2).split(' ')[0] ?? null;
  } catch {
    return null;
  }
}

/** Live (non-zombie) processes whose environment carries SUPERVISOR_SPAWN_ID=<id>, or any id with `prefix`. */
export function markedPids(spawnId: string, opts: { prefix?: boolean } = {}): number[] {
  const out: number[] = [];
  const needle = `SUPERVISOR_SPAWN_ID=${spawnId}`;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue;
    }
    const hit = env.split('\0').some((kv) => (opts.prefix ? kv.startsWith(needle) : kv === needle));
    if (hit && stateOf(pid) !== 'Z') out.push(pid);
  }
  return out;
}

/** True when `ancestor` is on `pid`'s chain of parents (as the kernel has it now: orphans count under their subreaper). */
export function descendsFrom(pid: number, ancestor: number): boolean {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${p}/stat`, 'latin1');
    } catch {
      return false;
    }
    p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (p === ancestor) return true;
  }
  return false;
}

export function alive(pid: number): boolean {
  const s = stateOf(pid);
  return s !== null && s !== 'Z' && s !== 'X';
}

export async function waitFor<T>(what: string, fn: () => T | undefined | false | null, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/**
 * waitFor for an asynchronous check (an in-process `runMain` of an operator command), every
 * `intervalMs`: the in-process check costs milliseconds where a CLI start cost a node start, so it
 * is not run every 20 ms.
 */
export async function waitForAsync<T>(what: string, fn: () => Promise<T | undefined | false | null>, timeoutMs = 10_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Pids of processes whose command line contains `text` and that are descendants-by-marker of nothing: for leak checks. */
export function pidsWithCmdline(text: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, 'latin1').replaceAll('\0', ' ');
      if (cmd.includes(text) && alive(Number(name))) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

/** Kills (SIGKILL, by pid) every live process carrying one of these spawn ids; returns how many there were. */
export function killMarked(spawnIds: Iterable<string>): number {
  let n = 0;
  for (const id of spawnIds) {
    for (const pid of markedPids(id)) {
      n++;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  return n;
}

export function tempDir(prefix = 'supervisor-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Temp dirs made during a suite, removed together at its end: `dir(prefix)` makes one. */
export function tempDirs(): { dir(prefix?: string): string; removeAll(): void } {
  const made: { remove(): void }[] = [];
  return {
    dir(prefix) {
      const d = tempDir(prefix);
      made.push(d);
      return d.path;
    },
    removeAll: () => void made.splice(0).forEach((d) => d.remove()),
  };
}

/** Every regular file under `root` (none if it does not exist): for scanning a state dir's store and artifacts. */
export function filesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}
