// Linux: new session per tree, the supervisor as child subreaper, a cgroup per tree with
// cgroup.kill where a writable cgroup v2 exists, pidfd + start-time check before any bare-pid
// signal, and per-pid reaping of adopted orphans (never waitpid(-1): it steals libuv's children).
import { closeSync } from 'node:fs';
import { constants } from 'node:os';
import { performance } from 'node:perf_hooks';
import * as libc from '../../../native-helpers/libc.js';
import type { LeaderSpawnOptions, PlatformCapabilities, PreparedSpawn, ProcessPlatform, ProcessUsage, SpawnedLeader, TreeIdentity, TreeMember } from '../platform.js';
import { spawnNative, spawnNativeAsync } from './posix-spawn-leader.js';
import type { StartMarker } from '../types.js';
import { isDirectChild } from '../child-ledger.js';
import { debugOn, debugTree } from '../debug-log.js';
import { bootId, listPids, pruneMarkerCache, readStat, residentKib, spawnMarkersOf, startTimeOf, uptimeSeconds, USER_HZ, type ProcStat } from './procfs.js';
import {
  cgroupEntryWrapper,
  cgroupPids,
  cgroupProcs,
  createTreeCgroup,
  createTreeCgroupAsync,
  treeCgroupPath,
  detectCgroupV2,
  killCgroup,
  removeCgroup,
  type CgroupRoot,
} from './cgroup.js';
import { detectTreeCpuGroup } from './cpu-group.js';

export interface LinuxPlatformOptions {
  /** Use a cgroup per tree when a writable cgroup v2 exists (default true). */
  cgroups?: boolean;
  /** Start leaders with posix_spawn instead of Node's spawn() (default true; SUPERVISOR_SPAWN=node turns it off). */
  posixSpawn?: boolean;
}

export class LinuxPlatform implements ProcessPlatform {
  readonly name = 'linux' as const;
  private caps: PlatformCapabilities | undefined;
  private cgroupRoot: CgroupRoot | null = null;

  constructor(private readonly options: LinuxPlatformOptions = {}) {}

  init(): PlatformCapabilities {
    if (this.caps) return this.caps;
    let subreaper = false;
    let pidfd = false;
    if (libc.libcAvailable()) {
      subreaper = libc.setChildSubreaper().value === 0 && libc.getChildSubreaper();
      const fd = libc.pidfdOpen(process.pid);
      if (fd.value >= 0) {
        pidfd = true;
        closeSync(fd.value);
      }
    }
    this.cgroupRoot = this.options.cgroups === false ? null : detectCgroupV2();
    this.caps = { subreaper, pidfd, cgroup: this.cgroupRoot !== null };
    return this.caps;
  }

  startMarker(pid: number): StartMarker | null {
    const t = startTimeOf(pid);
    return t === null ? null : { platform: 'linux', bootId: bootId(), startTime: t };
  }

  isSameProcess(pid: number, marker: StartMarker): boolean {
    if (marker.platform !== 'linux' || marker.bootId !== bootId()) return false;
    const st = readStat(pid);
    return st !== null && st.state !== 'Z' && st.startTime === marker.startTime;
  }

  usage(pid: number, startTime: string): ProcessUsage | null {
    const st = readStat(pid);
    if (st === null || st.startTime !== startTime || st.state === 'Z') return null;
    const ageMs = uptimeSeconds() * 1000 - (Number(st.startTime) * 1000) / USER_HZ;
    return { ppid: st.ppid, name: st.name, state: st.state, startedAt: Math.round(Date.now() - ageMs), cpuMs: (st.cpuTicks * 1000) / USER_HZ, rssKib: residentKib(pid) };
  }

