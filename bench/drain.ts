// Benchmark 3 — drain: 256 MiB of stdout through the supervisor's drain + redactor + artifact vs
// the same producer piped by the shell into `cat > file`. Wall time from spawn to done / exit,
// throughput, and the supervisor process's RSS growth (sampled every 10 ms) during each run.
// A third, informational contender — "node floor": child_process.spawn of the same producer with a
// 'data' listener doing fs.writeSync to a file — shows what any single-threaded Node drain with a
// synchronous artifact costs here. Until decision 117 it told the supervisor's own overhead
// (redactor, tail, accounting) apart from Node's pipe reading; now the supervisor reads its trees'
// pipes itself (PipeReader), and the floor shows what Node's stream reads would cost.
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { ProcessSupervisor } from '../src/process/supervisor.js';
import { BenchContext, collectGarbage, progress } from './common.js';
import { msSince, round, roundSummary, summarize, type Summary } from './stats.js';

export const DRAIN_BYTES = 256 * 1024 * 1024;
export const SECRET = 'a-20-byte-secret-val';
export const THROUGHPUT_TARGET = 0.5;
export const RSS_TARGET_MIB = 64;
const MIB = 1024 * 1024;

interface Trial {
  ms: number;
  /** Max sampled RSS minus RSS right before the spawn, MiB. */
  rssGrowthMiB: number;
  /** process.resourceUsage().maxRSS after minus before (a high-water mark: 0 unless the run set a new one), MiB. */
  maxRssDeltaMiB: number;
  /** RSS samples taken during the run (the 10 ms timer competes with the drain for the event loop). */
  samples: number;
}

export interface DrainSide {
  wall: Summary;
  throughputMiBs: number;
  rssGrowthMiB: Summary;
  maxRssDeltaMiB: Summary;
  /** RSS samples per trial (median); a 10 ms cadence would give wall / 10. */
  rssSamplesMedian: number;
}

export interface DrainResult {
  trials: number;
  bytes: number;
  producer: string;
  cgroupUsed: boolean;
  supervisor: DrainSide;
  baseline: DrainSide;
  nodeFloor: DrainSide;
  throughputRatio: number;
  /** Supervisor throughput / node-floor throughput (information, no target). */
  vsNodeFloor: number;
  throughputTarget: number;
  rssTargetMiB: number;
  /** Worst (max) RSS growth over the supervisor's trials: the figure the target is checked on. */
  rssGrowthWorstMiB: number;
  pass: boolean;
  failures: string[];
}

/** Runs `fn` while sampling RSS every 10 ms. */
async function withRss(fn: () => Promise<void>): Promise<Trial> {
  collectGarbage();
  const before = process.memoryUsage.rss();
  const maxBefore = process.resourceUsage().maxRSS;
  let peak = before;
  let samples = 0;
  const timer = setInterval(() => {
    samples++;
    const r = process.memoryUsage.rss();
    if (r > peak) peak = r;
  }, 10);
  const t0 = process.hrtime.bigint();
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  const ms = msSince(t0);
  const end = process.memoryUsage.rss();
  if (end > peak) peak = end;
  const maxAfter = process.resourceUsage().maxRSS;
  return { ms, rssGrowthMiB: (peak - before) / MIB, maxRssDeltaMiB: (maxAfter - maxBefore) / 1024, samples };
}

async function supervisedTrial(sup: ProcessSupervisor, ctx: BenchContext, bytes: number, failures: string[]): Promise<Trial> {
  let root: string | null = null;
  try {
    return await withRss(async () => {
      const tree = sup.spawnTree({
        command: 'head',
        args: ['-c', String(bytes), '/dev/zero'],
        redact: [SECRET],
        artifacts: true,
      });
      ctx.markers.add(tree.spawnId);
      const outcome = await tree.done;
      if (outcome.artifacts) root = outcome.artifacts.root;
      if (outcome.reason !== 'exited' || outcome.exitCode !== 0) {
        failures.push(`${tree.spawnId}: reason=${outcome.reason} exit=${outcome.exitCode} ${outcome.error?.message ?? ''}`);
      }
      if (outcome.stdout.bytes !== bytes) failures.push(`${tree.spawnId}: drained ${outcome.stdout.bytes} of ${bytes} bytes`);
      if (outcome.artifacts) {
        const size = statSync(join(outcome.artifacts.root, outcome.artifacts.stdout)).size;
        if (size !== bytes) failures.push(`${tree.spawnId}: artifact holds ${size} of ${bytes} bytes`);
      } else {
        failures.push(`${tree.spawnId}: no artifact`);
      }
    });
  } finally {
    if (root) rmSync(root, { recursive: true, force: true });
  }
}

