// Benchmark — sandbox: `ls` through the whole effect pipeline (EffectRuntime, all eight steps, a
// supervised tree, durable events) approved by class, so inside bubblewrap, vs the same `ls`
// approved explicitly (an --approve rule), so unsandboxed. Interleaved in the same run; the
// difference of the medians is what auto-approval-means-sandboxed costs per call.
import type { BenchContext } from './common.js';
import { progress } from './common.js';
import { openBenchPipeline, type BenchPipeline } from './pipeline.js';
import { summarize, type Summary } from './stats.js';

export interface SandboxBenchResult {
  calls: number;
  sandboxed: Summary;
  unsandboxed: Summary;
  /** sandboxed p50 − unsandboxed p50, ms. */
  addedP50: number;
  targetMs: number;
  pass: boolean;
}

const TARGET_MS = 15;

async function lsOnce(p: BenchPipeline, wantSandboxed: boolean): Promise<number> {
  const t0 = process.hrtime.bigint();
  const r = await p.runtime.execute(p.runtime.request('terminal', { command: 'ls' })!, p.ectx);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!r.ok || r.isError) throw new Error(`ls failed: ${JSON.stringify(r.views.model)}`);
  const boxed = (r.views.durable.audit as { sandbox?: { sandboxed?: boolean } }).sandbox?.sandboxed;
  if (boxed !== wantSandboxed) throw new Error(`ls ran ${boxed ? 'sandboxed' : 'unsandboxed'}, expected the opposite`);
  return ms;
}

export async function runSandbox(ctx: BenchContext): Promise<SandboxBenchResult> {
  void ctx;
  const n = ctx.options.quick ? 40 : 200;
  const agent = 'name: bench\ntoolsets: [terminal]\ngrants: [terminal.exec]\n';
  const byClass = await openBenchPipeline('sandbox-class', `${agent}approval:\n  auto_approve: [read-only]\n`);
  const explicit = await openBenchPipeline('sandbox-explicit', agent, { approve: ['terminal'] });
  try {
    for (let i = 0; i < 10; i++) {
      await lsOnce(byClass, true);
      await lsOnce(explicit, false);
    }
    progress(`sandbox: ${n} ls calls each, sandboxed (auto-approved by class) and unsandboxed (explicit), interleaved`);
    const boxed: number[] = [];
    const free: number[] = [];
    for (let i = 0; i < n; i++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      if (i % 2 === 0) {
        boxed.push(await lsOnce(byClass, true));
        free.push(await lsOnce(explicit, false));
      } else {
        free.push(await lsOnce(explicit, false));
        boxed.push(await lsOnce(byClass, true));
      }
    }
    const sandboxed = summarize(boxed);
    const unsandboxed = summarize(free);
    const addedP50 = sandboxed.median - unsandboxed.median;
    return { calls: n, sandboxed, unsandboxed, addedP50, targetMs: TARGET_MS, pass: addedP50 <= TARGET_MS };
  } finally {
    await byClass.close();
    await explicit.close();
  }
}
