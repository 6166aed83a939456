// Benchmark — cli: cold starts of the `supervisor` binary next to `node -e 0`, each a fresh process,
// the kinds alternated call by call so load drifts hit all of them alike; and `run examples/demo`.
// Targets (issue 17): --help, `exec -- true`, `sessions` and `approvals` at most 2x `node -e 0` at
// the median; the demo at most 2 s on an idle machine.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext } from './common.js';
import { progress } from './common.js';
import { summarize, type Summary } from './stats.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin', 'supervisor.js');
const DEMO = join(ROOT, 'examples', 'demo');

export interface CliRow {
  name: string;
  wallMs: Summary;
  /** Median over node -e 0's median, same run. */
  ratio: number;
  target: number | null;
  pass: boolean | null;
}

/** One command from the CLI's bundle and from the modules (SUPERVISOR_BUNDLE=0), alternated (decision 69). */
export interface BundleRow {
  name: string;
  bundled: { wallMs: Summary; cpuMs: Summary };
  modules: { wallMs: Summary; cpuMs: Summary };
}

export interface CliResultBench {
  rows: CliRow[];
  demo: { wallMs: Summary; targetMs: number; pass: boolean };
  bundle: BundleRow[];
  pass: boolean;
}

/** Wall time of one fresh process, ms; throws when it fails (a bench of an error is no bench). */
function timed(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', timeout: 120_000 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status ?? r.signal}: ${(r.stderr ?? '').slice(0, 400)}`);
  return ms;
}

/**
 * Wall and CPU (user + system of the process and of every child it waited for: bash's `time`, as
 * spawnSync reports no rusage) of one fresh process.
 */
function timedWithCpu(args: readonly string[], env: NodeJS.ProcessEnv): { wallMs: number; cpuMs: number } {
  const t0 = performance.now();
  const r = spawnSync('bash', ['-c', 'TIMEFORMAT="%U %S"; time "$@" >/dev/null 2>&1', 'cpu', process.execPath, ...args], { env, encoding: 'utf8', timeout: 120_000 });
  const wallMs = performance.now() - t0;
  const [user, sys] = (r.stderr.trim().split('\n').at(-1) ?? '').split(' ').map(Number);
  if (r.status !== 0 || !Number.isFinite(user) || !Number.isFinite(sys)) throw new Error(`${args.join(' ')} failed: ${(r.stderr ?? '').slice(0, 400)}`);
  return { wallMs, cpuMs: (user! + sys!) * 1000 };
}

export async function runCli(ctx: BenchContext): Promise<CliResultBench> {
  const n = ctx.options.quick ? 5 : 15;
  const stateDir = join(ctx.root, 'cli-state');
  const env: NodeJS.ProcessEnv = { ...process.env, SUPERVISOR_STATE_DIR: stateDir };
  delete env.NODE_DEBUG;
  progress('cli: one demo run to fill the store the operator commands read');
  const demo: number[] = [timed([BIN, 'run', DEMO], env)];
  const kinds: { name: string; args: string[]; target: number | null }[] = [
    { name: 'node -e 0 (the floor)', args: ['-e', '0'], target: null },
    { name: 'supervisor --help', args: [BIN, '--help'], target: 2 },
    { name: 'supervisor exec -- true', args: [BIN, 'exec', '--', 'true'], target: 2 },
    { name: 'supervisor sessions', args: [BIN, 'sessions'], target: 2 },
    { name: 'supervisor approvals', args: [BIN, 'approvals'], target: 2 },
  ];
  const times = kinds.map(() => [] as number[]);
  progress(`cli: ${n} rounds of ${kinds.length} cold starts, alternated`);
  for (let i = 0; i < n; i++) kinds.forEach((k, j) => times[j]!.push(timed(k.args, env)));
  const floor = summarize(times[0]!).median;
  const rows = kinds.map((k, j): CliRow => {
    const wallMs = summarize(times[j]!);
    const ratio = wallMs.median / floor;
    return { name: k.name, wallMs, ratio, target: k.target, pass: k.target === null ? null : ratio <= k.target };
  });
  const demoRuns = ctx.options.quick ? 1 : 3;
  progress(`cli: ${demoRuns} more demo run(s)`);
  for (let i = 0; i < demoRuns; i++) demo.push(timed([BIN, 'run', DEMO], env));
  // The first run filled a fresh store (migrations, first npm server start): quoted apart.
  const demoWall = summarize(demo.slice(1));
  const demoPass = demoWall.median <= 2_000;
  const bundle = process.platform === 'linux' ? compareBundle(ctx.options.quick ? 2 : 5, env) : [];
  return { rows, demo: { wallMs: demoWall, targetMs: 2_000, pass: demoPass }, bundle, pass: demoPass && rows.every((r) => r.pass !== false) };
}

/** Each command from the bundle and from the modules, alternated run by run (no target: a figure). */
function compareBundle(n: number, env: NodeJS.ProcessEnv): BundleRow[] {
  const commands = [
    { name: 'plan examples/demo', args: [BIN, 'plan', DEMO] },
    { name: 'run examples/demo', args: [BIN, 'run', DEMO] },
    { name: 'sessions', args: [BIN, 'sessions'] },
  ];
  const modulesEnv = { ...env, SUPERVISOR_BUNDLE: '0' };
  progress(`cli: ${n} rounds of ${commands.length} commands from the bundle and from the modules, alternated`);
  const samples = commands.map(() => ({ bundled: [] as { wallMs: number; cpuMs: number }[], modules: [] as { wallMs: number; cpuMs: number }[] }));
  for (let i = 0; i < n; i++) {
    commands.forEach((c, j) => {
      samples[j]!.bundled.push(timedWithCpu(c.args, env));
      samples[j]!.modules.push(timedWithCpu(c.args, modulesEnv));
    });
  }
  const both = (xs: { wallMs: number; cpuMs: number }[]) => ({ wallMs: summarize(xs.map((x) => x.wallMs)), cpuMs: summarize(xs.map((x) => x.cpuMs)) });
  return commands.map((c, j) => ({ name: c.name, bundled: both(samples[j]!.bundled), modules: both(samples[j]!.modules) }));
}
