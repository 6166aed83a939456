// Sessions on the control plane. A member creates a session it owns (epoch 1) and writes to it
// under that lease; a shared session (no owner, e.g. a queue an operator feeds) is never reclaimed.
// Creating a session opens its audit chain in the same transaction, as the SQLite store does.
import { randomUUID } from 'node:crypto';
import { appendChainEvents, type NewChainEvent } from './chain.js';
import { inTransaction, type ControlPlanePool } from './connect.js';
import { ControlPlaneError } from './errors.js';
import { fenceRow, fencedUpdate, type Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';

/**
 * A session owned by `member` under a new lease (epoch 1), with its `session.created` event. Fails
 * with MemberFencedError / ControlPlaneError('MEMBER_LEASE_LAPSED') when the member may not write.
 */
export async function createOwnedSession(member: ControlPlaneMember, payload: Record<string, unknown> = {}, id: string = randomUUID()): Promise<Lease> {
  member.assertWritable();
  return inTransaction(member.pool, async (c) => {
    const r = await c.query(
      `INSERT INTO sessions (id, owner_member, epoch, status)
       SELECT $1, $2, 1, 'running' WHERE EXISTS (SELECT 1 FROM members m WHERE m.id = $2 AND m.status = 'alive' AND m.lease_expires_at > clock_timestamp())`,
      [id, member.id],
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
