// Measurement for decision 117, not part of `npm run bench`: `node dist/bench/drain-levers.js
// [trials]`. The drain bench's supervisor trial (256 MiB of `head -c N /dev/zero` through drain +
// redactor + artifact, cgroup on) with one lever of the PipeReader taken out at a time, against
// `head | cat > file`, contenders interleaved trial by trial in one process:
//   reader     the PipeReader as shipped;
//   stream     Node's stream (no pipe handed to a PipeReader: the drain before decision 117);
//   no-settle  a short read from a fast pipe is followed by the next read at once (no 1 ms wait);
//   yield      instead of the 1 ms wait, one turn of the event loop (setImmediate);
//   copy       one reused read buffer, each read copied into a fresh one for the capture (no lending).
// The variants replace methods on the prototypes: measurement only, never how the code runs.
import { spawn } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LiveTree } from '../src/process/supervised-tree.js';
import { copyOf, PipeReader, type ChunkSink } from '../src/process/pipe-reader.js';
import { BenchContext, collectGarbage } from './common.js';
import { DRAIN_BYTES, SECRET } from './drain.js';

const MIB = 1024 * 1024;
type Variant = 'reader' | 'stream' | 'no-settle' | 'yield' | 'copy';

/** The private members a variant touches. */
interface ReaderInternals {
  armed: Buffer;
  size: number;
  held: boolean;
  sink: ChunkSink;
  take(n: number): boolean;
  settle(): void;
  wake(): void;
  settling: unknown;
}
interface TreeInternals {
  drainedPipes(): Array<'stdout' | 'stderr'>;
}

const reader = PipeReader.prototype as unknown as ReaderInternals;
const tree = LiveTree.prototype as unknown as TreeInternals;
const shipped = { take: reader.take, settle: reader.settle, drainedPipes: tree.drainedPipes };

function use(v: Variant): void {
  reader.take = shipped.take;
  reader.settle = shipped.settle;
  tree.drainedPipes = v === 'stream' ? () => [] : shipped.drainedPipes;
  if (v === 'no-settle') {
    reader.settle = function (this: ReaderInternals) {
      queueMicrotask(() => this.wake());
    };
  }
  if (v === 'yield') {
    reader.settle = function (this: ReaderInternals) {
      this.settling = setImmediate(() => {
        this.settling = undefined;
        this.wake();
      });
    };
  }
  if (v === 'copy') {
    reader.take = function (this: ReaderInternals, n: number) {
      const buf = this.armed;
      const more = this.sink(copyOf(buf.subarray(0, n)), undefined);
      if (n === buf.length && this.size < MIB) {
        this.size = MIB;
        this.armed = Buffer.allocUnsafe(MIB);
      }
      if (!more) {
        this.held = true;
        return false;
      }
      if (n < 32 * 1024 && this.size === MIB) {
        this.settle();
        return false;
      }
      return true;
    };
  }
}

async function timed(fn: () => Promise<void>): Promise<{ ms: number; rssMiB: number }> {
  collectGarbage();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  const t0 = process.hrtime.bigint();
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  return { ms, rssMiB: (Math.max(peak, process.memoryUsage.rss()) - before) / MIB };
}

async function main(): Promise<void> {
  const trials = Number(process.argv[2] ?? 7);
  const ctx = new BenchContext({ quick: false, json: false });
  const sup = ctx.openSupervisor('cgroup', 'levers');
  const supervised = async (v: Variant): Promise<void> => {
    use(v);
    const t = sup.spawnTree({ command: 'head', args: ['-c', String(DRAIN_BYTES), '/dev/zero'], redact: [SECRET], artifacts: true });
    ctx.markers.add(t.spawnId);
    const o = await t.done;
    const size = statSync(join(o.artifacts!.root, o.artifacts!.stdout)).size;
    rmSync(o.artifacts!.root, { recursive: true, force: true });
    if (o.reason !== 'exited' || size !== DRAIN_BYTES) throw new Error(`${v}: ${o.reason}, artifact ${size} bytes`);
  };
  const cat = async (): Promise<void> => {
    const file = join(ctx.root, 'cat.bin');
    await new Promise((resolve) => spawn('sh', ['-c', `head -c ${DRAIN_BYTES} /dev/zero | cat > '${file}'`], { stdio: 'ignore' }).once('close', resolve));
    rmSync(file);
  };
  const names = ['cat', 'reader', 'stream', 'no-settle', 'yield', 'copy'] as const;
  const rows = new Map<string, Array<{ ms: number; rssMiB: number }>>(names.map((n) => [n, []]));
  try {
    for (const v of ['reader', 'stream', 'no-settle', 'yield', 'copy'] as const) await supervised(v); // warm-up
    for (let i = 0; i < trials; i++) {
      for (let k = 0; k < names.length; k++) {
        const n = names[(i + k) % names.length]!;
        rows.get(n)!.push(await timed(() => (n === 'cat' ? cat() : supervised(n))));
      }
    }
  } finally {
    use('reader');
    await ctx.closeSupervisor(sup);
    await ctx.dispose();
  }
  const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const catMs = med(rows.get('cat')!.map((x) => x.ms));
  for (const [n, xs] of rows) {
    const m = med(xs.map((x) => x.ms));
    process.stdout.write(
      `${n.padEnd(10)} median ${m.toFixed(0).padStart(5)} ms  vs cat ${(catMs / m).toFixed(3)}  RSS growth max ${Math.max(...xs.map((x) => x.rssMiB)).toFixed(1)} MiB  [${xs.map((x) => x.ms.toFixed(0)).join(' ')}]\n`,
    );
  }
}

await main();
