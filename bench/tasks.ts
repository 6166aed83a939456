// Benchmark — tasks: 200 concurrent background terminal tasks started through the effect pipeline
// (terminal background=true), each printing output for a while; all must complete with their logs
// persisted. Reports the supervisor's event-loop lag (p99) and peak RSS while they run, next to the
// same figures with the process idle, measured in the same run.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { BenchContext } from './common.js';
import { openBenchPipeline } from './pipeline.js';
import { detectCgroupV2 } from '../src/process/linux/cgroup.js';
import { detectTreeCpuGroup } from '../src/process/linux/cpu-group.js';
import { progress } from './common.js';

export interface TasksResultBench {
  tasks: number;
  completed: number;
  logsPersisted: number;
  wallMs: number;
  lagP99Ms: number;
  lagMaxMs: number;
  /** The same figure for the start phase (200 spawns) and for the rest (output, exits, ends). */
  startLagP99Ms: number;
  runLagP99Ms: number;
  /** Wall time of the start phase, and the CPU time of the supervisor's main thread in it and in the rest (/proc/self/task/<pid>/stat). */
  startPhaseMs: number;
  startMainCpuMs: number;
  /** Time the main thread spent runnable but waiting for a CPU in the start phase (/proc/self/task/<pid>/schedstat). */
  startMainRunqueueMs: number;
  runPhaseMs: number;
  runMainCpuMs: number;
  idleLagP99Ms: number;
  /**
   * The floor: the lag p99 of a Node process that does nothing while the same n commands are
   * started at the supervisor's pace by another process, measured in the same run. It is what the
   * workload alone does to an event loop on this machine.
   */
  floorLagP99Ms: number;
  /** Where the trees' shared CPU group is, or why there is none (decision 66). */
  treeCpuGroup: string;
  peakRssMiB: number;
  baseRssMiB: number;
  targetLagMs: number;
  targetRssMiB: number;
  pass: boolean;
}

