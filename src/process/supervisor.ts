// The process registry: every live tree of this supervisor, the shutdown path that kills them,
// and the reconciliation of trees left behind by a predecessor that died.
import { isAbsolute, join } from 'node:path';
import { openStore, type Database } from '../store/database.js';
import { ensurePrivateDir } from '../store/private-files.js';
import { SpawnRecordStore, type PendingTreeCancel, type SpawnRecord } from '../store/spawn-records.js';
import { appendEvent } from '../store/event-chain.js';
import { reconcileDeadOwners, type InterruptedSession } from '../store/owner-reconcile.js';
import { commandName, debugOn, debugTree } from './debug-log.js';
import { SpawnError } from './errors.js';
import type { PlatformCapabilities, ProcessPlatform, TreeIdentity, TreeMember } from './platform.js';
import { hostPlatform } from './host-platform.js';
import { childLedgerInstalled, installChildLedger } from './child-ledger.js';
import { LiveTree, serializeMarker, type TreeContext } from './supervised-tree.js';
import { killTreeSync, terminateTree } from './terminate.js';
import type { SpawnTreeOptions, StartMarker, SupervisedTree, TreeOutcome } from './types.js';

export interface ProcessSupervisorOptions {
  /** Absolute directory for the store and artifacts, chosen by the operator, never by a child. */
  stateDir: string;
  platform?: ProcessPlatform;
  /** Poll interval of the termination ladder (default 10 ms). */
  pollMs?: number;
  /** Reconcile records of dead predecessors on open (default true). */
  reconcile?: boolean;
  /**
   * A WAL checkpoint thread for the store (default true). A short-lived supervisor that writes a
   * few rows (`exec`) turns it off: SQLite's automatic checkpoint and the one at close suffice, and
   * the thread cost it a third of its start-up (decision 65). Commits are the same either way.
   */
  checkpointer?: boolean;
  /** How often the store is read for operators' cancel requests addressed to this supervisor's trees (default 200 ms). */
  cancelPollMs?: number;
  /**
   * The principal whose session this supervisor serves: written on every tree's spawn record, so an
   * operator of another principal neither sees nor cancels the tree even when both principals'
   * sessions live in one process (decision 123). A tree's own `principal` option wins.
   */
  principal?: string;
}

export interface ReconciledTree {
  spawnId: string;
  pid: number;
  command: string;
  /** Processes killed: the leader if its start marker still matched, plus marked escapees. */
  killed: number;
  leaderMatched: boolean;
  sameBoot: boolean;
}

export interface ReconcileReport {
  checked: number;
  interrupted: ReconciledTree[];
  /** Records owned by another supervisor that is still alive: left alone. */
  skippedLiveOwner: number;
  /** Sessions a dead supervisor left running, now interrupted with their turns, tasks and pending approvals. */
  sessions: InterruptedSession[];
  /** Background tasks a dead supervisor left running outside such a session, now interrupted. */
  strayTasks: string[];
}

export class ProcessSupervisor {
  readonly stateDir: string;
  private readonly principal: string | null;
  readonly capabilities: PlatformCapabilities;
  readonly records: SpawnRecordStore;
  private readonly db: Database;
  private readonly platform: ProcessPlatform;
  private readonly live = new Set<LiveTree>();
  /** Spawns of spawnTreeAsync not yet returned (their leaders may already run). */
  private inFlight = 0;
  private readonly spawning = new Set<Promise<void>>();
  /** Trees of those spawns (recorded `starting`, no pid yet), for a forced shutdown. */
  private readonly starting = new Set<LiveTree>();
  private readonly ownerMarker: StartMarker;
  private readonly pollMs: number;
  private closed = false;
  private readonly closeHooks = new Set<() => void | Promise<void>>();
  /** Operators' cancel requests for our trees (decision 110): polled, each acted on once. */
  private readonly cancelTimer: NodeJS.Timeout;
  private readonly cancelling = new Set<string>();
  lastReconcile: ReconcileReport | null = null;

