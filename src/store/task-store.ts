// Background task rows and their log chunks. Every read that returns owned data takes the
// PrincipalScope and joins the owning session: another principal's task id reads exactly like an
// id that does not exist.
import { randomBytes } from 'node:crypto';
import type { Database } from './database.js';
import { principalOf, type PrincipalScope } from './session-store.js';
import { StoreInputError } from './store-errors.js';
import { faultPoint } from './fault-injection.js';

export type TaskStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
export type TaskStream = 'stdout' | 'stderr' | 'note';

export interface TaskRecord {
  id: string;
  sessionId: string;
  turnId: string | null;
  kind: string;
  sourceTool: string;
  status: TaskStatus;
  summary: string;
  writeScope: string | null;
  spawnId: string | null;
  ownerPid: number;
  exitCode: number | null;
  signal: string | null;
  reason: string | null;
  logTail: string;
  logBytes: number;
  resultRef: string | null;
  cancelRequestedAt: number | null;
  createdAt: number;
  endedAt: number | null;
  /** agent.spawn: the child session it runs. */
  childSessionId: string | null;
  /** agent.spawn: requested and resolved scope, budget and evidence (operator view only). */
  metadata: Record<string, unknown> | null;
}

export interface TaskLogChunk {
  seq: number;
  stream: TaskStream;
  at: number;
  chunk: string;
}

/** A second active task with the same non-empty write scope. */
export class WriteScopeConflictError extends Error {
  readonly code = 'TASK_WRITE_SCOPE_CONFLICT';
  constructor(readonly writeScope: string) {
    super(`another active task of yours holds the write scope ${JSON.stringify(writeScope)}; wait for it (yield_until) or cancel it first`);
    this.name = 'WriteScopeConflictError';
  }
}

interface TaskRow {
  id: string;
  session_id: string;
  turn_id: string | null;
  kind: string;
  source_tool: string;
  status: TaskStatus;
  summary: string;
  write_scope: string | null;
  spawn_id: string | null;
  owner_pid: number;
  exit_code: number | null;
  signal: string | null;
  reason: string | null;
  log_tail: string;
  log_bytes: number;
  result_ref: string | null;
  cancel_requested_at: number | null;
  created_at: number;
  ended_at: number | null;
  child_session_id?: string | null;
  metadata?: string | null;
}

