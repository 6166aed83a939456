// Spawn records: written as soon as a pid exists (or, for a spawn made off the event loop, as a
// `starting` row before it, decision 59), finalized when the whole tree is gone.
import type { Database } from './database.js';
import { faultPoint } from './fault-injection.js';
import type { PrincipalScope } from './session-store.js';

export type SpawnStatus = 'starting' | 'running' | 'exited' | 'timeout' | 'cancelled' | 'failed' | 'interrupted';

export interface SpawnRecord {
  spawnId: string;
  /** 0 in a `starting` row: the pid is not known yet (NULL in the table). */
  pid: number;
  pgid: number;
  sid: number;
  platform: string;
  bootId: string;
  startMarker: string;
  cgroup: string | null;
  /** The program name only: arguments may carry secrets and stay out of the store. */
  command: string;
  ownerPid: number;
  ownerStartMarker: string;
  /** The principal whose session started the tree; null: started outside any session (exec, a probe). */
  principal: string | null;
  status: SpawnStatus;
  exitCode: number | null;
  signal: string | null;
  startedAt: number;
  endedAt: number | null;
  detail: string | null;
}

/** What a cancel request addressed to a tree came to (requestCancel). */
export type TreeCancelRequest =
  /** Recorded now; the owning supervisor stops the tree within a fraction of a second. */
  | { kind: 'requested'; record: SpawnRecord; sessionId: string; requestedBy: string }
  /** Asked before (by `requestedBy`) and not acted on yet: nothing changed. */
  | { kind: 'pending'; record: SpawnRecord; sessionId: string; requestedBy: string }
  /** The principal's tree, ended already (its record is final): nothing to stop. */
  | { kind: 'ended'; record: SpawnRecord; sessionId: string }
  /** No such tree, or another principal's: the same answer, so an id of someone else's reads as unknown. */
  | { kind: 'not-found' };

/** A request the owning supervisor is to act on. */
export interface PendingTreeCancel {
  spawnId: string;
  requestedBy: string;
  requestedAt: number;
  /** The session whose audit chain records the cancel (the tree's session when it was asked). */
  sessionId: string | null;
}

/** A tree not yet finished, with the session (and background task, if any) it belongs to. */
export interface OwnedSpawn {
  record: SpawnRecord;
  sessionId: string;
  /** The background task whose tree it is (cancellable with the task); null for a call's own tree. */
  taskId: string | null;
  /** Who asked its owner to stop it (a cancel by spawn id not acted on yet), or null. */
  cancelRequestedBy: string | null;
}

interface Row {
  spawn_id: string;
  pid: number | null;
  pgid: number | null;
  sid: number | null;
  platform: string;
  boot_id: string;
  start_marker: string;
  cgroup: string | null;
  command: string;
  owner_pid: number;
  owner_start_marker: string;
  status: SpawnStatus;
  exit_code: number | null;
  signal: string | null;
  started_at: number;
  ended_at: number | null;
  detail: string | null;
  cancel_requested_at?: number | null;
  cancel_requested_by?: string | null;
  cancel_session_id?: string | null;
  principal: string | null;
}

function fromRow(r: Row): SpawnRecord {
  return {
    spawnId: r.spawn_id,
    pid: r.pid ?? 0,
    pgid: r.pgid ?? 0,
    sid: r.sid ?? 0,
    platform: r.platform,
    bootId: r.boot_id,
    startMarker: r.start_marker,
    cgroup: r.cgroup,
    command: r.command,
    ownerPid: r.owner_pid,
    ownerStartMarker: r.owner_start_marker,
    principal: r.principal,
    status: r.status,
    exitCode: r.exit_code,
    signal: r.signal,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    detail: r.detail,
  };
}

export class SpawnRecordStore {
  private readonly insertStmt;
  private readonly finishStmt;
  private readonly getStmt;
  private readonly runningStmt;
  private readonly startingStmt;
  private readonly startedStmt;
  private readonly ownedStmt;
  private readonly ownerOfStmt;
  private readonly requestCancelStmt;
  private readonly cancelRequestsStmt;

