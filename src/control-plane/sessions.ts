// Sessions on the control plane. A member creates a session it owns (epoch 1) and writes to it
// under that lease; a shared session (no owner, e.g. a queue an operator feeds) is never reclaimed.
// Creating a session opens its audit chain in the same transaction, as the SQLite store does.
import { randomUUID } from 'node:crypto';
import { appendChainEvents, type NewChainEvent } from './chain.js';
import { inTransaction, type ControlPlanePool, type Queryable } from './connect.js';
import { ControlPlaneError } from './errors.js';
import { fenceRow, fencedUpdate, type Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';

/** The channel a cancel is announced on; the payload is the session's id. */
export const CANCEL_CHANNEL = 'supervisor_cancels';

/**
 * A session owned by `member` under a new lease (epoch 1), with its `session.created` event. Fails
 * with MemberFencedError / ControlPlaneError('MEMBER_LEASE_LAPSED') when the member may not write.
 */
export async function createOwnedSession(member: ControlPlaneMember, payload: Record<string, unknown> = {}, id: string = randomUUID(), principal: string | null = null): Promise<Lease> {
  member.assertWritable();
  return inTransaction(member.pool, async (c) => {
    const r = await c.query(
      `INSERT INTO sessions (id, owner_member, epoch, status, principal)
       SELECT $1, $2, 1, 'running', $3 WHERE EXISTS (SELECT 1 FROM members m WHERE m.id = $2 AND m.status = 'alive' AND m.lease_expires_at > clock_timestamp())`,
      [id, member.id, principal],
    );
    if (!r.rowCount) throw new ControlPlaneError('MEMBER_LEASE_LAPSED', `member ${member.id} holds no live lease; the session was not created`);
    await appendChainEvents(c, id, [{ kind: 'session.created', payload: { ...payload, owner_member: member.id } }], true);
    return { table: 'sessions', id, epoch: 1, memberId: member.id };
  });
}

/** A session nobody owns (tasks queued in it may be claimed by any member). */
export async function createSharedSession(pool: ControlPlanePool, payload: Record<string, unknown> = {}, id: string = randomUUID()): Promise<string> {
  return inTransaction(pool, async (c) => {
    await c.query("INSERT INTO sessions (id, owner_member, epoch, status) VALUES ($1, NULL, 1, 'running')", [id]);
    await appendChainEvents(c, id, [{ kind: 'session.created', payload: { ...payload, owner_member: null } }], true);
    return id;
  });
}

/** Appends events to an owned session's chain under its lease (OwnershipLostError if it moved). */
export async function appendAsOwner(member: ControlPlaneMember, lease: Lease, events: readonly NewChainEvent[]): Promise<void> {
  member.assertWritable();
  await inTransaction(member.pool, async (c) => {
    await fenceRow(c, lease);
    await appendChainEvents(c, lease.id, events);
  });
}

/** Ends an owned session under its lease, with its `session.ended` event. */
export async function endOwnedSession(member: ControlPlaneMember, lease: Lease, reason: string): Promise<void> {
  member.assertWritable();
  await inTransaction(member.pool, async (c) => {
    await fencedUpdate(c, lease, "status = 'ended', ended_at = clock_timestamp(), end_reason = $4", [reason]);
    await appendChainEvents(c, lease.id, [{ kind: 'session.ended', payload: { reason } }]);
  });
}

/** A session as an operator on any member lists it. */
export interface ListedSession {
  id: string;
  status: string;
  createdAt: number;
  endedAt: number | null;
  endReason: string | null;
  /** The owning member's host and pid, and whether that member is alive. */
  host: string | null;
  pid: number | null;
  memberStatus: string | null;
  /** What the owner recorded when it made the session (its core, its local session id). */
  created: Record<string, unknown>;
  cancelRequestedBy: string | null;
}

type ListedRow = { id: string; status: string; created_at: Date; ended_at: Date | null; end_reason: string | null; host_id: string | null; pid: number | null; member_status: string | null; payload: string | null; cancel_requested_by: string | null };

/** One query for the listings: a session with its owner and the payload of its creation event. */
const LISTED_SESSIONS = `SELECT s.id, s.status, s.created_at, s.ended_at, s.end_reason, s.cancel_requested_by, m.host_id, m.pid, m.status AS member_status, e.payload
     FROM sessions s LEFT JOIN members m ON m.id = s.owner_member
     LEFT JOIN LATERAL (SELECT payload FROM runtime_events WHERE session_id = s.id AND seq = 1
                        UNION ALL SELECT payload FROM runtime_events_archive WHERE session_id = s.id AND seq = 1 LIMIT 1) e ON true`;

const listed = (x: ListedRow): ListedSession => ({
  id: x.id,
  status: x.status,
  createdAt: x.created_at.getTime(),
  endedAt: x.ended_at ? x.ended_at.getTime() : null,
  endReason: x.end_reason,
  host: x.host_id,
  pid: x.pid,
  memberStatus: x.member_status,
  created: x.payload ? (JSON.parse(x.payload) as Record<string, unknown>) : {},
  cancelRequestedBy: x.cancel_requested_by,
});

/** The principal's sessions, newest first, with their owners. */
export async function listSessions(q: Queryable, principal: string, limit = 50): Promise<ListedSession[]> {
  const r = await q.query<ListedRow>(`${LISTED_SESSIONS} WHERE s.principal = $1 ORDER BY s.created_at DESC, s.id LIMIT $2`, [principal, limit]);
  return r.rows.map(listed);
}

/** One of the principal's sessions, or undefined (another principal's reads as missing). */
export async function getListedSession(q: Queryable, principal: string, id: string): Promise<ListedSession | undefined> {
  const r = await q.query<ListedRow>(`${LISTED_SESSIONS} WHERE s.principal = $1 AND s.id = $2`, [principal, id]);
  return r.rows[0] && listed(r.rows[0]);
}

/**
 * The principal's newest session on the control plane for `id`: the copy of that id, or the newest
 * of the copies of local session `id` (`id@member`, one per run that ran it).
 */
export async function newestCopyOf(q: Queryable, principal: string, id: string): Promise<ListedSession | undefined> {
  const r = await q.query<ListedRow>(`${LISTED_SESSIONS} WHERE s.principal = $1 AND (s.id = $2 OR split_part(s.id, '@', 1) = $2) ORDER BY s.created_at DESC, s.id DESC LIMIT 1`, [principal, id]);
  return r.rows[0] && listed(r.rows[0]);
}

/**
 * An operator's cancel of the principal's running session, from any member: a flag on the row and
 * a NOTIFY in one transaction; the owning member acts on it (its listener hears it, or reads the
 * flag at its next wake). 'requested' the first time; 'already' when a cancel was asked before;
 * 'ended' when the session is not running; 'missing' when it is not the principal's.
 */
export async function requestSessionCancel(pool: ControlPlanePool, principal: string, id: string, by: string): Promise<'requested' | 'already' | 'ended' | 'missing'> {
  return inTransaction(pool, async (c) => {
    const r = await c.query<{ status: string; cancel_requested_at: Date | null }>('SELECT status, cancel_requested_at FROM sessions WHERE id = $1 AND principal = $2 FOR UPDATE', [id, principal]);
    const row = r.rows[0];
    if (!row) return 'missing';
    if (row.status !== 'running') return 'ended';
    if (row.cancel_requested_at) return 'already';
    await c.query('UPDATE sessions SET cancel_requested_at = clock_timestamp(), cancel_requested_by = $2 WHERE id = $1', [id, by]);
    await appendChainEvents(c, id, [{ kind: 'session.cancel_requested', payload: { by } }]);
    await c.query('SELECT pg_notify($1, $2)', [CANCEL_CHANNEL, id]);
    return 'requested';
  });
}