/** CPU time (user + system) of the main thread alone, in ms (clock ticks of 10 ms). */
function mainThreadCpuMs(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Time the main thread has waited on a run queue, in ms (schedstat's second field, ns). */
function mainThreadRunqueueMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').trim().split(' ')[1]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

// Each task prints 200 lines over ~2 s: logs flow while all of them run.
const TASK_COMMAND = 'i=0; while [ $i -lt 200 ]; do echo "line $i of task output"; i=$((i+1)); [ $((i % 20)) -eq 0 ] && sleep 0.2; done';

// An observer that only measures its own event loop until its stdin closes, then prints the p99 (ms).
const OBSERVER = `const h = require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 }); h.enable();
process.stdin.resume(); process.stdin.on('end', () => { h.disable(); process.stdout.write(String(h.percentile(99) / 1e6)); });`;

/**
 * The floor under this workload: the same n commands, each in a session of its own, started one
 * every `intervalMs` by this process (not supervised: no pipeline, no records, output drained and
 * dropped), while an idle Node process measures its event loop until the last one exits.
 */
async function floorLagP99(n: number, intervalMs: number): Promise<number> {
  const observer = spawn(process.execPath, ['-e', OBSERVER], { stdio: ['pipe', 'pipe', 'inherit'] });
  let report = '';
  observer.stdout.on('data', (d: Buffer) => (report += d.toString()));
  const observed = new Promise<void>((r) => observer.on('close', () => r()));
  const exits: Promise<void>[] = [];
  const pgids: number[] = [];
  try {
    await new Promise((r) => setTimeout(r, 200));
    for (let i = 0; i < n; i++) {
      const c = spawn('/bin/sh', ['-c', TASK_COMMAND], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
      if (c.pid !== undefined) pgids.push(c.pid);
      c.stdout.resume();
      exits.push(new Promise((r) => c.on('close', () => r())));
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    await Promise.all(exits);
  } finally {
    // Only on an error can a group still be alive; each is this process's own child's group.
    for (const pgid of pgids) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    observer.stdin.end();
    await observed;
  }
  return Number(report);
}

function treeCpuGroupText(): string {
  if (process.platform !== 'linux') return 'none (Linux only)';
  const { group, reason } = detectTreeCpuGroup(detectCgroupV2());
  return group ? group.how : `none: ${reason}`;
}

async function lagWhile(ms: number): Promise<number> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  await new Promise((r) => setTimeout(r, ms));
  h.disable();
  return h.percentile(99) / 1e6;
}

export async function runTasks(ctx: BenchContext): Promise<TasksResultBench> {
  const n = ctx.options.quick ? 50 : 200;
  // The bench starts all n at once in one session: both per-session caps are raised to n.
  const agentYaml = `name: bench\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read]\napproval:\n  default: auto\nlimits:\n  max_background_tasks: ${n}\n  max_concurrent_calls: ${n}\n`;
  const p = await openBenchPipeline('tasks', agentYaml, { approve: ['terminal'], tasks: true });
  const { runtime, ectx } = p;
  const worker = p.worker!;
  try {
    const idleLagP99Ms = await lagWhile(500);
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    // BENCH_LAG_TRACE=1: print each stall over 40 ms with its time since the start, to find its cause.
    let lastTick = performance.now();
    const tStart = lastTick;
    const trace = process.env.BENCH_LAG_TRACE === '1' ? setInterval(() => {
      const now = performance.now();
      if (now - lastTick > 45) process.stderr.write(`stall ${(now - lastTick - 5).toFixed(0)} ms at +${((lastTick - tStart) / 1000).toFixed(2)} s (running ${worker.running})\n`);
      lastTick = now;
    }, 5) : null;
    progress(`tasks: starting ${n} background terminal tasks`);
    const t0 = Date.now();
    // Each task prints 200 lines over ~2 s: logs flow while all of them run.
    const command = TASK_COMMAND;
    const ids: string[] = [];
    if (trace) process.stderr.write(`starting at +${((performance.now() - tStart) / 1000).toFixed(2)} s\n`);
    const startLag = monitorEventLoopDelay({ resolution: 10 });
    startLag.enable();
    const cpu0 = mainThreadCpuMs();
    const rq0 = mainThreadRunqueueMs();
    const w0 = performance.now();
    await Promise.all(
      Array.from({ length: n }, async () => {
        const r = await runtime.execute(runtime.request('terminal', { command, background: true })!, ectx);
        if (!r.ok) throw new Error(r.message);
        const id = /task (tk_[0-9a-f]+)/.exec(r.views.model.content)?.[1];
        if (!id) throw new Error(`no task id in: ${r.views.model.content}`);
        ids.push(id);
      }),
    );
    startLag.disable();
    const cpu1 = mainThreadCpuMs();
    const rq1 = mainThreadRunqueueMs();
    const w1 = performance.now();
    if (trace) process.stderr.write(`all started at +${((performance.now() - tStart) / 1000).toFixed(2)} s\n`);
    const runLag = monitorEventLoopDelay({ resolution: 10 });
    runLag.enable();
    while (worker.running > 0) await new Promise((r) => setTimeout(r, 100));
    runLag.disable();
    const cpu2 = mainThreadCpuMs();
    const w2 = performance.now();
    if (trace) clearInterval(trace);
    const wallMs = Date.now() - t0;
    lag.disable();
    clearInterval(rssTimer);
    progress(`tasks: the floor — the same ${n} commands started by a plain spawner while an idle Node process measures its loop`);
    const floorLagP99Ms = await floorLagP99(n, (w1 - w0) / n);
    const scope = { principal: 'bench' };
    const done = ids.map((id) => worker.get(scope, id)!);
    const completed = done.filter((t) => t.status === 'completed').length;
    const logsPersisted = ids.filter((id) => {
      const text = (worker.store.logs(scope, id, { limit: 10_000 }) ?? []).map((c) => c.chunk).join('');
      return text.split('\n').filter((l) => l.startsWith('line ')).length === 200;
    }).length;
    const lagP99Ms = lag.percentile(99) / 1e6;
    const r: TasksResultBench = {
      tasks: n,
      completed,
      logsPersisted,
      wallMs,
      lagP99Ms,
      lagMaxMs: lag.max / 1e6,
      startLagP99Ms: startLag.percentile(99) / 1e6,
      runLagP99Ms: runLag.percentile(99) / 1e6,
      startPhaseMs: Math.round(w1 - w0),
      startMainCpuMs: cpu1 - cpu0,
      startMainRunqueueMs: Math.round(rq1 - rq0),
      runPhaseMs: Math.round(w2 - w1),
      runMainCpuMs: cpu2 - cpu1,
      idleLagP99Ms,
      floorLagP99Ms,
      treeCpuGroup: treeCpuGroupText(),
      peakRssMiB: peakRss / 1048576,
      baseRssMiB: baseRss / 1048576,
      targetLagMs: 50,
      targetRssMiB: 300,
      pass: false,
    };
    // The target holds for the whole run and for each phase on its own.
    const lagOk = [lagP99Ms, r.startLagP99Ms, r.runLagP99Ms].every((ms) => ms < r.targetLagMs);
    r.pass = completed === n && logsPersisted === n && lagOk && r.peakRssMiB < r.targetRssMiB;
    return r;
  } finally {
    await p.close();
  }
}