  constructor(private readonly db: Database) {
    this.insertStmt = db.prepare(`INSERT INTO spawns
      (spawn_id, pid, pgid, sid, platform, boot_id, start_marker, cgroup, command, owner_pid, owner_start_marker, principal, status, started_at)
      VALUES (@spawnId, @pid, @pgid, @sid, @platform, @bootId, @startMarker, @cgroup, @command, @ownerPid, @ownerStartMarker, @principal, 'running', @startedAt)`);
    this.finishStmt = db.prepare(`UPDATE spawns SET status = @status, exit_code = @exitCode, signal = @signal,
      ended_at = @endedAt, detail = @detail WHERE spawn_id = @spawnId`);
    this.getStmt = db.prepare('SELECT * FROM spawns WHERE spawn_id = ?');
    this.runningStmt = db.prepare("SELECT * FROM spawns WHERE status IN ('starting', 'running') ORDER BY started_at");
    this.startingStmt = db.prepare(`INSERT INTO spawns
      (spawn_id, pid, pgid, sid, platform, boot_id, start_marker, cgroup, command, owner_pid, owner_start_marker, principal, status, started_at)
      VALUES (@spawnId, NULL, NULL, NULL, @platform, @bootId, @startMarker, @cgroup, @command, @ownerPid, @ownerStartMarker, @principal, 'starting', @startedAt)`);
    // The principal's trees: a task's tree belongs to the task's session; any other tree to the
    // running session of the process that owns it, a root session first (a run's delegated children
    // run in its process: no spawn record says which of them made a call's tree), the oldest first.
    // A tree recorded for another principal is never the principal's (decision 123: one process may
    // host several principals' sessions); another principal's trees are not returned.
    this.ownedStmt = db.prepare(`SELECT * FROM (
        SELECT s.*, t.id AS task_id,
          CASE WHEN t.id IS NOT NULL
            THEN (SELECT se.id FROM sessions se WHERE se.id = t.session_id AND se.principal = @principal)
            WHEN s.principal IS NOT NULL AND s.principal <> @principal THEN NULL
            ELSE (SELECT se.id FROM sessions se WHERE se.principal = @principal AND se.status = 'running'
                  AND se.owner_pid = s.owner_pid AND se.owner_start_marker = s.owner_start_marker
                  ORDER BY EXISTS (SELECT 1 FROM tasks ct WHERE ct.child_session_id = se.id), se.created_at, se.id LIMIT 1)
          END AS owned_session
        FROM spawns s LEFT JOIN tasks t ON t.spawn_id = s.spawn_id
        WHERE s.status IN ('starting', 'running'))
      WHERE owned_session IS NOT NULL ORDER BY started_at, spawn_id LIMIT @limit`);
    // One tree's session for the principal, whatever its state: a task's session, else a session of
    // the principal's run in the owning process: a running one first, as runningOwnedBy picks it
    // (an ended tree's session may have ended with it). Null: not the principal's tree.
    this.ownerOfStmt = db.prepare(`SELECT s.*,
        CASE WHEN t.id IS NOT NULL
          THEN (SELECT se.id FROM sessions se WHERE se.id = t.session_id AND se.principal = @principal)
          WHEN s.principal IS NOT NULL AND s.principal <> @principal THEN NULL
          ELSE (SELECT se.id FROM sessions se WHERE se.principal = @principal
                AND se.owner_pid = s.owner_pid AND se.owner_start_marker = s.owner_start_marker
                ORDER BY se.status <> 'running', EXISTS (SELECT 1 FROM tasks ct WHERE ct.child_session_id = se.id), se.created_at, se.id LIMIT 1)
        END AS owned_session
      FROM spawns s LEFT JOIN tasks t ON t.spawn_id = s.spawn_id WHERE s.spawn_id = @spawnId`);
    this.requestCancelStmt = db.prepare(`UPDATE spawns SET cancel_requested_at = @at, cancel_requested_by = @by, cancel_session_id = @sessionId
      WHERE spawn_id = @spawnId AND status IN ('starting', 'running') AND cancel_requested_at IS NULL`);
    this.cancelRequestsStmt = db.prepare(`SELECT spawn_id, cancel_requested_by, cancel_requested_at, cancel_session_id FROM spawns
      WHERE owner_pid = ? AND owner_start_marker = ? AND status IN ('starting', 'running') AND cancel_requested_at IS NOT NULL`);
    this.startedStmt = db.prepare(`UPDATE spawns SET pid = @pid, pgid = @pgid, sid = @sid, boot_id = @bootId, start_marker = @startMarker,
      status = 'running', started_at = @startedAt WHERE spawn_id = @spawnId AND status = 'starting'`);
  }

