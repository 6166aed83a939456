// Ownership under a lease with a fencing epoch. A session or a task is owned by one member at one
// epoch; every write its owner makes names both (`WHERE id = $1 AND epoch = $2 AND owner_member =
// $3`) and also requires the member's own lease to be unexpired by the server's clock. A write that
// matches no row raises OwnershipLostError and changes nothing: the row was reclaimed (its epoch
// moved on) or the member's lease lapsed, so a paused or partitioned member cannot overwrite work
// that someone else now owns.
//
// Reclaim: any live member sweeps for members whose lease expired (server clock), marks them dead,
// and in the same transaction marks their running sessions `interrupted` and their running tasks'
// attempts `interrupted` (each with an audit event). A task goes back to the queue with its rescue
// counter raised, or fails with the reason once it has used its rescues: work that kills its
// runner every time cannot loop forever.
import type pg from 'pg';
import { ChainInconsistentError } from '../store/store-errors.js';
import { appendChainEvents, type NewChainEvent } from './chain.js';
import { OwnershipLostError } from './errors.js';

export type OwnedTable = 'sessions' | 'tasks';

/** What an owner holds: the row, the epoch it was granted at, and who it is. */
export interface Lease {
  table: OwnedTable;
  id: string;
  epoch: number;
  memberId: string;
}

/** SQL true while member $3 is alive with an unexpired lease, by the server's clock. */
const MEMBER_HOLDS_LEASE = `EXISTS (SELECT 1 FROM members m WHERE m.id = $3 AND m.status = 'alive' AND m.lease_expires_at > clock_timestamp())`;

const OWNED_TABLES: ReadonlySet<string> = new Set<OwnedTable>(['sessions', 'tasks']);

function ownedBy(table: OwnedTable): string {
  // The table name is spliced into the statement: only the two owned tables ever are.
  if (!OWNED_TABLES.has(table)) throw new TypeError(`lease.table ${JSON.stringify(table)}: a lease names 'sessions' or 'tasks'`);
  return `${table}.id = $1 AND ${table}.epoch = $2 AND ${table}.owner_member = $3 AND ${table}.status = 'running' AND ${MEMBER_HOLDS_LEASE}`;
}

/**
 * Locks the leased row for the rest of the caller's transaction (FOR NO KEY UPDATE: a reclaim
 * waits until this transaction ends, then sees the epoch it must move). Throws OwnershipLostError
 * when the lease no longer holds.
 */
export async function fenceRow(c: pg.PoolClient, lease: Lease): Promise<void> {
  const where = ownedBy(lease.table);
  const r = await c.query(`SELECT 1 FROM ${lease.table} WHERE ${where} FOR NO KEY UPDATE OF ${lease.table}`, [lease.id, lease.epoch, lease.memberId]);
  if (!r.rowCount) throw new OwnershipLostError(lease.table, lease.id, lease.epoch, lease.memberId);
}

/**
 * `UPDATE <table> SET <set> WHERE <the lease holds>`. `set` is SQL written in this layer (never input);
 * it uses $4, $5, … for `params`. Throws
 * OwnershipLostError when 0 rows matched (nothing was written).
 */
export async function fencedUpdate(c: pg.PoolClient, lease: Lease, set: string, params: readonly unknown[] = []): Promise<void> {
  const where = ownedBy(lease.table);
  const r = await c.query(`UPDATE ${lease.table} SET ${set} WHERE ${where}`, [lease.id, lease.epoch, lease.memberId, ...params]);
  if (!r.rowCount) throw new OwnershipLostError(lease.table, lease.id, lease.epoch, lease.memberId);
}

export interface ReclaimedTask {
  taskId: string;
  sessionId: string;
  attempt: number;
  /** `requeued`: back in the queue with one rescue more; `failed`: its rescues were used up. */
  outcome: 'requeued' | 'failed';
}

export interface ReclaimedMember {
  memberId: string;
  hostId: string;
  pid: number;
  lastHeartbeat: Date;
  sessions: string[];
  tasks: ReclaimedTask[];
  /** Sessions whose chain refused the event (tampered): the rows were marked all the same. */
  chainErrors: string[];
}

interface DeadMember {
  id: string;
  host_id: string;
  pid: number;
  heartbeat_at: Date;
}

/**
 * One sweep, in the caller's transaction: every member whose lease expired is marked dead and what
 * it owned is reclaimed. SKIP LOCKED lets several members sweep at once without waiting on each
 * other or reclaiming a member twice. `by` is the sweeping member (named in the reason).
 */
export async function reclaimExpiredMembers(c: pg.PoolClient, by: string): Promise<ReclaimedMember[]> {
  const dead = await c.query<DeadMember>(
    `SELECT id, host_id, pid, heartbeat_at FROM members
      WHERE status = 'alive' AND lease_expires_at < clock_timestamp() ORDER BY id FOR UPDATE SKIP LOCKED`,
  );
  const out: ReclaimedMember[] = [];
  for (const m of dead.rows) out.push(await reclaimMember(c, m, by));
  return out;
}