  prepareSpawn(spawnId: string, command: string, args: readonly string[], o: { offLoop?: boolean } = {}): PreparedSpawn {
    const caps = this.init();
    if (caps.cgroup && this.cgroupRoot) {
      const cpuGroup = detectTreeCpuGroup(this.cgroupRoot).group?.entryDir ?? null;
      if (o.offLoop) {
        const cgroup = treeCgroupPath(this.cgroupRoot, spawnId);
        this.liveCgroups.add(cgroup);
        return { ...cgroupEntryWrapper(cgroup, command, [...args], cpuGroup), cgroup, ready: () => createTreeCgroupAsync(cgroup) };
      }
      const cgroup = createTreeCgroup(this.cgroupRoot, spawnId);
      this.liveCgroups.add(cgroup);
      return { ...cgroupEntryWrapper(cgroup, command, [...args], cpuGroup), cgroup };
    }
    return { command, args: [...args], cgroup: null };
  }

  spawnLeader(command: string, args: readonly string[], o: LeaderSpawnOptions): SpawnedLeader | null {
    const on = this.options.posixSpawn ?? process.env.SUPERVISOR_SPAWN !== 'node';
    // posix_spawn gives no stdin pipe or data channel here: such a tree takes Node's spawn().
    if (!on || o.stdin === 'pipe' || o.channel === true || !libc.libcAvailable()) return null;
    return spawnNative(command, args, { cwd: o.cwd, env: o.env, stdin: o.stdin, readers: o.readers ?? [] });
  }

  spawnLeaderAsync(command: string, args: readonly string[], o: LeaderSpawnOptions): Promise<SpawnedLeader> | null {
    const on = (this.options.posixSpawn ?? process.env.SUPERVISOR_SPAWN !== 'node') && process.env.SUPERVISOR_SPAWN !== 'main-thread';
    if (!on || o.stdin === 'pipe' || !libc.libcAvailable()) return null;
    return spawnNativeAsync(command, args, { cwd: o.cwd, env: o.env, stdin: o.stdin, readers: o.readers ?? [] });
  }

  members(tree: TreeIdentity, leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    return this.scan(tree, leaderHeld, seen).live;
  }

  signalTree(tree: TreeIdentity, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    // Enumerate before signalling, so what the signal kills is still counted.
    const { live } = this.scan(tree, leaderHeld, seen);
    this.signalMembers(tree, live, constants.signals[signal], signal, leaderHeld);
    return live;
  }

  reapAdopted(seen: Map<number, TreeMember>, exclude: ReadonlySet<number>, tree?: Pick<TreeIdentity, 'spawnId' | 'pid'>): number {
    if (!this.caps?.subreaper) return 0;
    let waiting = 0;
    for (const [pid, m] of seen) {
      if (exclude.has(pid)) continue;
      const st = readStat(pid);
      if (st === null || st.startTime !== m.startTime) {
        seen.delete(pid);
        continue;
      }
      if (st.ppid !== process.pid) continue; // someone else's to reap (a member parent, or init)
      if (st.state !== 'Z') {
        waiting++;
        continue;
      }
      const r = libc.waitpidStatusNoHang(pid);
      if (!r.reaped && r.errno !== libc.ECHILD) {
        waiting++;
        continue;
      }
      seen.delete(pid);
      if (debugOn()) debugTree('reap', tree?.spawnId ?? '-', tree?.pid, { who: pid, code: r.code, signal: r.signal === null ? null : (signalNames.get(r.signal) ?? r.signal), echild: r.reaped ? undefined : true });
    }
    return waiting;
  }

  releaseTree(tree: TreeIdentity): void {
    // rmdir succeeds once the last member is reaped; retried briefly in the background. A
    // directory still there when this process ends is removed by the next reconcile.
    if (!tree.cgroup) return;
    this.liveCgroups.delete(tree.cgroup);
    const removal = removeCgroup(tree.cgroup).then(
      () => undefined,
      () => undefined,
    );
    this.removals.add(removal);
    void removal.finally(() => this.removals.delete(removal));
  }

  private readonly removals = new Set<Promise<void>>();
  /** The cgroups of this process's trees, from prepareSpawn to releaseTree. */
  private readonly liveCgroups = new Set<string>();

  async settle(): Promise<void> {
    while (this.removals.size > 0) await Promise.all([...this.removals]);
  }

