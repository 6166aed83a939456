// What an operator sees of the trees a run holds: the members of each recorded tree, found by the
// same enumeration the termination ladder uses (pgid/sid while the leader is unchanged, the tree's
// cgroup, the SUPERVISOR_SPAWN_ID marker, descendants of members), each with its name, age, CPU
// time and resident memory from the platform's own readers. Read-only: nothing here signals a
// process; a tree is stopped by its owner (a cancel request), never by the observer.
import type { ProcessPlatform, ProcessUsage, TreeIdentity, TreeMember } from './platform.js';
import { hostPlatform } from './host-platform.js';
import { parseMarker } from './supervisor.js';

/** A recorded tree, as its spawn record names it. */
export interface RecordedTree {
  spawnId: string;
  /** 0 while the record is `starting` (no pid known yet). */
  pid: number;
  pgid: number;
  sid: number;
  startMarker: string;
  cgroup: string | null;
}

export interface ObservedProcess {
  pid: number;
  ppid: number | null;
  /** The program's name as the kernel knows it (no arguments); '' where the platform has no reader. */
  name: string;
  state: string | null;
  startedAt: number | null;
  cpuMs: number | null;
  rssKib: number | null;
  /** Left the leader's session (setsid), or was re-parented away from it. */
  escapee: boolean;
  leader: boolean;
}

let platform: ProcessPlatform | undefined;

/** The live members of each tree, by spawn id; a tree of another boot or platform has none. */
export async function observeTrees(trees: readonly RecordedTree[]): Promise<Map<string, ObservedProcess[]>> {
  platform ??= hostPlatform();
  const p = platform;
  const out = new Map<string, ObservedProcess[]>();
  await Promise.all(
    trees.map(async (t) => {
      const identity = identityOf(p, t);
      if (identity === null) return void out.set(t.spawnId, []);
      // A fresh memory per look: the observer is not the owner and claims no orphans.
      const seen = new Map<number, TreeMember>();
      const members = p.membersAsync ? await p.membersAsync(identity, () => false, seen) : p.members(identity, false, seen);
      const many = p.usageOfMany?.(members);
      out.set(t.spawnId, members.map((m) => describe(p, t, m, many)).filter((m): m is ObservedProcess => m !== null).sort((a, b) => a.pid - b.pid));
    }),
  );
  return out;
}

function identityOf(p: ProcessPlatform, t: RecordedTree): TreeIdentity | null {
  const marker = parseMarker(t.startMarker);
  if (marker === null || marker.platform !== p.name) return null;
  // A `starting` row: its marker is the owner's start, a lower bound; members are found by cgroup and marker.
  return t.pid > 0 ? { spawnId: t.spawnId, pid: t.pid, pgid: t.pgid, sid: t.sid, startMarker: marker, cgroup: t.cgroup } : { spawnId: t.spawnId, pid: -1, pgid: -1, sid: -1, startMarker: marker, cgroup: t.cgroup };
}

/** One member as shown; `many` holds the figures of a batched read (usageOfMany) when the platform has one. */
function describe(p: ProcessPlatform, t: RecordedTree, m: TreeMember, many: Map<number, ProcessUsage | null> | undefined): ObservedProcess | null {
  const base = { pid: m.pid, escapee: m.escapee, leader: m.pid === t.pid };
  if (!p.usage && many === undefined) return { ...base, ppid: null, name: '', state: null, startedAt: null, cpuMs: null, rssKib: null };
  const u = many !== undefined ? (many.get(m.pid) ?? null) : p.usage!(m.pid, m.startTime);
  // Gone (or another process) since the walk: not shown.
  return u === null ? null : { ...base, ...u };
}
