// Benchmark — authored: a no-op authored tool (test/fixtures/tools/noop) through the whole
// EffectRuntime pipeline on a warm process-tier pool, next to a bare framed echo over the same
// kind of pipe (spawnTree's data pipe) to a bare `node` child: the floor of process isolation.
// The thread tier's no-op (noop_thread, trusted by the fixture core) the same two ways. For the
// decomposition: each adapter alone (no runtime steps, no audit commit) and the no-op builtin
// tools_list through the same runtime (its steps and audit commit, no child). Interleaved.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authoredToolHosts, authoredAdapter } from '../src/adapters/authored/index.js';
import { buildCatalog } from '../src/catalog/index.js';
import { loadCore } from '../src/core/index.js';
import { EffectRuntime } from '../src/effects/index.js';
import { encodeFrame, FrameDecoder } from '../src/ipc/index.js';
import { ApprovalBroker, NonInteractiveApprover } from '../src/policy/index.js';
import { openStore, SessionStore } from '../src/store/index.js';
import type { BenchContext } from './common.js';
import { progress } from './common.js';
import { summarize, type Summary } from './stats.js';

const TOOLS_CORE = fileURLToPath(new URL('../../test/fixtures/tools/', import.meta.url));

// The floor's child: decode each frame, parse it, send it back framed. No permission model, no schema.
const ECHO_CHILD = `
const net = require('node:net');
const s = new net.Socket({ fd: Number(process.env.SUPERVISOR_CHANNEL_FD), readable: true, writable: true });
let buf = Buffer.alloc(0);
s.on('data', (c) => {
  buf = buf.length ? Buffer.concat([buf, c]) : c;
  while (buf.length >= 4) {
    const n = buf.readUInt32BE(0);
    if (buf.length < 4 + n) break;
    const msg = JSON.parse(buf.subarray(4, 4 + n).toString('utf8'));
    buf = buf.subarray(4 + n);
    const out = Buffer.from(JSON.stringify({ id: msg.id, value: { ok: true } }));
    const h = Buffer.alloc(4);
    h.writeUInt32BE(out.length, 0);
    s.write(Buffer.concat([h, out]));
  }
});
`;

export interface Contender {
  perSecond: number;
  latency: Summary;
}

export interface AuthoredResultBench {
  calls: number;
  rounds: number;
  /** The local turn loop's mode: audit commit deferred to the next group commit. */
  pipeline: Contender;
  /** serve's mode: the audit commit before execute() returns. */
  pipelineNow: Contender;
  /** effect.completed records in the store after the run (every runtime call's). */
  recorded: number;
  adapter: Contender;
  thread: Contender;
  threadAdapter: Contender;
  builtin: Contender;
  floor: Contender;
  /** The floor's call after ~0.15 ms of supervisor work (only the call timed; info). */
  floorPaused: Contender;
  ratio: number;
  /** The runtime's own steps and audit commit (builtin no-op p50) over the floor p50. */
  stepsRatio: number;
  targetP50Ms: number;
  targetRatio: number;
  threadTargetP50Ms: number;
  threadPass: boolean;
  workersStarted: number;
  pass: boolean;
}

