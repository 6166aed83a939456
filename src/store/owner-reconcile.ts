// Total reconciliation of what a dead supervisor left behind in the store. Every row that is still
// 'running' (or a request still 'pending') names the supervisor that owns it; when that owner is
// gone, the row can never end on its own. One transaction marks each such session, its running
// turns, its running tasks and its pending approvals 'interrupted' with the reason, and appends one
// `session.interrupted` event to each affected chain, so `audit verify` and the operator see why.
// Whether an owner is alive is the process layer's call (pid + OS start marker); this module only
// asks it.
import type { Database } from './database.js';
import { appendPreparedEvent, flushDeferredWrites, prepareEvent } from './event-chain.js';
import { ChainInconsistentError } from './store-errors.js';
import { faultAfterCommit } from './fault-injection.js';

/** True when the process `pid` with this start marker is still running. A null marker: owner not recorded. */
export type OwnerAlive = (pid: number, startMarker: string | null) => boolean;

export interface InterruptedSession {
  sessionId: string;
  ownerPid: number | null;
  reason: string;
  turns: string[];
  tasks: string[];
  pendingApprovals: string[];
  /** Set when the session's chain could not be extended (tampered or broken): the rows are marked all the same. */
  chainError?: string;
}

export interface OwnerReconcileReport {
  sessions: InterruptedSession[];
  /** Tasks interrupted whose session was not (it had ended, or its owner is another, live one). */
  strayTasks: string[];
}

interface OwnedRow {
  id: string;
  session_id?: string;
  owner_pid: number | null;
  owner_start_marker: string | null;
  spawn_id?: string | null;
}

/**
 * Marks what dead owners left 'interrupted', in one IMMEDIATE transaction. `self` is the calling
 * supervisor's pid (never judged dead). Returns what changed.
 */
export function reconcileDeadOwners(db: Database, alive: OwnerAlive, self: number, now: number = Date.now()): OwnerReconcileReport {
  flushDeferredWrites(db);
  const report = db.transaction(() => {
    const report: OwnerReconcileReport = { sessions: [], strayTasks: [] };
    const sessions = db.prepare("SELECT id, owner_pid, owner_start_marker FROM sessions WHERE status = 'running'").all() as OwnedRow[];
    for (const s of sessions) {
      if (ownerLives(s, alive, self)) continue;
      report.sessions.push(interruptSessionOnce(db, s, reasonFor(s.owner_pid, self), now));
    }
    const tasks = db.prepare("SELECT id, session_id, owner_pid, owner_start_marker, spawn_id FROM tasks WHERE status = 'running'").all() as OwnedRow[];
    for (const t of tasks) {
      if (taskOwnerLives(db, t, alive, self)) continue;
      const reason = reasonFor(t.owner_pid, self);
      // A chain that cannot be extended must not keep the task running (nor stop every later start).
      withChain(db, () => interruptTask(db, t, reason, now), () => markTask(db, t.id, reason, now));
      report.strayTasks.push(t.id);
    }
    return report;
  }).immediate();
  faultAfterCommit(db);
  return report;
}

function reasonFor(ownerPid: number | null, self: number): string {
  return ownerPid === null
    ? `its supervisor was not recorded (a run from before owners were stored) and is not running; reconciled by pid ${self}`
    : `its supervisor (pid ${ownerPid}) stopped without ending it; reconciled by pid ${self}`;
}

function ownerLives(row: OwnedRow, alive: OwnerAlive, self: number): boolean {
  if (row.owner_pid === null) return false;
  if (row.owner_start_marker === null) return row.owner_pid === self || alive(row.owner_pid, null);
  return alive(row.owner_pid, row.owner_start_marker);
}

/**
 * A task row from before owners carried a start marker is judged as it always was: its owner is
 * another pid and its tree is no longer running.
 */
function taskOwnerLives(db: Database, t: OwnedRow, alive: OwnerAlive, self: number): boolean {
  if (t.owner_start_marker !== null) return alive(t.owner_pid!, t.owner_start_marker);
  if (t.owner_pid === self) return true;
  if (t.spawn_id === null || t.spawn_id === undefined) return false;
  return db.prepare("SELECT 1 FROM spawns WHERE spawn_id = ? AND status IN ('starting', 'running')").pluck().get(t.spawn_id) !== undefined;
}

/**
 * interruptSession inside a savepoint; if the session's chain refuses the event (tampered, head
 * deleted), the rows are marked without it and the report names why. `audit verify` shows the break.
 */
function interruptSessionOnce(db: Database, s: OwnedRow, reason: string, at: number): InterruptedSession {
  let done: InterruptedSession | undefined;
  const chainError = withChain(
    db,
    () => (done = interruptSession(db, s, reason, at, true)),
    () => (done = interruptSession(db, s, reason, at, false)),
  );
  return chainError === null ? done! : { ...done!, chainError };
}

/** Runs `write` in a savepoint; on a chain that cannot be extended, rolls it back and runs `fallback`. */
function withChain(db: Database, write: () => void, fallback: () => void): string | null {
  try {
    db.transaction(write)();
    return null;
  } catch (err) {
    if (!(err instanceof ChainInconsistentError)) throw err;
    fallback();
    return err.message;
  }
}

function interruptSession(db: Database, s: OwnedRow, reason: string, at: number, audit: boolean): InterruptedSession {
  const event = audit ? appendTo : () => {};
  const turns = db.prepare("SELECT id, seq FROM turns WHERE session_id = ? AND status = 'running' ORDER BY seq").all(s.id) as { id: string; seq: number }[];
  for (const t of turns) {
    db.prepare("UPDATE turns SET status = 'interrupted', ended_at = ? WHERE id = ?").run(at, t.id);
    event(db, s.id, 'turn.ended', { turn_id: t.id, seq: t.seq, status: 'interrupted' }, at);
  }
  const tasks = db.prepare("SELECT id FROM tasks WHERE session_id = ? AND status = 'running' ORDER BY created_at, id").pluck().all(s.id) as string[];
  for (const id of tasks) markTask(db, id, reason, at);
  const pending = db.prepare("SELECT id FROM pending_approvals WHERE session_id = ? AND status = 'pending' ORDER BY created_at, id").pluck().all(s.id) as string[];
  for (const id of pending) db.prepare("UPDATE pending_approvals SET status = 'interrupted', decided_at = ? WHERE id = ?").run(at, id);
  db.prepare("UPDATE sessions SET status = 'interrupted', ended_at = ?, end_reason = ? WHERE id = ?").run(at, reason, s.id);
  const done: InterruptedSession = { sessionId: s.id, ownerPid: s.owner_pid, reason, turns: turns.map((t) => t.id), tasks, pendingApprovals: pending };
  event(db, s.id, 'session.interrupted', { reason, owner_pid: s.owner_pid, turns: done.turns, tasks, pending_approvals: pending }, at);
  return done;
}

function interruptTask(db: Database, t: OwnedRow, reason: string, at: number): void {
  markTask(db, t.id, reason, at);
  appendTo(db, t.session_id!, 'task.interrupted', { task_id: t.id, reason }, at);
}

function markTask(db: Database, id: string, reason: string, at: number): void {
  db.prepare("UPDATE tasks SET status = 'interrupted', reason = ?, ended_at = ? WHERE id = ? AND status = 'running'").run(reason, at, id);
}

function appendTo(db: Database, sessionId: string, kind: string, payload: unknown, at: number): void {
  appendPreparedEvent(db, sessionId, kind, prepareEvent(kind, payload, at), at);
}
