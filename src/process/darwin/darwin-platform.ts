// macOS: a new session and process group per tree, TERM→KILL to the group while the leader is
// unreaped, and a sweep that finds the rest by process group, session, SUPERVISOR_SPAWN_ID marker,
// earlier sighting or descent, with every bare pid's start time (proc_pidinfo) checked right before
// kill(2). macOS has no subreaper, no pidfd and no cgroups: orphans go to launchd (pid 1), which
// reaps them, and the check-then-kill window cannot be closed (see docs/security-model.md).
//
// All OS access goes through a DarwinProcessSource (libproc through ffi-rs, or `ps`), chosen on
// first use; tests inject a fake one, so this file runs anywhere but touches the OS only on macOS.
import { debugOn, debugTree } from '../debug-log.js';
import type { PlatformCapabilities, PreparedSpawn, ProcessPlatform, ProcessUsage, TreeIdentity, TreeMember } from '../platform.js';
import type { StartMarker } from '../types.js';
import { sameStart, startedBefore } from './proc-info.js';
import type { DarwinProc, DarwinProcessSource } from './process-source.js';
import { defaultDarwinSource } from './select-source.js';

/** Same name as SPAWN_ID_ENV in supervised-tree.ts (kept literal, as on Linux, to keep this module light). */
const MARKER_NAME = 'SUPERVISOR_SPAWN_ID';
/** launchd: every orphan is re-parented to it. */
const LAUNCHD_PID = 1;
/**
 * How far the start implied by ps's elapsed time may be from the start marker and still be the
 * same process (both are whole seconds from ps; a loaded machine delays the read by a little).
 */
const SAME_START_SLACK_MS = 3_000;

export interface DarwinPlatformOptions {
  /** The OS access; default: libproc through ffi-rs, or `ps` when ffi-rs cannot be loaded (macOS only). */
  source?: DarwinProcessSource;
  /** This supervisor's pid, never a member (default process.pid). */
  selfPid?: number;
}

export class DarwinPlatform implements ProcessPlatform {
  readonly name = 'darwin' as const;
  private caps: PlatformCapabilities | undefined;
  private src: DarwinProcessSource | undefined;
  private readonly selfPid: number;

  constructor(private readonly options: DarwinPlatformOptions = {}) {
    this.selfPid = options.selfPid ?? process.pid;
  }

  /** The source in use ('libproc' or 'ps' on macOS). Throws DarwinOnlyError off macOS unless one was injected. */
  get source(): DarwinProcessSource {
    this.src ??= this.options.source ?? defaultDarwinSource();
    return this.src;
  }

  init(): PlatformCapabilities {
    if (this.caps) return this.caps;
    // Choosing the source probes it (ffi-rs loads, libproc answers, or ps runs).
    void this.source.bootId();
    this.caps = { subreaper: false, pidfd: false, cgroup: false };
    return this.caps;
  }

  startMarker(pid: number): StartMarker | null {
    const p = this.source.info(pid);
    return p === null ? null : { platform: 'darwin', bootId: this.source.bootId(), startTime: p.startTime };
  }

  isSameProcess(pid: number, marker: StartMarker): boolean {
    const src = this.source;
    if (marker.platform !== 'darwin' || marker.bootId !== src.bootId()) return false;
    const p = src.info(pid);
    return p !== null && !p.zombie && sameStart(p.startTime, marker.startTime, src.coarseStartTime);
  }

  /** usageOfMany of one process. */
  usage(pid: number, startTime: string): ProcessUsage | null {
    return this.usageOfMany([{ pid, startTime }]).get(pid) ?? null;
  }

  /**
   * What an operator is shown of live members: each one's start from the marker the walk checked
   * (the identity, read again here; a zombie or another start shows nothing), the figures from one
   * read of the source (ps) for all of them, each row used only if it is the same process, judged
   * by its elapsed time: a pid reused between the two reads shows nothing rather than a stranger's.
   */
  usageOfMany(members: readonly { pid: number; startTime: string }[]): Map<number, ProcessUsage | null> {
    const src = this.source;
    const out = new Map<number, ProcessUsage | null>();
    const live = new Map<number, { ppid: number; startedAt: number }>();
    for (const m of members) {
      const p = src.info(m.pid);
      if (p === null || p.zombie || p.startTime !== m.startTime) out.set(m.pid, null);
      else live.set(m.pid, { ppid: p.ppid, startedAt: Number(BigInt(p.startTime) / 1000n) });
    }
    const rows = src.usage?.([...live.keys()]);
    const now = Date.now();
    for (const [pid, { ppid, startedAt }] of live) {
      if (rows === undefined) {
        out.set(pid, { ppid, name: '', state: null, startedAt, cpuMs: null, rssKib: null });
        continue;
      }
      const u = rows.get(pid);
      const same = u !== undefined && Math.abs(now - u.elapsedMs - startedAt) <= SAME_START_SLACK_MS;
      out.set(pid, same ? { ppid: u.ppid, name: u.name, state: u.state, startedAt, cpuMs: u.cpuMs, rssKib: u.rssKib } : null);
    }
    return out;
  }