async function reclaimMember(c: pg.PoolClient, m: DeadMember, by: string): Promise<ReclaimedMember> {
  const reason = `its member ${m.id} (host ${m.host_id}, pid ${m.pid}) stopped renewing its lease (last heartbeat ${m.heartbeat_at.toISOString()}); reclaimed by member ${by}`;
  await c.query("UPDATE members SET status = 'dead', ended_at = clock_timestamp(), end_reason = $2 WHERE id = $1", [m.id, reason]);
  const report: ReclaimedMember = { memberId: m.id, hostId: m.host_id, pid: m.pid, lastHeartbeat: m.heartbeat_at, sessions: [], tasks: [], chainErrors: [] };
  // Task rows first, all of them, in id order; chain heads only after: every writer takes a task
  // or session row before a head, so no two transactions wait on each other in a cycle.
  const tasks = await c.query<{ id: string; session_id: string; attempts: number; rescues: number; max_rescues: number; epoch: number }>(
    "SELECT id, session_id, attempts, rescues, max_rescues, epoch FROM tasks WHERE owner_member = $1 AND status = 'running' ORDER BY id FOR NO KEY UPDATE",
    [m.id],
  );
  const sessions = await c.query<{ id: string }>("SELECT id FROM sessions WHERE owner_member = $1 AND status = 'running' ORDER BY id FOR NO KEY UPDATE", [m.id]);
  for (const t of tasks.rows) report.tasks.push(await reclaimTask(c, t, m.id, reason, report));
  for (const s of sessions.rows) {
    await reclaimSession(c, s.id, m.id, reason, report);
    report.sessions.push(s.id);
  }
  return report;
}

async function reclaimTask(
  c: pg.PoolClient,
  t: { id: string; session_id: string; attempts: number; rescues: number; max_rescues: number },
  memberId: string,
  reason: string,
  report: ReclaimedMember,
): Promise<ReclaimedTask> {
  const rescues = t.rescues + 1;
  const exhausted = rescues > t.max_rescues;
  const failReason = `its runner was lost ${rescues} time(s), more than max_rescues ${t.max_rescues} allows; the last time: ${reason}`;
  await c.query("UPDATE task_attempts SET status = 'interrupted', ended_at = clock_timestamp(), reason = $3 WHERE task_id = $1 AND attempt = $2", [t.id, t.attempts, reason]);
  if (exhausted) {
    await c.query("UPDATE tasks SET status = 'failed', epoch = epoch + 1, rescues = $2, reason = $3, ended_at = clock_timestamp() WHERE id = $1", [t.id, rescues, failReason]);
  } else {
    await c.query("UPDATE tasks SET status = 'queued', epoch = epoch + 1, rescues = $2, owner_member = NULL, claimed_at = NULL WHERE id = $1", [t.id, rescues]);
  }
  const events: NewChainEvent[] = [
    { kind: 'task.interrupted', payload: { task_id: t.id, attempt: t.attempts, member_id: memberId, reason } },
    exhausted
      ? { kind: 'task.failed', payload: { task_id: t.id, rescues, max_rescues: t.max_rescues, reason: failReason } }
      : { kind: 'task.requeued', payload: { task_id: t.id, rescues, max_rescues: t.max_rescues } },
  ];
  await appendOrNote(c, t.session_id, events, report);
  return { taskId: t.id, sessionId: t.session_id, attempt: t.attempts, outcome: exhausted ? 'failed' : 'requeued' };
}

async function reclaimSession(c: pg.PoolClient, sessionId: string, memberId: string, reason: string, report: ReclaimedMember): Promise<void> {
  await c.query("UPDATE sessions SET status = 'interrupted', epoch = epoch + 1, ended_at = clock_timestamp(), end_reason = $2 WHERE id = $1", [sessionId, reason]);
  // Its queued work has nobody to report to any more.
  const queued = await c.query<{ id: string }>(
    "UPDATE tasks SET status = 'interrupted', epoch = epoch + 1, reason = $2, ended_at = clock_timestamp() WHERE session_id = $1 AND status = 'queued' RETURNING id",
    [sessionId, `its session was interrupted: ${reason}`],
  );
  await appendOrNote(c, sessionId, [{ kind: 'session.interrupted', payload: { member_id: memberId, reason, queued_tasks: queued.rows.map((r) => r.id).sort() } }], report);
}

/** Appends in a savepoint; a chain that cannot be extended is noted, and the rows are marked anyway. */
async function appendOrNote(c: pg.PoolClient, sessionId: string, events: NewChainEvent[], report: ReclaimedMember): Promise<void> {
  await c.query('SAVEPOINT reclaim_event');
  try {
    await appendChainEvents(c, sessionId, events);
    await c.query('RELEASE SAVEPOINT reclaim_event');
  } catch (err) {
    if (!(err instanceof ChainInconsistentError)) throw err;
    await c.query('ROLLBACK TO SAVEPOINT reclaim_event');
    report.chainErrors.push(`${sessionId}: ${err.message}`);
  }
}
