// The termination ladder: TERM to the whole tree, wait the grace, then KILL rounds until a sweep
// finds nothing, then reap what we adopted. Platform-neutral: the platform supplies the primitives.
import { setTimeout as sleep } from 'node:timers/promises';
import { debugOn, debugTree, pidList } from './debug-log.js';
import type { ProcessPlatform, TreeIdentity, TreeMember } from './platform.js';
import type { KillReport } from './types.js';

export interface LadderOptions {
  platform: ProcessPlatform;
  tree: TreeIdentity;
  graceMs: number;
  /** True while Node has not reaped the leader. Read at every step: it changes under us. */
  leaderHeld: () => boolean;
  /** Live leaders of every tree: never reaped by pid here, Node reaps them. */
  leaders: () => ReadonlySet<number>;
  seen: Map<number, TreeMember>;
  /** Every member observed over the tree's life, keyed pid:startTime; feeds the KillReport. */
  tally: Map<string, TreeMember>;
  pollMs?: number;
  /** Upper bound on the KILL phase; past it the survivors are reported, never hidden. */
  killPhaseMs?: number;
}

/** Runs the whole ladder. When nothing is alive it costs one enumeration. */
export async function terminateTree(o: LadderOptions): Promise<KillReport> {
  const pollMs = o.pollMs ?? 10;
  const { platform, tree, seen } = o;
  const note = (members: TreeMember[]): TreeMember[] => {
    for (const m of members) {
      const key = `${m.pid}:${m.startTime}`;
      const prev = o.tally.get(key);
      // First sighting decides "re-parented"; orphans the ladder itself makes (TERM killed their
      // parent) are not escapees. Leaving the session counts whenever it is seen.
      if (!prev) o.tally.set(key, m);
      else if (m.leftSession && !prev.escapee) o.tally.set(key, { ...prev, escapee: true, leftSession: true });
    }
    return members;
  };
  // The enumeration is walked in slices where the platform can (Linux): many trees ending at once
  // must not stall the event loop that serves every other tree.
  const signalTree = (signal: 'SIGTERM' | 'SIGKILL'): Promise<TreeMember[]> | TreeMember[] =>
    platform.signalTreeAsync ? platform.signalTreeAsync(tree, signal, o.leaderHeld, seen) : platform.signalTree(tree, signal, o.leaderHeld(), seen);
  const members = (): Promise<TreeMember[]> | TreeMember[] => (platform.membersAsync ? platform.membersAsync(tree, o.leaderHeld, seen) : platform.members(tree, o.leaderHeld(), seen));
  const t0 = Date.now();
  let live = note(await signalTree('SIGTERM'));
  if (debugOn()) sweepLine(tree, 'term', live);
  if (live.length > 0) {
    const deadline = Date.now() + o.graceMs;
    while (Date.now() < deadline) {
      await sleep(Math.max(1, Math.min(pollMs, deadline - Date.now())));
      platform.reapAdopted(seen, o.leaders(), tree);
      const before = live.length;
      live = note(await members());
      // The grace is polled every few ms: a line only when the count changes.
      if (debugOn() && live.length !== before) sweepLine(tree, 'grace', live);
      if (live.length === 0) break;
    }
    if (live.length > 0 && debugOn()) debugTree('escalate', tree.spawnId, tree.pid, { after: `${Date.now() - t0}ms`, grace: o.graceMs, left: live.length, pids: pidList(live) });
  }
  const killDeadline = Date.now() + (o.killPhaseMs ?? 5_000);
  let round = 0;
  for (;;) {
    if (live.length > 0) {
      live = note(await signalTree('SIGKILL'));
      if (debugOn()) sweepLine(tree, 'kill', live, round);
    }
    const waiting = platform.reapAdopted(seen, o.leaders(), tree);
    if (live.length === 0 && waiting === 0) break;
    if (Date.now() >= killDeadline) {
      if (debugOn()) debugTree('kill-deadline', tree.spawnId, tree.pid, { survivors: live.length, unreaped: waiting, pids: pidList(live) });
      break;
    }
    // SIGKILL is delivered asynchronously; the first re-checks come fast, then back off.
    await sleep(round++ < 10 ? 1 : pollMs);
    live = note(await members());
    if (debugOn()) sweepLine(tree, 'kill-check', live, round, waiting);
  }
  return report(tree, o.tally, live);
}

/** Synchronous last resort (process 'exit', second Ctrl-C): KILL rounds without waiting. */
export function killTreeSync(o: Omit<LadderOptions, 'graceMs' | 'pollMs' | 'killPhaseMs'>, rounds = 20): KillReport {
  let live: TreeMember[] = [];
  for (let i = 0; i < rounds; i++) {
    live = o.platform.signalTree(o.tree, 'SIGKILL', o.leaderHeld(), o.seen);
    if (debugOn()) sweepLine(o.tree, 'sync-kill', live, i);
    for (const m of live) if (!o.tally.has(`${m.pid}:${m.startTime}`)) o.tally.set(`${m.pid}:${m.startTime}`, m);
    o.platform.reapAdopted(o.seen, o.leaders(), o.tree);
    if (live.length === 0) break;
  }
  return report(o.tree, o.tally, live);
}

/** `sweep <id> pid=<leader> phase=… found=<live members> pids=…`: one enumeration of the tree. */
function sweepLine(tree: TreeIdentity, phase: string, live: readonly TreeMember[], round?: number, unreaped?: number): void {
  debugTree('sweep', tree.spawnId, tree.pid, { phase, round, found: live.length, unreaped: unreaped || undefined, pids: pidList(live) });
}

function report(tree: TreeIdentity, tally: Map<string, TreeMember>, live: TreeMember[]): KillReport {
  let descendants = 0;
  let escapees = 0;
  for (const m of tally.values()) {
    if (m.pid === tree.pid && m.startTime === tree.startMarker.startTime) continue;
    descendants++;
    if (m.escapee) escapees++;
  }
  return { descendants, escapees, survivors: live.length };
}