  insert(r: Omit<SpawnRecord, 'status' | 'exitCode' | 'signal' | 'endedAt' | 'detail' | 'principal'> & { principal?: string | null }): void {
    this.insertStmt.run({ ...r, principal: r.principal ?? null });
    faultPoint(this.db, 'spawn');
  }

  /**
   * Before a spawn made off the event loop: the tree is on record (cgroup, owner, spawn id, which
   * is its SUPERVISOR_SPAWN_ID marker) before its first process exists. `startMarker` is a lower
   * bound of the tree's start (the owner's own marker): nothing older can be a member.
   */
  insertStarting(r: Pick<SpawnRecord, 'spawnId' | 'platform' | 'bootId' | 'startMarker' | 'cgroup' | 'command' | 'ownerPid' | 'ownerStartMarker' | 'principal' | 'startedAt'>): void {
    this.startingStmt.run(r);
  }

  /** The pid is known: the starting row becomes an ordinary running one. Throws if it was not starting. */
  started(r: Pick<SpawnRecord, 'spawnId' | 'pid' | 'pgid' | 'sid' | 'bootId' | 'startMarker' | 'startedAt'>): void {
    if (this.startedStmt.run(r).changes !== 1) throw new Error(`spawn record ${r.spawnId} is not starting`);
    // The same crash point as insert(): the record with the pid is committed (decision 57).
    faultPoint(this.db, 'spawn');
  }

  finish(spawnId: string, f: { status: SpawnStatus; exitCode: number | null; signal: string | null; endedAt: number; detail: string | null }): void {
    this.finishStmt.run({ spawnId, ...f });
  }

  get(spawnId: string): SpawnRecord | undefined {
    const r = this.getStmt.get(spawnId) as Row | undefined;
    return r && fromRow(r);
  }

  /** The principal's unfinished trees (at most `limit`), oldest first: what `supervisor ps` and the web page show. */
  runningOwnedBy(scope: PrincipalScope, limit = 200): OwnedSpawn[] {
    return (this.ownedStmt.all({ principal: scope.principal, limit }) as (Row & { task_id: string | null; owned_session: string })[]).map((r) => ({
      record: fromRow(r),
      sessionId: r.owned_session,
      taskId: r.task_id,
      cancelRequestedBy: r.cancel_requested_at ? (r.cancel_requested_by ?? 'an operator') : null,
    }));
  }

  /**
   * An operator asks the supervisor that owns `spawnId` to stop it (the page, `supervisor cancel
   * sp_…`). Only the principal's tree (found as runningOwnedBy finds it); one request per tree: the
   * write is a compare-and-swap on the unset request of a tree still running, in one transaction
   * with the ownership check. `requestedBy` says who asked, for the audit record.
   */
  requestCancel(scope: PrincipalScope, spawnId: string, requestedBy: string, now = Date.now()): TreeCancelRequest {
    return this.db.transaction((): TreeCancelRequest => {
      const r = this.ownerOfStmt.get({ principal: scope.principal, spawnId }) as (Row & { owned_session: string | null }) | undefined;
      if (!r || r.owned_session === null) return { kind: 'not-found' };
      const sessionId = r.owned_session;
      if (r.status !== 'starting' && r.status !== 'running') return { kind: 'ended', record: fromRow(r), sessionId };
      if (this.requestCancelStmt.run({ spawnId, at: now, by: requestedBy, sessionId }).changes === 1) return { kind: 'requested', record: fromRow(r), sessionId, requestedBy };
      return { kind: 'pending', record: fromRow(r), sessionId, requestedBy: r.cancel_requested_by ?? 'an earlier request' };
    }).immediate();
  }

  /** Cancel requests for the trees of the supervisor `owner` that are still running. */
  cancelRequests(owner: { pid: number; startMarker: string }): PendingTreeCancel[] {
    return (this.cancelRequestsStmt.all(owner.pid, owner.startMarker) as { spawn_id: string; cancel_requested_by: string | null; cancel_requested_at: number; cancel_session_id: string | null }[]).map((r) => ({
      spawnId: r.spawn_id,
      requestedBy: r.cancel_requested_by ?? 'an operator',
      requestedAt: r.cancel_requested_at,
      sessionId: r.cancel_session_id,
    }));
  }

  /** Rows not finished: `running` and `starting` (whose pid is 0). */
  running(): SpawnRecord[] {
    return (this.runningStmt.all() as Row[]).map(fromRow);
  }
}