async function baselineTrial(ctx: BenchContext, bytes: number, n: number, failures: string[]): Promise<Trial> {
  const file = join(ctx.root, `drain-baseline-${n}.bin`);
  try {
    return await withRss(async () => {
      const child = spawn('sh', ['-c', `head -c ${bytes} /dev/zero | cat > '${file}'`], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout!.resume();
      child.stderr!.resume();
      const code = await new Promise<number | null>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (c) => resolve(c));
      });
      if (code !== 0) failures.push(`baseline exited ${code}`);
      const size = statSync(file).size;
      if (size !== bytes) failures.push(`baseline file holds ${size} of ${bytes} bytes`);
    });
  } finally {
    try {
      unlinkSync(file);
    } catch {
      // not created
    }
  }
}

async function nodeFloorTrial(ctx: BenchContext, bytes: number, n: number, failures: string[]): Promise<Trial> {
  const file = join(ctx.root, `drain-floor-${n}.bin`);
  try {
    return await withRss(async () => {
      const fd = openSync(file, 'wx', 0o600);
      try {
        const child = spawn('head', ['-c', String(bytes), '/dev/zero'], { stdio: ['ignore', 'pipe', 'pipe'] });
        child.stdout!.on('data', (chunk: Buffer) => {
          let off = 0;
          while (off < chunk.length) off += writeSync(fd, chunk, off, chunk.length - off);
        });
        child.stderr!.resume();
        const code = await new Promise<number | null>((resolve, reject) => {
          child.once('error', reject);
          child.once('close', (c) => resolve(c));
        });
        if (code !== 0) failures.push(`node floor exited ${code}`);
      } finally {
        closeSync(fd);
      }
      const size = statSync(file).size;
      if (size !== bytes) failures.push(`node floor file holds ${size} of ${bytes} bytes`);
    });
  } finally {
    try {
      unlinkSync(file);
    } catch {
      // not created
    }
  }
}

function side(ts: Trial[], bytes: number): DrainSide {
  const wall = summarize(ts.map((t) => t.ms));
  return {
    wall: roundSummary(wall),
    throughputMiBs: round(bytes / MIB / (wall.median / 1000), 1),
    rssGrowthMiB: roundSummary(summarize(ts.map((t) => t.rssGrowthMiB)), 1),
    maxRssDeltaMiB: roundSummary(summarize(ts.map((t) => t.maxRssDeltaMiB)), 1),
    rssSamplesMedian: summarize(ts.map((t) => t.samples)).median,
  };
}

export async function runDrain(ctx: BenchContext): Promise<DrainResult> {
  const trials = ctx.options.quick ? 2 : 5;
  const bytes = DRAIN_BYTES;
  const sup = ctx.openSupervisor('cgroup', 'drain');
  const sups: Trial[] = [];
  const base: Trial[] = [];
  const floor: Trial[] = [];
  const failures: string[] = [];
  progress(`drain: 1 small warm-up + ${trials} interleaved trials of ${bytes / MIB} MiB each (supervisor, cat > file, node floor)`);
  try {
    // Warm-up (32 MiB, not recorded): JIT of the drain and redactor paths, page cache for the binaries.
    await supervisedTrial(sup, ctx, 32 * MIB, failures);
    await baselineTrial(ctx, 32 * MIB, -1, failures);
    await nodeFloorTrial(ctx, 32 * MIB, -1, failures);
    let seq = 0;
    const runs: Array<() => Promise<void>> = [
      async () => void sups.push(await supervisedTrial(sup, ctx, bytes, failures)),
      async () => void base.push(await baselineTrial(ctx, bytes, seq++, failures)),
      async () => void floor.push(await nodeFloorTrial(ctx, bytes, seq++, failures)),
    ];
    for (let i = 0; i < trials; i++) {
      // Rotate who goes first, so no contender always follows the same one (disk write-back, caches).
      for (let k = 0; k < runs.length; k++) await runs[(i + k) % runs.length]!();
      progress(
        `drain: trial ${i + 1}/${trials}: supervisor ${sups.at(-1)!.ms.toFixed(0)} ms, baseline ${base.at(-1)!.ms.toFixed(0)} ms, node floor ${floor.at(-1)!.ms.toFixed(0)} ms`,
      );
    }
  } finally {
    await ctx.closeSupervisor(sup);
  }
  const s = side(sups, bytes);
  const b = side(base, bytes);
  const f = side(floor, bytes);
  const throughputRatio = s.throughputMiBs / b.throughputMiBs;
  const worst = Math.max(...sups.map((t) => t.rssGrowthMiB));
  return {
    trials,
    bytes,
    producer: `head -c ${bytes} /dev/zero`,
    cgroupUsed: sup.capabilities.cgroup,
    supervisor: s,
    baseline: b,
    nodeFloor: f,
    throughputRatio: round(throughputRatio),
    vsNodeFloor: round(s.throughputMiBs / f.throughputMiBs),
    throughputTarget: THROUGHPUT_TARGET,
    rssTargetMiB: RSS_TARGET_MIB,
    rssGrowthWorstMiB: round(worst, 1),
    pass: throughputRatio >= THROUGHPUT_TARGET && worst <= RSS_TARGET_MIB && failures.length === 0,
    failures: failures.slice(0, 10),
  };
}