  /** Signals a bare pid only if it is still the process observed (pidfd pins it; start time names it). */
  private signalVerified(pid: number, startTime: string, signo: number): boolean {
    if (this.caps?.pidfd) {
      const fd = libc.pidfdOpen(pid);
      if (fd.value < 0) return false;
      try {
        if (startTimeOf(pid) !== startTime) return false;
        return libc.pidfdSendSignal(fd.value, signo).value === 0;
      } finally {
        closeSync(fd.value);
      }
    }
    // Without pidfd the window between check and kill is a few microseconds; documented residual risk.
    if (startTimeOf(pid) !== startTime) return false;
    try {
      process.kill(pid, signo);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The same enumeration as members(), walked in slices of at most SLICE_MS with a turn of the
   * event loop between them, so 200 trees ending together do not stall the supervisor.
   */
  async membersAsync(tree: TreeIdentity, leaderHeld: () => boolean, seen: Map<number, TreeMember>): Promise<TreeMember[]> {
    return (await this.scanAsync(tree, leaderHeld, seen)).live;
  }

  /** signalTree with the enumeration walked in slices; everything from the kill on is one synchronous block. */
  async signalTreeAsync(tree: TreeIdentity, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: () => boolean, seen: Map<number, TreeMember>): Promise<TreeMember[]> {
    const { live } = await this.scanAsync(tree, leaderHeld, seen);
    this.signalMembers(tree, live, constants.signals[signal], signal, leaderHeld());
    return live;
  }

  private signalMembers(tree: TreeIdentity, live: readonly TreeMember[], signo: number, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: boolean): void {
    const sig = signal === 'SIGKILL' ? 'KILL' : 'TERM';
    // cgroup.kill reaches every member at once, forks in flight included.
    if (signal === 'SIGKILL' && tree.cgroup) {
      try {
        killCgroup(tree.cgroup);
        if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: 'cgroup.kill' });
      } catch (err) {
        // The cgroup may already be gone with its last member; the sweep below still runs.
        if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: 'cgroup.kill', error: (err as NodeJS.ErrnoException).code ?? 'failed' });
      }
    }
    // While Node has not reaped the leader, its pid (and so the group id) cannot be reused.
    if (leaderHeld) {
      try {
        process.kill(-tree.pgid, signal);
        if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: 'group', pgid: tree.pgid });
      } catch (err) {
        // ESRCH: the group is empty.
        if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: 'group', pgid: tree.pgid, error: (err as NodeJS.ErrnoException).code ?? 'failed' });
      }
    }
    for (const m of live) {
      if (m.pid === tree.pid && leaderHeld) continue; // already reached through the group
      const sent = this.signalVerified(m.pid, m.startTime, signo);
      if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: this.caps?.pidfd ? 'pidfd' : 'verified-pid', target: m.pid, sent });
    }
  }

  private scan(tree: TreeIdentity, leaderHeld: boolean, seen: Map<number, TreeMember>): { live: TreeMember[] } {
    // A leader we no longer hold still vouches for its group while it is alive and unchanged.
    // Another live tree's processes are that tree's here too, as in the sliced walk: this is the
    // walk redone when a leader died during one, and the kill at process exit.
    const walk = this.walker(tree, leaderHeld || this.isSameProcess(tree.pid, tree.startMarker), seen, pidsInOtherTreeCgroups([tree], this.liveCgroups));
    const listed = listPids();
    for (const pid of listed) {
      const st = readStat(pid);
      if (st !== null) walk.visit(pid, st);
    }
    pruneMarkerCache(new Set(listed));
    return { live: walk.finish() };
  }

  private scanAsync(tree: TreeIdentity, leaderHeld: () => boolean, seen: Map<number, TreeMember>): Promise<{ live: TreeMember[] }> {
    return new Promise((resolve, reject) => {
      this.walkQueue.push({ tree, leaderHeld, seen, resolve, reject });
      if (!this.walking) void this.walkShared();
    });
  }

  /** Walks asked for while one is under way wait for the next, and share it. */
  private readonly walkQueue: WalkRequest[] = [];
  private walking = false;

  private async walkShared(): Promise<void> {
    this.walking = true;
    try {
      // Requests made in the same turn share the first walk.
      await new Promise<void>((r) => setImmediate(r));
      while (this.walkQueue.length > 0) {
        const batch = this.walkQueue.splice(0);
        try {
          await this.walkOnce(batch);
        } catch (err) {
          for (const r of batch) r.reject(err);
        }
      }
    } finally {
      this.walking = false;
    }
  }

  /**
   * One walk of /proc for several trees: each process's stat (and, when a rule needs it, environ)
   * is read once for all of them, in slices under the shared per-turn budget.
   */
  private async walkOnce(batch: readonly WalkRequest[]): Promise<void> {
    const inOtherTrees = pidsInOtherTreeCgroups(batch.map((r) => r.tree), this.liveCgroups);
    const trees = batch.map((r) => {
      const held = r.leaderHeld();
      const groupTrusted = held || this.isSameProcess(r.tree.pid, r.tree.startMarker);
      return { r, held, groupTrusted, walk: this.walker(r.tree, groupTrusted, r.seen, inOtherTrees) };
    });
    // A process that a member forks while the walk is under way is not in the first listing: list
    // again after each pass and visit what is new (and what was gone when visited, in case its pid
    // came back), until a listing brings nothing new. The last listing and the results are in one
    // synchronous block, so the sweep is at least as fresh as a synchronous one.
    const visited = new Set<number>();
    let pending = listPids();
    for (let pass = 0; pending.length > 0; pass++) {
      for (let i = 0; i < pending.length; i++) {
        if ((i & 7) === 0) await sliceBudget();
        const pid = pending[i]!;
        // Another tree's process is that tree's: its stat is not read, because a stat read waits
        // for a process in the middle of an exec, and the trees' processes are the ones in exec.
        if (inOtherTrees.has(pid)) {
          visited.add(pid);
          continue;
        }
        const st = readStat(pid);
        if (st === null) {
          visited.delete(pid);
          continue;
        }
        visited.add(pid);
        for (const t of trees) t.walk.visit(pid, st);
      }
      pending = listPids().filter((pid) => !visited.has(pid));
      // A fork storm outside any tree could keep the listing growing: the ladder sweeps again anyway.
      if (pass >= MAX_RELIST_PASSES) break;
    }
    pruneMarkerCache(visited);
    for (const t of trees) {
      // Group membership was trusted because the leader's pid could not be reused. That holds for
      // the whole walk only if it still holds now (unreaped, or alive and unchanged, at both ends);
      // otherwise walk again synchronously with what is true now.
      const stillTrusted = t.held ? t.r.leaderHeld() : this.isSameProcess(t.r.tree.pid, t.r.tree.startMarker);
      t.r.resolve(t.groupTrusted && !stillTrusted ? this.scan(t.r.tree, t.r.leaderHeld(), t.r.seen) : { live: t.walk.finish() });
    }
  }

  /** One enumeration's membership rules for one tree, fed one live process at a time. */
  private walker(
    tree: TreeIdentity,
    groupTrusted: boolean,
    seen: Map<number, TreeMember>,
    inOtherTrees: ReadonlySet<number> = new Set(),
  ): { visit(pid: number, st: ProcStat): void; finish(): TreeMember[] } {
    const leaderStart = BigInt(tree.startMarker.startTime);
    const inCgroup = tree.cgroup ? new Set(safeCgroupPids(tree.cgroup)) : null;
    const candidates: ProcStat[] = [];
    const members = new Map<number, ProcStat>();
    const visit = (pid: number, st: ProcStat): void => {
      if (pid === process.pid || st.state === 'Z' || st.state === 'X') return;
      // Nothing that started before the leader can belong to its tree.
      if (BigInt(st.startTime) < leaderStart) return;
      const known = seen.get(pid);
      // Read last: the environment is the most expensive rule, and once per process (spawnMarkersOf).
      // Not read where the answer is known without it, because an environ read waits for the
      // target's mmap_lock, held across an exec by a process that may be far down the run queue:
      // a process forked by another tree's process was born in that tree's cgroup and belongs to
      // it, and a direct child of this process is a tree's leader: another tree's, once this
      // tree's own leader is known (a tree still starting knows no pid and finds its leader so).
      const env = (): boolean =>
        !inOtherTrees.has(st.ppid) && !(tree.pid > 0 && isDirectChild(pid)) && spawnMarkersOf(pid, st.startTime).includes(tree.spawnId);
      if (
        (pid === tree.pid && st.startTime === tree.startMarker.startTime) ||
        (known !== undefined && known.startTime === st.startTime) ||
        inCgroup?.has(pid) ||
        (groupTrusted && (st.pgrp === tree.pgid || st.session === tree.sid)) ||
        env() ||
        (st.ppid === process.pid && !isDirectChild(pid) && tree.claimOrphan?.(BigInt(st.startTime)) === true)
      ) {
        members.set(pid, st);
      } else {
        candidates.push(st);
      }
    };
    const finish = (): TreeMember[] => {
      // Children of members are members, even if they cleared the marker from their environment.
      let grew = true;
      while (grew && candidates.length > 0) {
        grew = false;
        for (let i = candidates.length - 1; i >= 0; i--) {
          const st = candidates[i]!;
          if (members.has(st.ppid)) {
            members.set(st.pid, st);
            candidates.splice(i, 1);
            grew = true;
          }
        }
      }
      const live: TreeMember[] = [];
      const logging = debugOn();
      for (const st of members.values()) {
        const leftSession = st.pid !== tree.pid && st.session !== tree.sid;
        const m: TreeMember = {
          pid: st.pid,
          startTime: st.startTime,
          escapee: leftSession || (st.pid !== tree.pid && st.ppid === process.pid),
          leftSession,
        };
        const prev = seen.get(st.pid);
        const same = prev !== undefined && prev.startTime === st.startTime;
        // First sighting of an escapee (or an old member becoming one): adopted into this tree.
        if (logging && m.escapee && !(same && prev.escapee)) {
          debugTree('adopt', tree.spawnId, tree.pid, { member: st.pid, ppid: st.ppid === process.pid ? 'self' : st.ppid, left_session: leftSession });
        }
        if (same) m.escapee ||= prev.escapee;
        seen.set(st.pid, m);
        live.push(m);
      }
      return live;
    };
    return { visit, finish };
  }
}

