// Benchmark — schema: the event-loop lag while a hostile input schema (`pattern: ^(a+)+$`) is
// validated through the real path (an authored tool's call through EffectRuntime.execute, refused
// at step 1), with inputs of 28 and 40 'a's plus '!'. Baseline in the same run: the old engine
// (ajv with V8's backtracking RegExp, as EffectRuntime used it before decision 56), capped at 24
// characters because its time doubles per character (28 took 10.7 s on main).
import { createRequire } from 'node:module';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildCatalog } from '../src/catalog/index.js';
import { loadCore } from '../src/core/index.js';
import { EffectRuntime } from '../src/effects/index.js';
import { ProcessSupervisor } from '../src/process/index.js';
import { ApprovalBroker, NonInteractiveApprover } from '../src/policy/index.js';
import { openStore, SessionStore } from '../src/store/index.js';
import type { BenchContext } from './common.js';
import { progress } from './common.js';

export const SCHEMA_LAG_TARGET_MS = 50;
const PATTERN = '^(a+)+$';

export interface SchemaRow {
  engine: 'RE2 (re2js), real path' | 'V8 RegExp (old engine)' | 'idle (no calls, same run)';
  chars: number;
  calls: number;
  /** Longest single validation (or call), ms. */
  maxCallMs: number;
  /** Largest event-loop delay seen while the calls ran (monitorEventLoopDelay, 1 ms resolution), ms. */
  maxLagMs: number;
  /** Its 99th percentile, ms (the max also holds the OS scheduler's pauses on a loaded machine). */
  p99LagMs: number;
}

export interface SchemaResultBench {
  rows: SchemaRow[];
  /** The old engine's time at 28 and 40 characters, extrapolated from 24 (doubling per character). */
  oldAt28Ms: number;
  oldAt40Ms: number;
  target: number;
  pass: boolean;
}

const schema = { type: 'object', properties: { q: { type: 'string', pattern: PATTERN } }, required: ['q'] };
const hostile = (n: number): string => `${'a'.repeat(n)}!`;

/** Runs `call` `times` times, one per turn of the event loop, under a 1 ms delay monitor. */
async function underMonitor(times: number, call: () => Promise<unknown> | unknown): Promise<{ maxCallMs: number; maxLagMs: number; p99LagMs: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let maxCallMs = 0;
  for (let i = 0; i < times; i++) {
    await new Promise((r) => setTimeout(r, 2));
    const t0 = performance.now();
    await call();
    maxCallMs = Math.max(maxCallMs, performance.now() - t0);
  }
  await new Promise((r) => setTimeout(r, 5));
  h.disable();
  return { maxCallMs, maxLagMs: h.max / 1e6, p99LagMs: h.percentile(99) / 1e6 };
}

export async function runSchema(ctx: BenchContext): Promise<SchemaResultBench> {
  const rows: SchemaRow[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-schema-'));
  const coreDir = join(dir, 'core');
  const toolDir = join(coreDir, 'agent', 'tools', 'redos');
  mkdirSync(toolDir, { recursive: true });
  writeFileSync(join(coreDir, 'agent.yaml'), 'name: bench\ngrants: ["tool.call:redos"]\n');
  writeFileSync(join(toolDir, 'tool.yaml'), `name: redos\ndescription: hostile pattern\ninput_schema: ${JSON.stringify(schema)}\ncapability: tool.call:redos\n`);
  writeFileSync(join(toolDir, 'index.mjs'), 'export async function handler(input) { return input; }\n');
  const sup = ProcessSupervisor.open({ stateDir: join(dir, 'state') });
  const db = openStore(join(dir, 'state', 'supervisor.db'));
  try {
    const core = await loadCore(coreDir);
    const catalog = buildCatalog({ core, principal: 'bench' });
    const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new NonInteractiveApprover() }), supervisor: sup, db });
    const ectx = { principal: 'bench', sessionId: new SessionStore(db).createSession({ principal: 'bench' }, { coreDir, coreRevision: core.revision, runtime: 'local' }).id };
    const calls = ctx.options.quick ? 20 : 100;
    // Warm-up, unmeasured: the first calls compile the validator's and the engine's code paths (JIT).
    for (const n of [28, 40, 10_000]) for (let i = 0; i < 20; i++) await runtime.execute(runtime.request('redos', { q: hostile(n) })!, ectx);
    // The machine's own noise: the same monitored loop with nothing to do (a loaded host shows here).
    rows.push({ engine: 'idle (no calls, same run)', chars: 0, calls, ...(await underMonitor(calls, () => undefined)) });
    for (const n of [28, 40, 10_000]) {
      progress(`schema: RE2, ${n} chars + '!', ${calls} calls through EffectRuntime.execute`);
      const r = await underMonitor(calls, async () => {
        const out = await runtime.execute(runtime.request('redos', { q: hostile(n) })!, ectx);
        if (out.ok || out.code !== 'ARGS_INVALID') throw new Error(`schema bench: expected ARGS_INVALID, got ${JSON.stringify(out)}`);
      });
      rows.push({ engine: 'RE2 (re2js), real path', chars: n, calls, ...r });
    }
  } finally {
    db.close();
    await sup.close();
    rmSync(dir, { recursive: true, force: true });
  }
  // The old engine: ajv's default (new RegExp(pattern, 'u')), one call per length.
  const Ajv = createRequire(import.meta.url)('ajv').default as new (o: object) => { compile(s: unknown): (d: unknown) => boolean };
  const old = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const oldLengths = ctx.options.quick ? [18, 20] : [20, 22, 24];
  for (const n of oldLengths) {
    progress(`schema: old engine, ${n} chars + '!' (one call; blocks the loop)`);
    const r = await underMonitor(1, () => old({ q: hostile(n) }));
    rows.push({ engine: 'V8 RegExp (old engine)', chars: n, calls: 1, ...r });
  }
  const last = rows[rows.length - 1]!;
  const oldAt28Ms = last.maxCallMs * 2 ** (28 - last.chars);
  const oldAt40Ms = last.maxCallMs * 2 ** (40 - last.chars);
  // The verdict is on what validation can cause: the longest call and the lag's p99 (the max also
  // holds the scheduler's pauses of a shared machine; the idle row shows them).
  const pass = rows.filter((r) => r.engine.startsWith('RE2')).every((r) => r.maxCallMs < SCHEMA_LAG_TARGET_MS && r.p99LagMs < SCHEMA_LAG_TARGET_MS);
  return { rows, oldAt28Ms, oldAt40Ms, target: SCHEMA_LAG_TARGET_MS, pass };
}
