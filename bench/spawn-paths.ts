// `node dist/bench/spawn-paths.js [n] [ballastMiB]`: what one start of a child costs the supervisor's
// event loop (the main thread's blocked time), for the ways a start could be made (decision 58):
//   node-spawn     child_process.spawn() from this (large) process: libuv forks it and waits for the exec
//   posix-spawn    glibc posix_spawnp (clone(CLONE_VM|CLONE_VFORK)) through ffi-rs on the main thread
//   posix-thread   the same call run on a thread of its own (ffi-rs runInNewThread): the loop only submits
//   spawner        a request to a small pre-started Node process that calls spawn() itself (IPC both ways)
// The process first grows to the supervisor's size under load (ballast, default 100 MiB touched),
// and the kinds alternate call by call so each sees the same machine. Every child is `/bin/sh -c 'exit 0'`
// in a new session; the parent reaps what it spawned. Prints medians and p99 of blocked time and
// of start-to-exit latency.
import { spawn, fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { loadFfi, openLibrary } from '../native-helpers/ffi.js';
import { cStringArray, waitpidNoHang } from '../native-helpers/libc.js';

if (process.argv[2] === '--spawner') {
  // The pre-started spawner: small (no store, no catalog), forks cheaply.
  process.on('message', (m: { id: number }) => {
    const c = spawn('/bin/sh', ['-c', 'exit 0'], { detached: true, stdio: 'ignore' });
    c.once('exit', () => process.send!({ id: m.id, exited: true }));
    process.send!({ id: m.id, pid: c.pid });
  });
} else {
  await main();
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 100);
  const ballast = Buffer.alloc(Number(process.argv[3] ?? 100) * 1048576, 1);
  const ffi = loadFfi('bench/spawn-paths');
  openLibrary('bench/spawn-paths', 'libc', '');
  const { DataType } = ffi;
  const call = (funcName: string, paramsType: unknown[], paramsValue: unknown[], thread = false) =>
    ffi.load({ library: 'libc', funcName, retType: DataType.I32, paramsType, paramsValue, runInNewThread: thread } as never) as unknown;
  const POSIX_SPAWN_SETSID = 0x80;
  const attr = Buffer.alloc(512);
  call('posix_spawnattr_init', [DataType.U8Array], [attr]);
  call('posix_spawnattr_setflags', [DataType.U8Array, DataType.I32], [attr, POSIX_SPAWN_SETSID]);
  // argv and envp once, in malloc'd memory (see cStringArray), passed as plain addresses.
  const cStrings = cStringArray;
  const envp = cStrings(Object.entries({ PATH: process.env.PATH ?? '/usr/bin:/bin' }).map(([k, v]) => `${k}=${v}`));
  const argv = cStrings(['/bin/sh', '-c', 'exit 0']);

  const reapPoll = (pid: number, t0: number): Promise<number> =>
    new Promise((resolve) => {
      const tick = (): void => {
        const r = waitpidNoHang(pid);
        if (r.value === pid) resolve(performance.now() - t0);
        else setTimeout(tick, 1);
      };
      tick();
    });

  const spawner = fork(fileURLToPath(import.meta.url), ['--spawner'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pending = new Map<number, { t0: number; resolve: (ms: number) => void }>();
  spawner.on('message', (m: { id: number; exited?: boolean }) => {
    if (m.exited) {
      const p = pending.get(m.id)!;
      pending.delete(m.id);
      p.resolve(performance.now() - p.t0);
    }
  });
  await new Promise((r) => setTimeout(r, 300));
  let reqId = 0;

  const kinds = {
    'node-spawn': async () => {
      const t0 = performance.now();
      const c = spawn('/bin/sh', ['-c', 'exit 0'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const blocked = performance.now() - t0;
      c.stdout!.resume();
      c.stderr!.resume();
      const total = await new Promise<number>((r) => c.once('exit', () => r(performance.now() - t0)));
      return { blocked, total };
    },
    'posix-spawn': async () => {
      const t0 = performance.now();
      const pidBuf = Buffer.alloc(4);
      const rc = call('posix_spawnp', [DataType.U8Array, DataType.String, DataType.I64, DataType.U8Array, DataType.I64, DataType.I64], [pidBuf, '/bin/sh', 0, attr, argv, envp]) as number;
      const blocked = performance.now() - t0;
      if (rc !== 0) throw new Error(`posix_spawnp: ${rc}`);
      return { blocked, total: await reapPoll(pidBuf.readInt32LE(0), t0) };
    },
    'posix-thread': async () => {
      const t0 = performance.now();
      const pidBuf = Buffer.alloc(4);
      const p = call('posix_spawnp', [DataType.U8Array, DataType.String, DataType.I64, DataType.U8Array, DataType.I64, DataType.I64], [pidBuf, '/bin/sh', 0, attr, argv, envp], true) as Promise<number>;
      const blocked = performance.now() - t0;
      const rc = await p;
      if (rc !== 0) throw new Error(`posix_spawnp (thread): ${rc}`);
      const pid = pidBuf.readInt32LE(0);
      if (!(pid > 0)) throw new Error('posix_spawnp on a thread: the pid did not come back into the buffer');
      return { blocked, total: await reapPoll(pid, t0) };
    },
    spawner: async () => {
      const t0 = performance.now();
      const id = ++reqId;
      const done = new Promise<number>((resolve) => pending.set(id, { t0, resolve }));
      spawner.send({ id });
      const blocked = performance.now() - t0;
      return { blocked, total: await done };
    },
  };
  const out: Record<string, { blocked: number[]; total: number[]; error?: string }> = {};
  for (const k of Object.keys(kinds)) out[k] = { blocked: [], total: [] };
  for (let i = 0; i < n; i++) {
    for (const [k, fn] of Object.entries(kinds)) {
      if (out[k]!.error) continue;
      try {
        const r = await fn();
        out[k]!.blocked.push(r.blocked);
        out[k]!.total.push(r.total);
      } catch (err) {
        out[k]!.error = (err as Error).message;
      }
    }
  }
  spawner.kill();
  const q = (a: number[], p: number) => {
    const s = [...a].sort((x, y) => x - y);
    return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))]! : NaN;
  };
  console.log(`spawn paths: n=${n} each, RSS ${(process.memoryUsage().rss / 1048576).toFixed(0)} MiB (ballast ${ballast.length / 1048576} MiB), load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  console.log('kind           blocked median   p99      start→exit median   p99');
  for (const [k, v] of Object.entries(out)) {
    if (v.error) console.log(`${k.padEnd(14)} error: ${v.error}`);
    else console.log(`${k.padEnd(14)} ${q(v.blocked, 0.5).toFixed(3).padStart(8)} ms ${q(v.blocked, 0.99).toFixed(3).padStart(8)} ms   ${q(v.total, 0.5).toFixed(2).padStart(8)} ms ${q(v.total, 0.99).toFixed(2).padStart(8)} ms`);
  }
}