const signalNames = new Map<number, string>(Object.entries(constants.signals).map(([k, v]) => [v, k]));

interface WalkRequest {
  tree: TreeIdentity;
  leaderHeld: () => boolean;
  seen: Map<number, TreeMember>;
  resolve: (r: { live: TreeMember[] }) => void;
  reject: (err: unknown) => void;
}

/**
 * Most /proc reading per turn of the event loop, shared by every walk in this process: with one
 * yield per walk, 200 walks would each take a slice in the same check phase, back to back.
 */
const SLICE_MS = 3;
const MAX_RELIST_PASSES = 8;
let turnStartedAt = performance.now();
let nextTurn: Promise<void> | null = null;

/** Resolves at once while this turn's budget lasts, else on a later turn (walks take turns in order). */
async function sliceBudget(): Promise<void> {
  while (performance.now() - turnStartedAt > SLICE_MS) {
    nextTurn ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        nextTurn = null;
        turnStartedAt = performance.now();
        resolve();
      }),
    );
    await nextTurn;
  }
}

/**
 * Every pid directly in the cgroup of a tree of this process other than the given ones, when every
 * tree of the batch has a cgroup (else none: a tree without one may have members anywhere). Only
 * `cgroup.procs` is read, never a directory listing: a cgroup directory is locked by a mkdir or
 * rmdir beside it, which waits for the kernel's cgroup_mutex. A process of ours that moved itself
 * into another tree's cgroup (it needs write access to it: root) is left to that tree.
 */
function pidsInOtherTreeCgroups(trees: readonly Pick<TreeIdentity, 'cgroup'>[], live: ReadonlySet<string>): ReadonlySet<number> {
  const pids = new Set<number>();
  if (trees.some((t) => !t.cgroup)) return pids;
  const own = new Set(trees.map((t) => t.cgroup!));
  for (const dir of live) if (!own.has(dir)) for (const pid of cgroupProcs(dir)) pids.add(pid);
  return pids;
}

function safeCgroupPids(path: string): number[] {
  try {
    return cgroupPids(path);
  } catch {
    return [];
  }
}