function parseMetadata(text: string | null | undefined): Record<string, unknown> | null {
  if (text === null || text === undefined) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

const taskOf = (r: TaskRow): TaskRecord => ({
  id: r.id,
  sessionId: r.session_id,
  turnId: r.turn_id,
  kind: r.kind,
  sourceTool: r.source_tool,
  status: r.status,
  summary: r.summary,
  writeScope: r.write_scope,
  spawnId: r.spawn_id,
  ownerPid: r.owner_pid,
  exitCode: r.exit_code,
  signal: r.signal,
  reason: r.reason,
  logTail: r.log_tail,
  logBytes: r.log_bytes,
  resultRef: r.result_ref,
  cancelRequestedAt: r.cancel_requested_at,
  createdAt: r.created_at,
  endedAt: r.ended_at,
  childSessionId: r.child_session_id ?? null,
  metadata: parseMetadata(r.metadata),
});

export interface NewTask {
  sessionId: string;
  turnId?: string | null;
  kind: string;
  sourceTool: string;
  summary: string;
  writeScope?: string | null;
}

export class TaskStore {
  private readonly q;

  constructor(private readonly db: Database, private readonly now: () => number = Date.now) {
    const owned = 'SELECT t.* FROM tasks t JOIN sessions s ON s.id = t.session_id';
    this.q = {
      sessionOwned: db.prepare('SELECT 1 FROM sessions WHERE id = ? AND principal = ?').pluck(),
      insert: db.prepare(`INSERT INTO tasks (id, session_id, turn_id, kind, source_tool, status, summary, write_scope, owner_pid, owner_start_marker, principal, created_at)
        VALUES (@id, @sessionId, @turnId, @kind, @sourceTool, 'running', @summary, @writeScope, @ownerPid, @ownerStartMarker, @principal, @createdAt)`),
      get: db.prepare(`${owned} WHERE t.id = ? AND s.principal = ?`),
      getAny: db.prepare('SELECT * FROM tasks WHERE id = ?'),
      list: db.prepare(`${owned} WHERE s.principal = ? ORDER BY t.created_at DESC, t.id LIMIT ?`),
      listSession: db.prepare(`${owned} WHERE s.principal = ? AND t.session_id = ? ORDER BY t.created_at DESC, t.id LIMIT ?`),
      setSpawn: db.prepare('UPDATE tasks SET spawn_id = ?, result_ref = ? WHERE id = ?'),
      setDelegation: db.prepare('UPDATE tasks SET child_session_id = COALESCE(?, child_session_id), metadata = ? WHERE id = ?'),
      bySession: db.prepare(`${owned} WHERE s.principal = ? AND t.session_id = ? AND t.kind = ? ORDER BY t.created_at, t.id LIMIT 1000`),
      byChild: db.prepare(`${owned} WHERE s.principal = ? AND t.child_session_id = ?`),
      finish: db.prepare(`UPDATE tasks SET status = @status, exit_code = @exitCode, signal = @signal, reason = @reason, log_tail = @logTail,
        ended_at = @endedAt WHERE id = @id AND status = 'running'`),
      requestCancel: db.prepare("UPDATE tasks SET cancel_requested_at = ? WHERE id = ? AND status = 'running' AND cancel_requested_at IS NULL"),
      cancelRequests: db.prepare("SELECT id FROM tasks WHERE owner_pid = ? AND status = 'running' AND cancel_requested_at IS NOT NULL").pluck(),
      runningOf: db.prepare("SELECT * FROM tasks WHERE status = 'running' AND owner_pid = ?"),
      running: db.prepare("SELECT * FROM tasks WHERE status = 'running'"),
      nextLogSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 FROM task_logs WHERE task_id = ?').pluck(),
      insertLog: db.prepare('INSERT INTO task_logs (task_id, seq, stream, at, chunk) VALUES (?, ?, ?, ?, ?)'),
      addBytes: db.prepare('UPDATE tasks SET log_bytes = log_bytes + ? WHERE id = ?'),
      logs: db.prepare('SELECT seq, stream, at, chunk FROM task_logs WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
    };
  }

  /**
   * Inserts a running task owned by `owner` (the supervisor running it; its start marker lets a
   * later start tell it from a reused pid). Throws WriteScopeConflictError if another running task
   * of the same principal holds its write scope: scopes are per principal, so another principal's
   * task neither blocks this one nor shows through the refusal.
   */
  create(scope: PrincipalScope, t: NewTask, owner: { pid: number; startMarker?: string } = { pid: process.pid }): TaskRecord {
    const principal = principalOf(scope);
    if (this.q.sessionOwned.get(t.sessionId, principal) === undefined) throw new StoreInputError('sessionId', 'no such session for this principal');
    if (t.writeScope !== undefined && t.writeScope !== null && t.writeScope === '') throw new StoreInputError('writeScope', 'must be null or a non-empty string');
    const id = `tk_${randomBytes(10).toString('hex')}`;
    try {
      this.q.insert.run({
        id,
        sessionId: t.sessionId,
        turnId: t.turnId ?? null,
        kind: t.kind,
        sourceTool: t.sourceTool,
        summary: t.summary.slice(0, 2000),
        writeScope: t.writeScope ?? null,
        ownerPid: owner.pid,
        ownerStartMarker: owner.startMarker ?? null,
        principal,
        createdAt: this.now(),
      });
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && t.writeScope) throw new WriteScopeConflictError(t.writeScope);
      throw err;
    }
    return taskOf(this.q.getAny.get(id) as TaskRow);
  }

  get(scope: PrincipalScope, id: string): TaskRecord | undefined {
    const r = this.q.get.get(id, principalOf(scope)) as TaskRow | undefined;
    return r && taskOf(r);
  }

  list(scope: PrincipalScope, opts: { sessionId?: string; limit?: number } = {}): TaskRecord[] {
    const limit = Math.min(Math.max(1, Math.floor(opts.limit ?? 100)), 1000);
    const rows = (opts.sessionId ? this.q.listSession.all(principalOf(scope), opts.sessionId, limit) : this.q.list.all(principalOf(scope), limit)) as TaskRow[];
    return rows.map(taskOf);
  }

  logs(scope: PrincipalScope, id: string, opts: { afterSeq?: number; limit?: number } = {}): TaskLogChunk[] | undefined {
    if (!this.get(scope, id)) return undefined;
    const limit = Math.min(Math.max(1, Math.floor(opts.limit ?? 1000)), 10_000);
    return this.q.logs.all(id, opts.afterSeq ?? 0, limit) as TaskLogChunk[];
  }

  /** Worker-internal (the owning process): no scope, the worker created the row. */
  setSpawn(id: string, spawnId: string, resultRef: string | null): void {
    this.q.setSpawn.run(spawnId, resultRef, id);
  }

  /** Worker-internal: an agent.spawn task's child session and metadata (JSON; at most 64 KiB). */
  setDelegation(id: string, childSessionId: string | null, metadata: Record<string, unknown>): void {
    let text = JSON.stringify(metadata);
    if (text.length > 65_536) text = JSON.stringify({ truncated: true, bytes: text.length });
    this.q.setDelegation.run(childSessionId, text, id);
  }

  /** Worker-internal: a task's metadata (an evolve run's state), the child session unchanged. */
  setMetadata(id: string, metadata: Record<string, unknown>): void {
    this.setDelegation(id, null, metadata);
  }

  /** A session's tasks of one kind, oldest first (the subagents tree); another principal's session has none. */
  listKind(scope: PrincipalScope, sessionId: string, kind: string): TaskRecord[] {
    return (this.q.bySession.all(principalOf(scope), sessionId, kind) as TaskRow[]).map(taskOf);
  }

  /** The agent.spawn task that runs `childSessionId`, if it is this principal's. */
  parentOf(scope: PrincipalScope, childSessionId: string): TaskRecord | undefined {
    const r = this.q.byChild.get(principalOf(scope), childSessionId) as TaskRow | undefined;
    return r && taskOf(r);
  }

  /** Appends chunks of several tasks in one transaction; returns bytes written per task. */
  appendLogs(chunks: readonly { taskId: string; stream: TaskStream; chunk: string }[]): void {
    if (chunks.length === 0) return;
    const at = this.now();
    this.db.transaction(() => {
      for (const c of chunks) {
        const seq = this.q.nextLogSeq.get(c.taskId) as number;
        this.q.insertLog.run(c.taskId, seq, c.stream, at, c.chunk);
        this.q.addBytes.run(Buffer.byteLength(c.chunk, 'utf8'), c.taskId);
      }
    })();
    faultPoint(this.db, 'task-log');
  }

  /** Moves a running task to its end state; false if it had ended already. */
  finish(id: string, end: { status: Exclude<TaskStatus, 'running'>; exitCode: number | null; signal: string | null; reason: string; logTail: string }): boolean {
    return this.q.finish.run({ id, ...end, endedAt: this.now() }).changes === 1;
  }

  /** From any process (an operator's `supervisor cancel`): the owning worker acts on it. */
  requestCancel(scope: PrincipalScope, id: string): TaskRecord | undefined {
    const t = this.get(scope, id);
    if (!t) return undefined;
    this.q.requestCancel.run(this.now(), id);
    return this.get(scope, id);
  }

  cancelRequests(ownerPid = process.pid): string[] {
    return this.q.cancelRequests.all(ownerPid) as string[];
  }

  /** Running rows; with `ownerPid`, only those a given process owns. */
  runningRows(ownerPid?: number): TaskRecord[] {
    return ((ownerPid === undefined ? this.q.running.all() : this.q.runningOf.all(ownerPid)) as TaskRow[]).map(taskOf);
  }
}
