// Benchmark 1 — spawn: ProcessSupervisor.spawnTree('true') vs a raw child_process.spawn('true').
// (a) spawn path: the synchronous call until the handle is ready (spawnTree: pid known, start
//     marker read, record persisted; raw: spawn() returned).
// (b) full lifecycle: until tree.done resolves vs until the raw child's 'close'.
// Contenders are interleaved trial by trial (cgroup supervisor, raw, no-cgroup supervisor, ...).
import { spawn } from 'node:child_process';
import type { ProcessSupervisor } from '../src/process/supervisor.js';
import { BenchContext, progress, type Config } from './common.js';
import { msSince, pairedRatioMedian, roundSummary, round, summarize, type Summary } from './stats.js';
import { allowlistedEnv } from '../src/process/child-env.js';

const RAW_ENV = { ...allowlistedEnv(), SUPERVISOR_SPAWN_ID: 'bench-raw-spawn' };

export const SPAWN_PATH_TARGET = 1.5;

interface Sample {
  spawnPath: number;
  lifecycle: number;
}

export interface SpawnConfigResult {
  config: Config;
  /** supervisor.capabilities.cgroup: whether each tree got its own cgroup (and the sh entry wrapper). */
  cgroupUsed: boolean;
  capabilities: { subreaper: boolean; pidfd: boolean; cgroup: boolean };
  spawnPath: { supervisor: Summary; raw: Summary; ratio: number; pairedRatio: number; target: number; pass: boolean };
  lifecycle: { supervisor: Summary; raw: Summary; ratio: number; pairedRatio: number };
  failures: string[];
}

export interface SpawnResult {
  trials: number;
  warmup: number;
  configs: SpawnConfigResult[];
  pass: boolean;
}

async function supervisedTrial(sup: ProcessSupervisor, ctx: BenchContext, failures: string[]): Promise<Sample> {
  const t0 = process.hrtime.bigint();
  const tree = sup.spawnTree({ command: 'true', artifacts: true });
  const spawnPath = msSince(t0);
  ctx.markers.add(tree.spawnId);
  const outcome = await tree.done;
  const lifecycle = msSince(t0);
  if (outcome.reason !== 'exited' || outcome.exitCode !== 0 || outcome.killed.survivors !== 0) {
    failures.push(`${tree.spawnId}: reason=${outcome.reason} exit=${outcome.exitCode} survivors=${outcome.killed.survivors} ${outcome.error?.message ?? ''}`);
  }
  return { spawnPath, lifecycle };
}

async function rawTrial(failures: string[]): Promise<Sample> {
  const t0 = process.hrtime.bigint();
  // Same environment the supervisor gives its child (allowlist + marker), so the ratio is like for like.
  const child = spawn('true', [], { stdio: ['ignore', 'pipe', 'pipe'], env: RAW_ENV });
  const spawnPath = msSince(t0);
  // Read the pipes as the supervisor does (it attaches 'data' listeners), so both sides drain.
  child.stdout!.resume();
  child.stderr!.resume();
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c) => resolve(c));
  });
  const lifecycle = msSince(t0);
  if (code !== 0) failures.push(`raw true exited ${code}`);
  return { spawnPath, lifecycle };
}

export async function runSpawn(ctx: BenchContext): Promise<SpawnResult> {
  const trials = ctx.options.quick ? 30 : 200;
  const warmup = ctx.options.quick ? 5 : 25;
  const configs: Config[] = ['cgroup', 'no-cgroup'];
  const sups = configs.map((c) => ctx.openSupervisor(c, 'spawn'));
  const sup: Sample[][] = configs.map(() => []);
  const raw: Sample[] = [];
  const failures: string[][] = configs.map(() => []);
  const rawFailures: string[] = [];
  progress(`spawn: ${warmup} warm-up + ${trials} measured rounds (cgroup supervisor, raw, no-cgroup supervisor interleaved)`);
  try {
    for (let i = 0; i < warmup + trials; i++) {
      const keep = i >= warmup;
      const a = await supervisedTrial(sups[0]!, ctx, failures[0]!);
      const b = await rawTrial(rawFailures);
      const c = await supervisedTrial(sups[1]!, ctx, failures[1]!);
      if (keep) {
        sup[0]!.push(a);
        raw.push(b);
        sup[1]!.push(c);
      }
    }
  } finally {
    for (const s of sups) await ctx.closeSupervisor(s);
  }

  const rawSpawn = raw.map((s) => s.spawnPath);
  const rawLife = raw.map((s) => s.lifecycle);
  const results: SpawnConfigResult[] = configs.map((config, k) => {
    const sp = sup[k]!.map((s) => s.spawnPath);
    const lc = sup[k]!.map((s) => s.lifecycle);
    const spS = summarize(sp);
    const rawSpS = summarize(rawSpawn);
    const lcS = summarize(lc);
    const rawLcS = summarize(rawLife);
    const ratio = spS.median / rawSpS.median;
    return {
      config,
      cgroupUsed: sups[k]!.capabilities.cgroup,
      capabilities: { ...sups[k]!.capabilities },
      spawnPath: {
        supervisor: roundSummary(spS),
        raw: roundSummary(rawSpS),
        ratio: round(ratio),
        pairedRatio: round(pairedRatioMedian(sp, rawSpawn)),
        target: SPAWN_PATH_TARGET,
        pass: ratio <= SPAWN_PATH_TARGET && failures[k]!.length === 0,
      },
      lifecycle: {
        supervisor: roundSummary(lcS),
        raw: roundSummary(rawLcS),
        ratio: round(lcS.median / rawLcS.median),
        pairedRatio: round(pairedRatioMedian(lc, rawLife)),
      },
      failures: [...failures[k]!, ...rawFailures].slice(0, 10),
    };
  });
  return { trials, warmup, configs: results, pass: results.every((r) => r.spawnPath.pass) };
}
