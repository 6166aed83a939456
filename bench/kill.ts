// Benchmark 2 — kill: a 50-process tree (leader + 39 sleeps + 5 TERM-ignorers + 5 setsid escapees,
// bench/fixtures/tree-50.sh), grace 200 ms. Measures tree.stop() until it resolves and counts
// survivors, for the supervisor with and without a per-tree cgroup, against a naive process-group
// kill (TERM to -pgid, 200 ms, KILL to -pgid) of the same tree spawned detached with child_process.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { allowlistedEnv } from '../src/process/child-env.js';
import type { ProcessSupervisor } from '../src/process/supervisor.js';
import type { TreeOutcome } from '../src/process/types.js';
import { BenchContext, progress, type Config } from './common.js';
import { comm, ignoresTerm, killMembers, markedStats, readStat, reapAdopted, waitFor, type Stat } from './procs.js';
import { msSince, roundSummary, summarize, type Summary } from './stats.js';

export const FIXTURE = fileURLToPath(new URL('../../bench/fixtures/tree-50.sh', import.meta.url));
export const TREE_SIZE = 50;
const ESCAPEES = 5;
const IGNORERS = 5;
export const GRACE_MS = 200;
export const KILL_TARGET_MS = GRACE_MS + 100;

/** The tree is fully formed: 50 live marked processes, 49 exec'd sleeps, 5 in another session, 5 ignoring TERM. */
function treeReady(marker: string, leaderPid: number): Stat[] | null {
  const stats = markedStats(marker);
  if (stats.length !== TREE_SIZE) return null;
  const leader = stats.find((s) => s.pid === leaderPid);
  if (!leader) return null;
  let sleeps = 0;
  let otherSession = 0;
  let ignorers = 0;
  for (const s of stats) {
    if (s.pid === leaderPid) continue;
    if (comm(s.pid) === 'sleep') sleeps++;
    if (s.session !== leader.session) otherSession++;
    if (ignoresTerm(s.pid)) ignorers++;
  }
  return sleeps === TREE_SIZE - 1 && otherSession === ESCAPEES && ignorers === IGNORERS ? stats : null;
}

interface SupTrial {
  stopMs: number;
  survivors: number;
  liveAfter: number;
  reportedSurvivors: number;
  descendants: number;
  escapees: number;
  zombiesLeft: number;
}

interface NaiveTrial {
  /** From TERM to the process group being empty (the leader reaped, every group member gone). */
  groupGoneMs: number;
  survivors: number;
  survivorsWereEscapees: number;
}

export interface KillConfigResult {
  config: Config;
  cgroupUsed: boolean;
  stop: Summary;
  target: number;
  survivorsTotal: number;
  trialsWithSurvivors: number;
  zombiesLeftTotal: number;
  reported: { descendantsMedian: number; escapeesMedian: number };
  pass: boolean;
  failures: string[];
}

export interface KillResult {
  trials: number;
  graceMs: number;
  treeSize: number;
  configs: KillConfigResult[];
  naive: {
    trials: number;
    groupGone: Summary;
    survivorsTotal: number;
    survivorsPerTrialMedian: number;
    survivorsWereEscapees: number;
    killedByBench: number;
  };
  leakedAfterTrials: number;
  pass: boolean;
}

async function supervisedTrial(sup: ProcessSupervisor, ctx: BenchContext, failures: string[]): Promise<SupTrial | null> {
  const tree = sup.spawnTree({ command: 'sh', args: [FIXTURE], graceMs: GRACE_MS, artifacts: true });
  ctx.markers.add(tree.spawnId);
  let members: Stat[];
  try {
    members = await waitFor('the 50-process tree', () => treeReady(tree.spawnId, tree.pid), 15_000);
  } catch (err) {
    failures.push(`${tree.spawnId}: ${(err as Error).message}`);
    const seen = markedStats(tree.spawnId);
    await tree.stop();
    await cleanup(tree.spawnId, seen, tree.pid);
    return null;
  }
  const t0 = process.hrtime.bigint();
  const outcome: TreeOutcome = await tree.stop();
  const stopMs = msSince(t0);
  const after = markedStats(tree.spawnId);
  // Adopted members left unreaped by the ladder (zombies whose parent is this process).
  let zombiesLeft = 0;
  for (const m of members) {
    const st = readStat(m.pid);
    if (st && st.startTime === m.startTime && st.state === 'Z' && st.ppid === process.pid) zombiesLeft++;
  }
  if (outcome.error) failures.push(`${tree.spawnId}: ${outcome.error.code}: ${outcome.error.message}`);
  await cleanup(tree.spawnId, members, tree.pid);
  return {
    stopMs,
    survivors: after.length + outcome.killed.survivors,
    liveAfter: after.length,
    reportedSurvivors: outcome.killed.survivors,
    descendants: outcome.killed.descendants,
    escapees: outcome.killed.escapees,
    zombiesLeft,
  };
}

