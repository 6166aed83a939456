// A run's own background tasks on the control plane (decision 126). The task runs on the run's
// host, in its workspace, under its supervisor: no other member may run it. So it is not queued:
// its member holds it from the start (epoch 1, one attempt, max_rescues 0), as if it had claimed
// it, and finishes it with the queue's own fenced `finishTask`. A member that dies holding it has
// it failed by the sweep (a task is not idempotent: it is never run again). An operator on any
// member cancels it by a flag on its row and a NOTIFY; the holding member stops it on its host.
import { appendChainEvents } from './chain.js';
import { inTransaction, type ControlPlanePool } from './connect.js';
import { CANCEL_CHANNEL } from './sessions.js';
import { fenceRow, type Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';
import type { ClaimedTask } from './work-queue.js';

export interface RunTask {
  id: string;
  kind: string;
  /** What it runs, as the operator sees it (already redacted by the run). */
  summary: string;
}

/** Puts a run's task on the control plane, held by `member` under the run's session `lease`. */
export async function holdRunTask(member: ControlPlaneMember, lease: Lease, t: RunTask): Promise<ClaimedTask> {
  member.assertWritable();
  return inTransaction(member.pool, async (c) => {
    await fenceRow(c, lease);
    await c.query(
      `INSERT INTO tasks (id, session_id, kind, input, status, owner_member, epoch, attempts, rescues, max_rescues, summary, claimed_at)
       VALUES ($1, $2, $3, '{}', 'running', $4, 1, 1, 0, 0, $5, clock_timestamp())`,
      [t.id, lease.id, t.kind, member.id, t.summary],
    );
    await c.query("INSERT INTO task_attempts (task_id, attempt, member_id, epoch, status) VALUES ($1, 1, $2, 1, 'running')", [t.id, member.id]);
    await appendChainEvents(c, lease.id, [{ kind: 'task.held', payload: { task_id: t.id, kind: t.kind, member_id: member.id } }]);
    return { table: 'tasks', id: t.id, epoch: 1, memberId: member.id, sessionId: lease.id, kind: t.kind, input: {}, attempt: 1, rescues: 0 };
  });
}

/**
 * An operator's cancel of the principal's task, from any member. A running task gets the flag and
 * a NOTIFY (its holder stops it); a queued one is failed at once (nobody runs it). 'ended': it is
 * not running any more; 'missing': not the principal's.
 */
export async function requestTaskCancel(pool: ControlPlanePool, principal: string, id: string, by: string): Promise<'requested' | 'already' | 'ended' | 'missing'> {
  return inTransaction(pool, async (c) => {
    const r = await c.query<{ status: string; session_id: string; cancel_requested_at: Date | null }>(
      'SELECT t.status, t.session_id, t.cancel_requested_at FROM tasks t JOIN sessions s ON s.id = t.session_id AND s.principal = $2 WHERE t.id = $1 FOR UPDATE OF t',
      [id, principal],
    );
    const row = r.rows[0];
    if (!row) return 'missing';
    if (row.status === 'queued') {
      await c.query("UPDATE tasks SET status = 'failed', epoch = epoch + 1, reason = $2, ended_at = clock_timestamp(), cancel_requested_at = clock_timestamp(), cancel_requested_by = $3 WHERE id = $1", [
        id,
        `cancelled by ${by} before it ran`,
        by,
      ]);
      await appendChainEvents(c, row.session_id, [{ kind: 'task.cancelled', payload: { task_id: id, by, before_it_ran: true } }]);
      return 'requested';
    }
    if (row.status !== 'running') return 'ended';
    if (row.cancel_requested_at) return 'already';
    await c.query('UPDATE tasks SET cancel_requested_at = clock_timestamp(), cancel_requested_by = $2 WHERE id = $1', [id, by]);
    await appendChainEvents(c, row.session_id, [{ kind: 'task.cancel_requested', payload: { task_id: id, by } }]);
    await c.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
    return 'requested';
  });
}
