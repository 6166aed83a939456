// Prototype measurement for issue 22 (drain): how a 256 MiB stdout is best read. Not part of
// `npm run bench`; run `node dist/bench/drain-readers.js`. Each contender spawns `head -c N
// /dev/zero` with posix_spawn on a real pipe (F_SETPIPE_SZ 1 MiB), redacts every chunk with the
// StreamRedactor and writes it with writeSync to a 0600 file; against `head | cat > file`.
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, read, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import * as libc from '../native-helpers/libc.js';
import { StreamRedactor } from '../src/redaction/stream-redactor.js';

const MIB = 1024 * 1024;
const BYTES = 256 * MIB;
const dir = join(tmpdir(), `drain-readers-${process.pid}`);

function spawnHead(pipeSize: number): { pid: number; fd: number; size: number } {
  const [r, w] = libc.pipeCloexec();
  const size = pipeSize > 0 ? libc.setPipeSize(r, pipeSize) : -1;
  const pid = libc.posixSpawnp({ file: 'head', argv: ['head', '-c', String(BYTES), '/dev/zero'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, cwd: '/', stdout: w, stderr: 2, stdin: 'ignore' });
  closeSync(w);
  return { pid, fd: r, size };
}

async function reap(pid: number): Promise<void> {
  for (;;) {
    const r = libc.waitpidNoHang(pid);
    if (r.value === pid || r.value < 0) return;
    await new Promise((res) => setTimeout(res, 1));
  }
}

async function measure(name: string, fn: (file: string) => Promise<void>): Promise<{ name: string; ms: number; rssMiB: number }> {
  const file = join(dir, `${name}.bin`);
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const t0 = process.hrtime.bigint();
  await fn(file);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  clearInterval(timer);
  peak = Math.max(peak, process.memoryUsage.rss());
  const size = fstatSync(openSync(file, 'r')).size;
  if (size !== BYTES) throw new Error(`${name}: ${size} bytes`);
  unlinkSync(file);
  return { name, ms, rssMiB: (peak - before) / MIB };
}

/** The redactor and the 0600 file every reader feeds: put() each chunk, close() at the end. */
function sink(file: string): { put(c: Buffer): void; close(): void } {
  const out = openSync(file, 'wx', 0o600);
  const r = new StreamRedactor(['a-20-byte-secret-val']);
  const write = (o: Buffer): void => {
    for (let off = 0; off < o.length; ) off += writeSync(out, o, off);
  };
  return {
    // The redactor may return a view of the chunk: written before the reader reuses it.
    put: (c) => write(r.push(c)),
    close: () => {
      write(r.flush());
      closeSync(out);
    },
  };
}

const catBaseline = (file: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const c = spawn('sh', ['-c', `head -c ${BYTES} /dev/zero | cat > '${file}'`], { stdio: 'ignore' });
    c.once('error', reject);
    c.once('close', () => resolve());
  });

/** Async fs.read of 1 MiB on the libuv threadpool, redact and writeSync on the main thread. */
async function mainLoop(file: string): Promise<void> {
  const { pid, fd } = spawnHead(MIB);
  const out = sink(file);
  const buf = Buffer.allocUnsafe(MIB);
  for (;;) {
    const n = await new Promise<number>((res, rej) => read(fd, buf, 0, MIB, null, (e, k) => (e ? rej(e) : res(k))));
    if (n === 0) break;
    out.put(buf.subarray(0, n));
  }
  out.close();
  closeSync(fd);
  await reap(pid);
}

