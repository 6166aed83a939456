// Benchmark — effect: a no-op builtin effect (tools_list, policy auto) through all eight steps
// with its durable event write, vs a bare async function call and a bare SQLite insert (one
// commit each, same WAL settings), measured in the same run.
import type { BenchContext } from './common.js';
import { openBenchPipeline } from './pipeline.js';
import { progress } from './common.js';
import { summarize, type Summary } from './stats.js';

export interface EffectResultBench {
  trials: number;
  effect: { perSecond: number; latency: Summary };
  /** The same effect with CONCURRENCY calls in flight over four sessions (group commit shares commits). */
  concurrent: { perSecond: number; latency: Summary; inFlight: number };
  bareCall: { perSecond: number; latency: Summary };
  sqliteInsert: { perSecond: number; latency: Summary };
  target: number;
  pass: boolean;
}

/** `inFlight` workers each run calls back to back until `n` calls were made in all. */
async function timeConcurrent(n: number, inFlight: number, fn: (i: number) => Promise<unknown>): Promise<{ perSecond: number; latency: Summary; inFlight: number }> {
  const lat: number[] = [];
  let next = 0;
  const t0 = process.hrtime.bigint();
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const a = process.hrtime.bigint();
      await fn(i);
      lat.push(Number(process.hrtime.bigint() - a) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const totalS = Number(process.hrtime.bigint() - t0) / 1e9;
  return { perSecond: n / totalS, latency: summarize(lat), inFlight };
}

async function timeLoop(n: number, fn: () => unknown | Promise<unknown>): Promise<{ perSecond: number; latency: Summary }> {
  const lat: number[] = [];
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const a = process.hrtime.bigint();
    await fn();
    lat.push(Number(process.hrtime.bigint() - a) / 1e6);
  }
  const totalS = Number(process.hrtime.bigint() - t0) / 1e9;
  return { perSecond: n / totalS, latency: summarize(lat) };
}

const CONCURRENCY = 16;

export async function runEffect(ctx: BenchContext): Promise<EffectResultBench> {
  const n = ctx.options.quick ? 1_000 : 5_000;
  const p = await openBenchPipeline('effect', 'name: bench\napproval:\n  default: auto\n');
  const { runtime, ectx, db } = p;
  try {
    const sessions = [ectx.sessionId, p.newSession(), p.newSession(), p.newSession()];
    db.exec('CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, payload TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO bench_rows (at, payload) VALUES (?, ?)');
    const noop = async (x: number): Promise<number> => x + 1;
    // Warm-up: JIT, prepared statements, the schema validator.
    for (let i = 0; i < 200; i++) {
      const r = await runtime.execute(runtime.request('tools_list', {})!, ectx);
      if (!r.ok) throw new Error(`the no-op effect failed: ${r.code} ${r.message}`);
    }
    progress(`effect: ${n} no-op effects, ${n} bare calls, ${n} bare inserts`);
    const effect = await timeLoop(n, async () => {
      const r = await runtime.execute(runtime.request('tools_list', {})!, ectx);
      if (!r.ok) throw new Error(r.message);
    });
    const concurrent = await timeConcurrent(n, CONCURRENCY, async (i) => {
      const r = await runtime.execute(runtime.request('tools_list', {})!, { principal: 'bench', sessionId: sessions[i % sessions.length]! });
      if (!r.ok) throw new Error(r.message);
    });
    const bareCall = await timeLoop(n, () => noop(1));
    const sqliteInsert = await timeLoop(n, () => insert.run(Date.now(), '{"k":"v"}'));
    const target = 5_000;
    return { trials: n, effect, concurrent, bareCall, sqliteInsert, target, pass: concurrent.perSecond >= target };
  } finally {
    await p.close();
  }
}