export async function runAuthored(ctx: BenchContext): Promise<AuthoredResultBench> {
  const rounds = ctx.options.quick ? 4 : 20;
  const perRound = ctx.options.quick ? 250 : 500;
  const sup = ctx.openSupervisor('cgroup', 'authored');
  const db = openStore(join(sup.stateDir, 'supervisor.db'));
  const core = await loadCore(TOOLS_CORE);
  const hosts = authoredToolHosts(sup, core);
  const catalog = buildCatalog({ core, principal: 'bench' });
  const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new NonInteractiveApprover() }), supervisor: sup, db });
  const session = new SessionStore(db).createSession({ principal: 'bench' }, { coreDir: core.dir, coreRevision: core.revision, runtime: 'local' });
  const ectx = { principal: 'bench', sessionId: session.id };
  const echo = sup.spawnTree({ command: process.execPath, args: ['-e', ECHO_CHILD], channel: true, artifacts: false });
  ctx.markers.add(echo.spawnId);
  try {
    const pipe = echo.channel!;
    const decoder = new FrameDecoder();
    let waiting: ((v: unknown) => void) | null = null;
    pipe.on('data', (c: Buffer) => {
      for (const m of decoder.push(c)) waiting?.(m);
    });
    let seq = 0;
    const floorCall = (): Promise<unknown> =>
      new Promise((resolve) => {
        waiting = resolve;
        pipe.write(encodeFrame({ type: 'call', id: `c${++seq}`, input: {} }));
      });
    // The same echo after the supervisor worked ~0.15 ms (what the pipeline does between two calls
    // of a host): only the call is timed. Shows what an idle stretch costs the next wake-up here.
    const PAUSE_NS = 150_000n;
    // The local turn loop's mode: the audit commit joins the next group commit (durable() before
    // anything reaches the model); serve's mode commits before execute() returns.
    const deferred = { ...ectx, commit: 'deferred' as const };
    let runtimeCalls = 0;
    const viaRuntime = (tool: string, c: typeof ectx = deferred) => async (): Promise<void> => {
      runtimeCalls++;
      const r = await runtime.execute(runtime.request(tool, {})!, c);
      if (!r.ok || r.isError) throw new Error(`the no-op authored effect ${tool} failed: ${JSON.stringify(r)}`);
    };
    const pipelineCall = viaRuntime('noop');
    const pipelineNowCall = viaRuntime('noop', ectx);
    const threadCall = viaRuntime('noop_thread');
    const env = { workspace: core.workspace, core, supervisor: sup, secretTargets: [], listing: [], network: { hosts: [], cidrs: [] }, owner: { principal: 'bench', sessionId: 'se_bench' } };
    const signal = new AbortController().signal;
    const viaAdapter = (tool: string) => {
      const entry = { name: tool, adapterKey: `authored:${tool}`, capability: `tool.call:${tool}` };
      return async (): Promise<void> => {
        authoredAdapter.preflight(entry, {}, env);
        const out = await authoredAdapter.invoke(entry, {}, { ...env, signal, deadlineMs: 10_000, redact: [] });
        if (out.isError) throw new Error(out.text);
      };
    };
    const adapterCall = viaAdapter('noop');
    const threadAdapterCall = viaAdapter('noop_thread');
    const builtinCall = async (): Promise<void> => {
      runtimeCalls++;
      const r = await runtime.execute(runtime.request('tools_list', {})!, deferred);
      if (!r.ok) throw new Error(r.message);
    };
    // Warm-up: the pool's workers, the tool module, JIT, prepared statements.
    for (let i = 0; i < 300; i++) {
      await pipelineCall();
      await pipelineNowCall();
      await adapterCall();
      await threadCall();
      await threadAdapterCall();
      await builtinCall();
      await floorCall();
    }
    for (const t of sup.liveTrees()) ctx.markers.add(t.spawnId);
    progress(`authored: ${rounds} rounds x ${perRound} calls of each contender, interleaved`);
    const lat = { pipeline: [] as number[], pipelineNow: [] as number[], adapter: [] as number[], thread: [] as number[], threadAdapter: [] as number[], builtin: [] as number[], floor: [] as number[], floorPaused: [] as number[] };
    const wall = { pipeline: 0, pipelineNow: 0, adapter: 0, thread: 0, threadAdapter: 0, builtin: 0, floor: 0, floorPaused: 0 };
    const time = async (name: keyof typeof lat, fn: () => Promise<unknown>, pause = false): Promise<void> => {
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) {
        if (pause) {
          const until = process.hrtime.bigint() + PAUSE_NS;
          while (process.hrtime.bigint() < until);
        }
        const a = process.hrtime.bigint();
        await fn();
        lat[name].push(Number(process.hrtime.bigint() - a) / 1e6);
      }
      wall[name] += Number(process.hrtime.bigint() - t0) / 1e9;
    };
    for (let r = 0; r < rounds; r++) {
      await time('floor', floorCall);
      await time('floorPaused', floorCall, true);
      await time('pipeline', pipelineCall);
      await time('pipelineNow', pipelineNowCall);
      await time('adapter', adapterCall);
      await time('thread', threadCall);
      await time('threadAdapter', threadAdapterCall);
      await time('builtin', builtinCall);
    }
    for (const t of sup.liveTrees()) ctx.markers.add(t.spawnId);
    // Every effect's record is in the store: deferral moved the commit, it did not drop one.
    await runtime.durable();
    const recorded = db.prepare("SELECT COUNT(*) FROM runtime_events WHERE session_id = ? AND kind = 'effect.completed'").pluck().get(session.id) as number;
    if (recorded !== runtimeCalls) throw new Error(`${runtimeCalls} effects ran but ${recorded} effect.completed records are in the store`);
    const n = rounds * perRound;
    const c = (k: keyof typeof lat): Contender => ({ perSecond: n / wall[k], latency: summarize(lat[k]) });
    const pipeline = c('pipeline');
    const floor = c('floor');
    const builtin = c('builtin');
    const thread = c('thread');
    const ratio = pipeline.latency.median / floor.latency.median;
    const targetP50Ms = 1;
    const targetRatio = 2;
    const threadTargetP50Ms = 0.3;
    const workersStarted = hosts.pools().reduce((s, p) => s + p.stats.started, 0);
    return {
      calls: n,
      rounds,
      pipeline,
      pipelineNow: c('pipelineNow'),
      recorded,
      adapter: c('adapter'),
      thread,
      threadAdapter: c('threadAdapter'),
      builtin,
      floor,
      floorPaused: c('floorPaused'),
      ratio,
      stepsRatio: builtin.latency.median / floor.latency.median,
      targetP50Ms,
      targetRatio,
      threadTargetP50Ms,
      threadPass: thread.latency.median < threadTargetP50Ms,
      workersStarted,
      pass: pipeline.latency.median < targetP50Ms && ratio <= targetRatio,
    };
  } finally {
    await hosts.close();
    await echo.stop();
    db.close();
    await ctx.closeSupervisor(sup);
  }
}