/** A worker thread blocks in readSync(1 MiB) and transfers each chunk; the main thread redacts and writes. */
async function workerReader(file: string): Promise<void> {
  const { pid, fd } = spawnHead(MIB);
  const out = sink(file);
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const { readSync } = require('node:fs');
     for (;;) {
       const buf = Buffer.allocUnsafeSlow(${MIB});
       const n = readSync(workerData.fd, buf, 0, ${MIB}, null);
       if (n === 0) break;
       parentPort.postMessage(buf.buffer.slice ? { ab: buf.buffer, n } : null, [buf.buffer]);
     }
     parentPort.postMessage(null);`,
    { eval: true, workerData: { fd } },
  );
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: { ab: ArrayBuffer; n: number } | null) => {
      if (m === null) return resolve();
      out.put(Buffer.from(m.ab, 0, m.n));
    });
    worker.once('error', reject);
  });
  out.close();
  await worker.terminate();
  closeSync(fd);
  await reap(pid);
}

/** Node's own stream on the same pipe (64 KiB reads), redact and writeSync: today's shape. */
async function nodeStream(file: string): Promise<void> {
  const { Socket } = await import('node:net');
  const { pid, fd } = spawnHead(MIB);
  const out = sink(file);
  const s = new Socket({ fd, readable: true, writable: false });
  await new Promise<void>((resolve) => {
    s.on('data', (c: Buffer) => out.put(c));
    s.once('close', () => resolve());
  });
  out.close();
  await reap(pid);
}

/**
 * Node's Socket with `onread`: libuv reads straight into one reused 1 MiB buffer (no stream, no
 * allocation per read); the callback redacts and writes before the buffer is read into again.
 */
async function onreadReused(file: string): Promise<void> {
  const { Socket } = await import('node:net');
  const { pid, fd } = spawnHead(MIB);
  const out = sink(file);
  const buf = Buffer.allocUnsafe(MIB);
  let reads = 0;
  // `onread` is a Socket option @types/node leaves out of the constructor's type.
  const options = { fd, readable: true, writable: false, onread: { buffer: buf, callback: (n: number) => void (reads++, out.put(buf.subarray(0, n))) } };
  const s = new Socket(options as import('node:net').SocketConstructorOpts);
  await new Promise<void>((resolve) => s.once('close', () => resolve()));
  if (process.env.DRAIN_READS) process.stderr.write(`onread: ${reads} reads\n`);
  out.close();
  await reap(pid);
}

/**
 * Node's stream for readiness, direct reads for volume: when a read filled Node's 64 KiB buffer,
 * the main thread reads the (non-blocking) fd itself in 1 MiB reads until it is empty.
 */
async function hybrid(file: string): Promise<void> {
  const { Socket } = await import('node:net');
  const { pid, fd } = spawnHead(MIB);
  const out = sink(file);
  const put = out.put;
  const s = new Socket({ fd, readable: true, writable: false });
  await new Promise<void>((resolve) => {
    s.on('readable', () => {
      let big = false;
      for (let c = s.read() as Buffer | null; c !== null; c = s.read() as Buffer | null) {
        put(c);
        big = c.length >= 65536;
      }
      if (!big) return;
      for (;;) {
        const buf = Buffer.allocUnsafe(MIB);
        let n: number;
        try {
          n = readSync(fd, buf, 0, MIB, null);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'EAGAIN') break;
          throw e;
        }
        if (n === 0) break;
        put(buf.subarray(0, n));
      }
    });
    s.once('close', () => resolve());
  });
  out.close();
  await reap(pid);
}

async function main(): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  (await import('node:fs')).mkdirSync(dir, { recursive: true });
  const probe = spawnHead(MIB);
  process.stdout.write(`pipe capacity after F_SETPIPE_SZ(1 MiB): ${probe.size}\n`);
  readSync(probe.fd, Buffer.alloc(1)); // let it write, then drain and reap
  closeSync(probe.fd);
  await reap(probe.pid);
  const contenders: Array<[string, (f: string) => Promise<void>]> = [
    ['cat', catBaseline],
    ['node-stream-64k', nodeStream],
    ['main-loop-fs.read-1MiB', mainLoop],
    ['worker-readSync-1MiB', workerReader],
    ['stream+readSync-1MiB', hybrid],
    ['onread-reused-1MiB', onreadReused],
  ];
  const rows = new Map<string, Array<{ ms: number; rssMiB: number }>>();
  const trials = Number(process.argv[2] ?? 5);
  for (let t = 0; t < trials; t++) {
    for (const [name, fn] of contenders) {
      const m = await measure(name, fn);
      rows.set(name, [...(rows.get(name) ?? []), m]);
    }
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const catMs = med(rows.get('cat')!.map((x) => x.ms));
  for (const [name, ms] of rows) {
    const m = med(ms.map((x) => x.ms));
    process.stdout.write(
      `${name.padEnd(26)} median ${m.toFixed(0).padStart(5)} ms  ${(BYTES / MIB / (m / 1000)).toFixed(0).padStart(5)} MiB/s  vs cat ${(catMs / m).toFixed(3)}  RSS growth max ${Math.max(...ms.map((x) => x.rssMiB)).toFixed(1)} MiB\n`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}

await main();