  private constructor(options: ProcessSupervisorOptions) {
    if (!isAbsolute(options.stateDir)) {
      throw new SpawnError('SPAWN_FAILED', `stateDir must be an absolute path, got ${JSON.stringify(options.stateDir)}`);
    }
    this.stateDir = options.stateDir;
    this.principal = options.principal ?? null;
    // 0700 and ours, or refused: the store, artifacts and tokens inside are private (security-model.md).
    ensurePrivateDir(this.stateDir);
    this.platform = options.platform ?? hostPlatform();
    installChildLedger();
    // Subreaper and capability probes happen here, on the main thread.
    this.capabilities = this.platform.init();
    const own = this.platform.startMarker(process.pid);
    if (!own) throw new SpawnError('SPAWN_FAILED', 'cannot read the supervisor’s own start marker');
    this.ownerMarker = own;
    this.db = openStore(join(this.stateDir, 'supervisor.db'), { checkpointer: options.checkpointer !== false });
    this.records = new SpawnRecordStore(this.db);
    this.pollMs = options.pollMs ?? 10;
    this.cancelTimer = setInterval(() => this.pollCancelRequests(), options.cancelPollMs ?? 200);
    this.cancelTimer.unref();
  }

  static open(options: ProcessSupervisorOptions): ProcessSupervisor {
    const s = new ProcessSupervisor(options);
    if (options.reconcile !== false) s.lastReconcile = s.reconcile();
    return s;
  }

  /** This supervisor as an owner of sessions and tasks: a later start judges it alive by both. */
  get owner(): { pid: number; startMarker: string } {
    return { pid: process.pid, startMarker: serializeMarker(this.ownerMarker) };
  }

  spawnTree(options: SpawnTreeOptions): SupervisedTree {
    if (this.closed) throw new SpawnError('SUPERVISOR_CLOSED', 'the supervisor is shutting down and starts no new process');
    const tree = new LiveTree(this.treeContext(), options);
    this.live.add(tree);
    return tree;
  }

  /**
   * spawnTree with the leader's spawn off the event loop where the platform can (decision 59):
   * the tree is recorded `starting` first, the pid and the running record follow when the spawn
   * returns. Same tree, same guarantees; the promise rejects where spawnTree would throw.
   */
  async spawnTreeAsync(options: SpawnTreeOptions): Promise<SupervisedTree> {
    if (this.closed) throw new SpawnError('SUPERVISOR_CLOSED', 'the supervisor is shutting down and starts no new process');
    this.inFlight++;
    const started = LiveTree.start(this.treeContext(), options, this.starting).then((tree) => {
      this.live.add(tree);
      return tree;
    });
    const settled = started.then(
      () => undefined,
      () => undefined,
    );
    this.spawning.add(settled);
    try {
      return await started;
    } finally {
      this.inFlight--;
      this.spawning.delete(settled);
    }
  }

  private treeContext(): TreeContext {
    return {
      platform: this.platform,
      records: this.records,
      stateDir: this.stateDir,
      ownerPid: process.pid,
      ownerStartMarker: serializeMarker(this.ownerMarker),
      principal: this.principal,
      leaders: () => this.heldLeaders(),
      soleOwner: (self, t) => {
        // A leader being spawned on a thread is our direct child but not yet on the ledger: while
        // one is in flight, no unmarked orphan is claimed.
        if (!childLedgerInstalled() || this.inFlight > 0) return false;
        for (const other of this.live) {
          if (other !== self && BigInt(other.startMarker.startTime) <= t) return false;
        }
        return true;
      },
      settled: (t) => this.live.delete(t),
      pollMs: this.pollMs,
    };
  }

  liveTrees(): SupervisedTree[] {
    return [...this.live];
  }

