// Finished rows leave the hot tables (issue 21), so a long-lived control plane keeps its working
// set small: the events of sessions that ended (or were interrupted) some time ago, finished tasks
// with their attempts, and decided approvals move to their *_archive tables, each batch in one
// transaction (a row is in exactly one of the two tables at every moment). Sessions and chain
// heads stay: the chain is verified over both tables (chain.ts) and stays appendable.
import { OPERATOR_CHANGES_KEPT } from '../store/operator-changes.js';
import { inTransaction, type ControlPlanePool } from './connect.js';

export interface ArchiveOptions {
  /** Only rows finished at least this long ago move (default one hour). */
  olderThanMs?: number;
  /** At most this many sessions, tasks and approvals per call (default 500 each). */
  batch?: number;
}

export interface Archived {
  sessions: number;
  events: number;
  tasks: number;
  attempts: number;
  approvals: number;
}

/** Moves one batch of finished rows to the archive tables; returns how many of each moved. */
export async function archiveFinished(pool: ControlPlanePool, o: ArchiveOptions = {}): Promise<Archived> {
  const age = Math.max(0, Math.round(o.olderThanMs ?? 3_600_000));
  const batch = Math.max(1, Math.round(o.batch ?? 500));
  return inTransaction(pool, async (c) => {
    // SKIP LOCKED: a session a member is ending right now is left for the next pass.
    const sessions = await c.query<{ id: string }>(
      `SELECT id FROM sessions WHERE status IN ('ended', 'interrupted') AND ended_at < clock_timestamp() - $1 * interval '1 millisecond'
         AND EXISTS (SELECT 1 FROM runtime_events e WHERE e.session_id = sessions.id)
       ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [age, batch],
    );
    const ids = sessions.rows.map((r) => r.id);
    const events = ids.length === 0 ? 0 : await move(c, 'runtime_events', 'session_id = ANY($1)', [ids]);
    const tasks = await c.query<{ id: string }>(
      `SELECT id FROM tasks WHERE status IN ('succeeded', 'failed', 'interrupted') AND ended_at < clock_timestamp() - $1 * interval '1 millisecond'
       ORDER BY ended_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [age, batch],
    );
    const taskIds = tasks.rows.map((r) => r.id);
    const attempts = taskIds.length === 0 ? 0 : await move(c, 'task_attempts', 'task_id = ANY($1)', [taskIds]);
    const movedTasks = taskIds.length === 0 ? 0 : await move(c, 'tasks', 'id = ANY($1)', [taskIds]);
    const approvals = await move(
      c,
      'approvals',
      `id IN (SELECT id FROM approvals WHERE status <> 'pending' AND COALESCE(decided_at, expires_at) < clock_timestamp() - $1 * interval '1 millisecond'
              ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [age, batch],
    );
    // The live feed keeps its newest rows, as the SQLite store's does (a page further behind reloads).
    await c.query('DELETE FROM operator_changes WHERE seq <= (SELECT max(seq) FROM operator_changes) - $1', [OPERATOR_CHANGES_KEPT]);
    return { sessions: ids.length, events, tasks: movedTasks, attempts, approvals };
  });
}

/** DELETE … RETURNING into the table's archive, in one statement; returns the rows moved. */
async function move(c: { query: ControlPlanePool['query'] }, table: 'runtime_events' | 'tasks' | 'task_attempts' | 'approvals', where: string, params: unknown[]): Promise<number> {
  const r = await c.query(`WITH moved AS (DELETE FROM ${table} WHERE ${where} RETURNING *) INSERT INTO ${table}_archive SELECT * FROM moved`, params);
  return r.rowCount ?? 0;
}