  /** No cgroup to enter: the command runs as given, in the session `detached: true` creates. */
  prepareSpawn(_spawnId: string, command: string, args: readonly string[]): PreparedSpawn {
    return { command, args: [...args], cgroup: null };
  }

  members(tree: TreeIdentity, leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    return this.scan(tree, leaderHeld, seen);
  }

  signalTree(tree: TreeIdentity, signal: 'SIGTERM' | 'SIGKILL', leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    // Enumerate before signalling, so what the signal kills is still counted.
    const live = this.scan(tree, leaderHeld, seen);
    // While Node has not reaped the leader, its pid (and so the group id) cannot be reused.
    const sig = signal === 'SIGKILL' ? 'KILL' : 'TERM';
    if (leaderHeld && tree.pgid > LAUNCHD_PID) {
      const sent = this.source.kill(-tree.pgid, signal);
      if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: 'group', pgid: tree.pgid, sent });
    }
    for (const m of live) {
      if (m.pid === tree.pid && leaderHeld) continue; // already reached through the group
      const sent = this.signalVerified(m.pid, m.startTime, signal);
      if (debugOn()) debugTree('signal', tree.spawnId, tree.pid, { sig, via: 'verified-pid', target: m.pid, sent });
    }
    return live;
  }

  /** Nothing is ever adopted: without a subreaper, orphans go to launchd, which reaps them. */
  reapAdopted(_seen: Map<number, TreeMember>, _exclude: ReadonlySet<number>): number {
    return 0;
  }

  releaseTree(_tree: TreeIdentity): void {}

  /**
   * Signals a bare pid only if it still has the start time observed. There is no pidfd on macOS:
   * between this check and kill(2) the process could exit, be reaped and its pid be reused. That
   * window is a few microseconds (libproc) and is a documented residual risk.
   */
  private signalVerified(pid: number, startTime: string, signal: NodeJS.Signals): boolean {
    if (pid <= LAUNCHD_PID || pid === this.selfPid) return false;
    const p = this.source.info(pid);
    if (p === null || p.zombie || p.startTime !== startTime) return false;
    return this.source.kill(pid, signal);
  }

  private scan(tree: TreeIdentity, leaderHeld: boolean, seen: Map<number, TreeMember>): TreeMember[] {
    const src = this.source;
    const coarse = src.coarseStartTime;
    const leaderStart = tree.startMarker.startTime;
    // A leader we no longer hold still vouches for its group while it is alive and unchanged.
    const groupTrusted = leaderHeld || this.isSameProcess(tree.pid, tree.startMarker);
    const sids = new Map<number, number | null>();
    const sidOf = (pid: number): number | null => {
      if (!sids.has(pid)) sids.set(pid, src.sid(pid));
      return sids.get(pid) ?? null;
    };
    const candidates: DarwinProc[] = [];
    const members = new Map<number, DarwinProc>();
    for (const p of src.list()) {
      // kernel_task, launchd and the supervisor itself are never members.
      if (p.pid <= LAUNCHD_PID || p.pid === this.selfPid || p.zombie) continue;
      // Nothing that started before the leader can belong to its tree.
      if (startedBefore(p.startTime, leaderStart, coarse)) continue;
      const known = seen.get(p.pid);
      if (
        (p.pid === tree.pid && sameStart(p.startTime, leaderStart, coarse)) ||
        (known !== undefined && known.startTime === p.startTime) ||
        (groupTrusted && (p.pgid === tree.pgid || sidOf(p.pid) === tree.sid)) ||
        src.environHas(p.pid, MARKER_NAME, tree.spawnId)
      ) {
        members.set(p.pid, p);
      } else {
        candidates.push(p);
      }
    }
    // Children of members are members, even if they cleared the marker from their environment.
    let grew = true;
    while (grew && candidates.length > 0) {
      grew = false;
      for (let i = candidates.length - 1; i >= 0; i--) {
        const p = candidates[i]!;
        if (members.has(p.ppid)) {
          members.set(p.pid, p);
          candidates.splice(i, 1);
          grew = true;
        }
      }
    }
    const live: TreeMember[] = [];
    for (const p of members.values()) {
      const sid = p.pid === tree.pid ? tree.sid : sidOf(p.pid);
      // Without a session id (the ps fallback) leaving the process group is the best evidence.
      const leftSession = p.pid !== tree.pid && (sid !== null ? sid !== tree.sid : p.pgid !== tree.pgid);
      const m: TreeMember = {
        pid: p.pid,
        startTime: p.startTime,
        // Re-parented to launchd: its parent died (orphans the ladder itself makes are sorted out by terminate.ts).
        escapee: leftSession || (p.pid !== tree.pid && p.ppid === LAUNCHD_PID),
        leftSession,
      };
      const prev = seen.get(p.pid);
      if (prev && prev.startTime === p.startTime) m.escapee ||= prev.escapee;
      seen.set(p.pid, m);
      live.push(m);
    }
    return live;
  }
}