  /** Graceful: every live tree gets the full ladder; resolves when all are gone. */
  async stopAll(reason: 'cancelled' | 'timeout' = 'cancelled'): Promise<TreeOutcome[]> {
    return Promise.all([...this.live].map((t) => t.stop(reason)));
  }

  /** Forced and synchronous: for process 'exit' and a second Ctrl-C. */
  killAllSync(): number {
    let n = 0;
    // Spawns still on their threads: found by cgroup and marker (their pid is not known here).
    for (const t of this.starting) n += t.killStartingSync().descendants;
    for (const t of this.live) {
      const r = t.killSync();
      n += r.descendants + 1;
    }
    return n;
  }

  /**
   * Runs `hook` when close() begins, before the remaining trees are stopped: owners of pooled
   * trees (tool hosts) stop them their own way and stop replacing them. Returns an unregister.
   */
  onClose(hook: () => void | Promise<void>): () => void {
    this.closeHooks.add(hook);
    return () => this.closeHooks.delete(hook);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * An operator asked (through the store: the web page, `supervisor cancel sp_…`) to stop one of
   * our trees. The tree is stopped as a task cancel stops one (TERM, then KILL, to the whole
   * group or cgroup); whoever waits on it (a tool call, a task) sees the outcome `cancelled`.
   * A tree still being spawned is taken at a later poll, once it is live.
   */
  private pollCancelRequests(): void {
    if (this.closed) return;
    let requests: PendingTreeCancel[];
    try {
      requests = this.records.cancelRequests(this.owner);
    } catch {
      return; // the store is busy or closing: the next poll asks again
    }
    for (const r of requests) {
      if (this.cancelling.has(r.spawnId)) continue;
      const tree = [...this.live].find((t) => t.spawnId === r.spawnId);
      if (tree === undefined) continue;
      this.cancelling.add(r.spawnId);
      void this.cancelTree(tree, r);
    }
  }

  /** Stops the tree, then records who asked and how it ended in the audit chain of the tree's session. */
  private async cancelTree(tree: LiveTree, r: PendingTreeCancel): Promise<void> {
    const outcome = await tree.stop('cancelled').catch(() => null);
    this.cancelling.delete(r.spawnId);
    if (r.sessionId === null || !this.db.open) return;
    try {
      appendEvent(this.db, r.sessionId, 'tree.cancelled', {
        spawn_id: r.spawnId,
        requested_by: r.requestedBy,
        requested_at: r.requestedAt,
        outcome: outcome?.reason ?? 'failed',
        killed: outcome?.killed ?? null,
      });
    } catch {
      // The spawn record (status cancelled) stays the record; audit verify reports a chain it could not extend.
    }
  }

  /** Stops everything and closes the store. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.cancelTimer);
    const hooks = [...this.closeHooks];
    this.closeHooks.clear();
    // A hook that fails must not keep the trees alive: stopAll below still runs.
    await Promise.allSettled(hooks.map(async (h) => h()));
    // Spawns on their threads become live trees first, so the stop below reaches them.
    await Promise.all([...this.spawning]);
    await this.stopAll('cancelled');
    // Cgroup directories are removed off the loop; none is left behind by a clean close.
    await this.platform.settle?.();
    this.db.close();
  }

  /**
   * Kills trees whose owner died: records still `running` whose owner process is gone or is no
   * longer the same process. A leader is killed only if (boot id, pid, start marker) still match;
   * marked escapees are found by their SUPERVISOR_SPAWN_ID and killed after a pidfd check.
   * Then the store's sessions, turns, tasks and pending approvals of dead owners are marked
   * interrupted, after their trees are gone.
   */
  reconcile(): ReconcileReport {
    const report: ReconcileReport = { checked: 0, interrupted: [], skippedLiveOwner: 0, sessions: [], strayTasks: [] };
    for (const rec of this.records.running()) {
      report.checked++;
      if (this.ownerAlive(rec)) {
        report.skippedLiveOwner++;
        if (debugOn()) debugTree('reconcile', rec.spawnId, rec.pid, { owner: rec.ownerPid, owner_alive: true, action: 'skip' });
        continue;
      }
      const marker = parseMarker(rec.startMarker);
      const sameBoot = marker !== null && marker.platform === process.platform && marker.bootId === this.ownerMarker.bootId;
      // A `starting` row (decision 59): the owner died while the leader's spawn ran on its thread,
      // so no pid is known. Its marker is the owner's start, a lower bound of the tree's; members
      // are found by the tree's cgroup and its SUPERVISOR_SPAWN_ID, and their descendants.
      const starting = rec.status === 'starting';
      let killed = 0;
      let leaderMatched = false;
      if (sameBoot && marker) {
        leaderMatched = !starting && this.platform.isSameProcess(rec.pid, marker);
        const tree: TreeIdentity = starting
          ? { spawnId: rec.spawnId, pid: -1, pgid: -1, sid: -1, startMarker: marker, cgroup: rec.cgroup }
          : { spawnId: rec.spawnId, pid: rec.pid, pgid: rec.pgid, sid: rec.sid, startMarker: marker, cgroup: rec.cgroup };
        const seen = new Map<number, TreeMember>();
        const tally = new Map<string, TreeMember>();
        const r = killTreeSync({ platform: this.platform, tree, leaderHeld: () => false, leaders: () => this.heldLeaders(), seen, tally });
        killed = tally.size;
        try {
          this.platform.releaseTree(tree);
        } catch {
          // left for the next reconcile
        }
        void r;
      }
      this.records.finish(rec.spawnId, {
        status: 'interrupted',
        exitCode: null,
        signal: null,
        endedAt: Date.now(),
        detail: `owner pid ${rec.ownerPid} died${starting ? ' while the tree was starting' : ''}; reconciled by pid ${process.pid}: ${killed} process(es) killed${sameBoot ? '' : ' (different boot: nothing left to kill)'}`,
      });
      if (debugOn()) {
        debugTree('reconcile', rec.spawnId, rec.pid, { owner: rec.ownerPid, owner_alive: false, starting, same_boot: sameBoot, leader_matched: leaderMatched, killed, cmd: commandName(rec.command) });
      }
      report.interrupted.push({ spawnId: rec.spawnId, pid: rec.pid, command: rec.command, killed, leaderMatched, sameBoot });
    }
    const rows = reconcileDeadOwners(this.db, (pid, marker) => this.processAlive(pid, marker), process.pid);
    report.sessions = rows.sessions;
    report.strayTasks = rows.strayTasks;
    return report;
  }

  private ownerAlive(rec: SpawnRecord): boolean {
    return this.processAlive(rec.ownerPid, rec.ownerStartMarker);
  }

  /**
   * Whether `pid` is still the process that was recorded. Without a marker (rows from before
   * markers were stored) only the pid can be asked, so a live pid counts as alive: a reused pid
   * leaves a row running a little longer, never interrupts a live owner's work.
   */
  private processAlive(pid: number, marker: string | null): boolean {
    if (pid === process.pid && (marker === null || marker === serializeMarker(this.ownerMarker))) return true;
    if (marker === null) return this.platform.startMarker(pid) !== null;
    const owner = parseMarker(marker);
    return owner !== null && this.platform.isSameProcess(pid, owner);
  }

  private heldLeaders(): ReadonlySet<number> {
    const s = new Set<number>();
    for (const t of this.live) if (t.leaderHeld) s.add(t.pid);
    return s;
  }
}

export function parseMarker(s: string): StartMarker | null {
  const m = /^([a-z0-9]+):([^:]*):(\d+)$/.exec(s);
  if (!m) return null;
  return { platform: m[1] as NodeJS.Platform, bootId: m[2]!, startTime: m[3]! };
}

export { terminateTree };
