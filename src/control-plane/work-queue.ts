// Work any member may run: tasks queued in a session, claimed with FOR UPDATE SKIP LOCKED (members
// claiming at once each get a different row, and nobody waits on a row another member is taking),
// run under a lease whose epoch every later write names, and finished exactly once: a completion
// under a stale epoch matches no row and raises OwnershipLostError.
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../store/canonical-json.js';
import { appendChainEvents } from './chain.js';
import { inTransaction, type ControlPlanePool } from './connect.js';
import { ControlPlaneError } from './errors.js';
import { fenceRow, fencedUpdate, type Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';

/** How many times a task may lose its runner and be queued again, unless the caller says. */
export const DEFAULT_MAX_RESCUES = 3;

export interface NewQueuedTask {
  sessionId: string;
  kind: string;
  input: unknown;
  /** Rescues allowed before the task fails (0: a lost runner fails it at once, for work that must not run twice). */
  maxRescues?: number;
  id?: string;
}

/** A claimed task: what to run, and the lease to write under. */
export interface ClaimedTask extends Lease {
  table: 'tasks';
  sessionId: string;
  kind: string;
  input: unknown;
  attempt: number;
  rescues: number;
}

/** Queues a task in a running session, with its `task.queued` event. Returns its id. */
export async function enqueueTask(pool: ControlPlanePool, task: NewQueuedTask): Promise<string> {
  const id = task.id ?? randomUUID();
  const maxRescues = task.maxRescues ?? DEFAULT_MAX_RESCUES;
  if (!Number.isInteger(maxRescues) || maxRescues < 0) {
    throw new ControlPlaneError('CONTROL_PLANE_INPUT', `maxRescues ${String(task.maxRescues)}: use a non-negative integer`);
  }
  const input = canonicalJson(task.input);
  return inTransaction(pool, async (c) => {
    const r = await c.query(
      `INSERT INTO tasks (id, session_id, kind, input, status, max_rescues)
       SELECT $1, s.id, $3, $4, 'queued', $5 FROM sessions s WHERE s.id = $2 AND s.status = 'running'`,
      [id, task.sessionId, task.kind, input, maxRescues],
    );
    if (!r.rowCount) throw new ControlPlaneError('SESSION_NOT_RUNNING', `session ${JSON.stringify(task.sessionId)} does not exist or has ended; the task was not queued`);
    await appendChainEvents(c, task.sessionId, [{ kind: 'task.queued', payload: { task_id: id, kind: task.kind, max_rescues: maxRescues } }]);
    return id;
  });
}

/**
 * Claims the oldest queued task of a running session for `member`, or returns null when there is
 * none. The claim raises the task's epoch, records an attempt and appends `task.claimed`, all in
 * one transaction.
 */
export async function claimTask(member: ControlPlaneMember): Promise<ClaimedTask | null> {
  member.assertWritable();
  return inTransaction(member.pool, async (c) => {
    const r = await c.query<{ id: string; session_id: string; kind: string; input: string; epoch: number; attempts: number; rescues: number }>(
      `WITH next AS (
         SELECT t.id FROM tasks t JOIN sessions s ON s.id = t.session_id AND s.status = 'running'
          WHERE t.status = 'queued' ORDER BY t.created_at, t.id LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
       UPDATE tasks t SET status = 'running', owner_member = $1, epoch = t.epoch + 1, attempts = t.attempts + 1, claimed_at = clock_timestamp()
         FROM next WHERE t.id = next.id
          AND EXISTS (SELECT 1 FROM members m WHERE m.id = $1 AND m.status = 'alive' AND m.lease_expires_at > clock_timestamp())
       RETURNING t.id, t.session_id, t.kind, t.input, t.epoch, t.attempts, t.rescues`,
      [member.id],
    );
    const t = r.rows[0];
    if (!t) return null;
    await c.query("INSERT INTO task_attempts (task_id, attempt, member_id, epoch, status) VALUES ($1, $2, $3, $4, 'running')", [t.id, t.attempts, member.id, t.epoch]);
    await appendChainEvents(c, t.session_id, [{ kind: 'task.claimed', payload: { task_id: t.id, attempt: t.attempts, member_id: member.id, epoch: t.epoch } }]);
    return {
      table: 'tasks',
      id: t.id,
      epoch: t.epoch,
      memberId: member.id,
      sessionId: t.session_id,
      kind: t.kind,
      input: JSON.parse(t.input) as unknown,
      attempt: t.attempts,
      rescues: t.rescues,
    };
  });
}

/** Appends an event about a claimed task to its session's chain, under the task's lease. */
export async function recordTaskEvent(member: ControlPlaneMember, task: ClaimedTask, kind: string, payload: Record<string, unknown>): Promise<void> {
  member.assertWritable();
  await inTransaction(member.pool, async (c) => {
    await fenceRow(c, task);
    await appendChainEvents(c, task.sessionId, [{ kind, payload: { task_id: task.id, ...payload } }]);
  });
}

/** Finishes a claimed task (succeeded or failed) under its lease; OwnershipLostError if it moved on. */
export async function finishTask(member: ControlPlaneMember, task: ClaimedTask, outcome: { status: 'succeeded'; result: unknown } | { status: 'failed'; reason: string }): Promise<void> {
  member.assertWritable();
  const result = outcome.status === 'succeeded' ? canonicalJson(outcome.result) : null;
  const reason = outcome.status === 'failed' ? outcome.reason : null;
  await inTransaction(member.pool, async (c) => {
    await fencedUpdate(c, task, 'status = $4, result = $5, reason = $6, ended_at = clock_timestamp()', [outcome.status, result, reason]);
    await c.query('UPDATE task_attempts SET status = $3, ended_at = clock_timestamp(), reason = $4 WHERE task_id = $1 AND attempt = $2', [task.id, task.attempt, outcome.status, reason]);
    await appendChainEvents(c, task.sessionId, [
      { kind: `task.${outcome.status}`, payload: { task_id: task.id, attempt: task.attempt, member_id: member.id, ...(reason === null ? {} : { reason }) } },
    ]);
  });
}

/** A task as an operator on any member lists it. */
export interface ListedTask {
  id: string;
  sessionId: string;
  kind: string;
  /** A run's task: what it runs, as the run shows it (decision 126); null for queued work. */
  summary: string | null;
  status: string;
  attempts: number;
  rescues: number;
  maxRescues: number;
  /** The member running it (or that ran it last): its host and pid, and whether it is alive. */
  host: string | null;
  pid: number | null;
  memberStatus: string | null;
  reason: string | null;
  createdAt: number;
  endedAt: number | null;
}

/**
 * The tasks of the principal's sessions, newest first, finished ones from the archive too; with
 * `sessionId`, one session's (its control-plane id or its run's local session id); with `taskId`, that one.
 */
export async function listTasks(pool: ControlPlanePool, principal: string, o: { sessionId?: string; taskId?: string; limit?: number } = {}): Promise<ListedTask[]> {
  const r = await pool.query<{ id: string; session_id: string; kind: string; summary: string | null; status: string; attempts: number; rescues: number; max_rescues: number; host_id: string | null; pid: number | null; member_status: string | null; reason: string | null; created_at: Date; ended_at: Date | null }>(
    `SELECT t.id, t.session_id, t.kind, t.summary, t.status, t.attempts, t.rescues, t.max_rescues, t.reason, t.created_at, t.ended_at,
            m.host_id, m.pid, m.status AS member_status
     FROM (SELECT * FROM tasks UNION ALL SELECT * FROM tasks_archive) t
     JOIN sessions s ON s.id = t.session_id AND s.principal = $1
     LEFT JOIN members m ON m.id = t.owner_member
     WHERE ($2::text IS NULL OR s.id = $2 OR split_part(s.id, '@', 1) = $2) AND ($4::text IS NULL OR t.id = $4)
     ORDER BY t.created_at DESC, t.id LIMIT $3`,
    [principal, o.sessionId ?? null, o.limit ?? 50, o.taskId ?? null],
  );
  return r.rows.map((x) => ({
    id: x.id,
    sessionId: x.session_id,
    kind: x.kind,
    summary: x.summary,
    status: x.status,
    attempts: x.attempts,
    rescues: x.rescues,
    maxRescues: x.max_rescues,
    host: x.host_id,
    pid: x.pid,
    memberStatus: x.member_status,
    reason: x.reason,
    createdAt: x.created_at.getTime(),
    endedAt: x.ended_at ? x.ended_at.getTime() : null,
  }));
}