async function naiveTrial(ctx: BenchContext, n: number, failures: string[]): Promise<{ trial: NaiveTrial; killedByBench: number } | null> {
  const marker = `bench-naive-${process.pid}-${n}`;
  ctx.markers.add(marker);
  const child = spawn('sh', [FIXTURE], {
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...allowlistedEnv(), SUPERVISOR_SPAWN_ID: marker },
  });
  child.stdout!.resume();
  child.stderr!.resume();
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const pid = child.pid!;
  let members: Stat[];
  try {
    members = await waitFor('the 50-process tree (naive)', () => treeReady(marker, pid), 15_000);
  } catch (err) {
    failures.push(`naive ${marker}: ${(err as Error).message}`);
    await cleanup(marker, markedStats(marker), pid);
    await closed;
    return null;
  }
  const t0 = process.hrtime.bigint();
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    // empty group
  }
  await sleep(GRACE_MS);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // empty group
  }
  // The group is gone when the leader is reaped and no live process is left in it.
  await exited;
  await waitFor('the naive process group to empty', () => !markedStats(marker).some((s) => s.pgrp === pid), 5_000, 1);
  const groupGoneMs = msSince(t0);
  // Let any straggler be counted: a short settle, then whatever still carries the marker survived.
  await sleep(20);
  const survivors = markedStats(marker);
  const escapeePids = new Set(members.filter((m) => m.session !== pid).map((m) => m.pid));
  const survivorsWereEscapees = survivors.filter((s) => escapeePids.has(s.pid)).length;
  const killedByBench = killMembers(survivors);
  await cleanup(marker, members, pid);
  await closed;
  return { trial: { groupGoneMs, survivors: survivors.length, survivorsWereEscapees }, killedByBench };
}

/** Every process that carried `marker` is dead and every adopted zombie among `members` is reaped (never `nodeChild`: Node reaps it). */
async function cleanup(marker: string, members: Stat[], nodeChild?: number): Promise<void> {
  const exclude = new Set<number>(nodeChild === undefined ? [] : [nodeChild]);
  const deadline = Date.now() + 5_000;
  for (;;) {
    const live = markedStats(marker);
    if (live.length > 0) killMembers(live);
    const pending = reapAdopted(members, exclude);
    if (live.length === 0 && pending === 0) return;
    if (Date.now() > deadline) throw new Error(`kill bench: could not clean up ${marker}: ${live.length} live, ${pending} unreaped`);
    await sleep(2);
  }
}

export async function runKill(ctx: BenchContext): Promise<KillResult> {
  const trials = ctx.options.quick ? 10 : 100;
  const configs: Config[] = ['cgroup', 'no-cgroup'];
  const sups = configs.map((c) => ctx.openSupervisor(c, 'kill'));
  const results: SupTrial[][] = configs.map(() => []);
  const failures: string[][] = configs.map(() => []);
  const naive: NaiveTrial[] = [];
  const naiveFailures: string[] = [];
  let killedByBench = 0;
  progress(`kill: ${trials} rounds of (supervisor with cgroup, supervisor without, naive group kill), ${TREE_SIZE}-process tree, grace ${GRACE_MS} ms`);
  const started = Date.now();
  try {
    for (let i = 0; i < trials; i++) {
      for (let k = 0; k < configs.length; k++) {
        const r = await supervisedTrial(sups[k]!, ctx, failures[k]!);
        if (r) results[k]!.push(r);
      }
      const nv = await naiveTrial(ctx, i, naiveFailures);
      if (nv) {
        naive.push(nv.trial);
        killedByBench += nv.killedByBench;
      }
      if ((i + 1) % 20 === 0) progress(`kill: ${i + 1}/${trials} rounds (${((Date.now() - started) / 1000).toFixed(0)} s)`);
    }
  } finally {
    for (const s of sups) await ctx.closeSupervisor(s);
  }
  // Nothing of any kill trial may be left.
  let leakedAfterTrials = 0;
  for (const m of ctx.markers) leakedAfterTrials += markedStats(m).length;

  const configResults: KillConfigResult[] = configs.map((config, k) => {
    const rs = results[k]!;
    const stop = summarize(rs.map((r) => r.stopMs));
    const survivorsTotal = rs.reduce((a, r) => a + r.survivors, 0);
    const zombiesLeftTotal = rs.reduce((a, r) => a + r.zombiesLeft, 0);
    const f = [...failures[k]!];
    if (rs.length < trials) f.push(`${trials - rs.length} trial(s) did not complete`);
    return {
      config,
      cgroupUsed: sups[k]!.capabilities.cgroup,
      stop: roundSummary(stop),
      target: KILL_TARGET_MS,
      survivorsTotal,
      trialsWithSurvivors: rs.filter((r) => r.survivors > 0).length,
      zombiesLeftTotal,
      reported: {
        descendantsMedian: summarize(rs.map((r) => r.descendants)).median,
        escapeesMedian: summarize(rs.map((r) => r.escapees)).median,
      },
      pass: stop.median <= KILL_TARGET_MS && survivorsTotal === 0 && rs.length === trials && leakedAfterTrials === 0,
      failures: f.slice(0, 10),
    };
  });
  return {
    trials,
    graceMs: GRACE_MS,
    treeSize: TREE_SIZE,
    configs: configResults,
    naive: {
      trials: naive.length,
      groupGone: roundSummary(summarize(naive.map((t) => t.groupGoneMs))),
      survivorsTotal: naive.reduce((a, t) => a + t.survivors, 0),
      survivorsPerTrialMedian: summarize(naive.map((t) => t.survivors)).median,
      survivorsWereEscapees: naive.reduce((a, t) => a + t.survivorsWereEscapees, 0),
      killedByBench,
    },
    leakedAfterTrials,
    pass: configResults.every((c) => c.pass),
  };
}
