// Approvals across members (issue 21). The member whose session asks writes a pending row under
// its session's lease; an operator on any member answers it with a compare-and-swap on that row
// and a NOTIFY in the same transaction, so the notification exists only if the answer committed.
// The asking member hears it on LISTEN (approval-listener.ts) and reads the row again: the row,
// not the notification, is the truth, so a lost notification costs at most one poll interval.
import { randomBytes } from 'node:crypto';
import { inTransaction, type ControlPlanePool, type Queryable } from './connect.js';
import { fenceRow, type Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';

/** The channel answers are announced on; the payload is the approval's id. */
export const APPROVAL_CHANNEL = 'supervisor_approvals';

export type ControlPlaneApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';

export interface ControlPlaneApproval {
  id: string;
  sessionId: string;
  principal: string;
  /** The member whose session asked (and waits). */
  requestedBy: string;
  tool: string;
  capability: string;
  summary: string;
  preview: string;
  status: ControlPlaneApprovalStatus;
  remember: boolean;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  decidedBy: string | null;
}

interface Row {
  id: string;
  session_id: string;
  principal: string;
  requested_by: string;
  tool: string;
  capability: string;
  summary: string;
  preview: string;
  status: ControlPlaneApprovalStatus;
  remember: boolean;
  created_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
}

const fromRow = (r: Row): ControlPlaneApproval => ({
  id: r.id,
  sessionId: r.session_id,
  principal: r.principal,
  requestedBy: r.requested_by,
  tool: r.tool,
  capability: r.capability,
  summary: r.summary,
  preview: r.preview,
  status: r.status,
  remember: r.remember,
  createdAt: r.created_at.getTime(),
  expiresAt: r.expires_at.getTime(),
  decidedAt: r.decided_at ? r.decided_at.getTime() : null,
  decidedBy: r.decided_by,
});

export interface NewApproval {
  principal: string;
  tool: string;
  capability: string;
  summary: string;
  preview: string;
  /** How long it may wait for an answer; past it, an answer is refused. */
  ttlMs: number;
}

/** A pending request of the session `lease` owns, written under that lease (OwnershipLostError if it moved). */
export async function requestApproval(member: ControlPlaneMember, lease: Lease, a: NewApproval, id = `ap_${randomBytes(12).toString('hex')}`): Promise<ControlPlaneApproval> {
  member.assertWritable();
  return inTransaction(member.pool, async (c) => {
    await fenceRow(c, lease);
    const r = await c.query<Row>(
      `INSERT INTO approvals (id, session_id, principal, requested_by, tool, capability, summary, preview, status, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', clock_timestamp() + $9 * interval '1 millisecond') RETURNING *`,
      [id, lease.id, a.principal, member.id, a.tool, a.capability, a.summary, a.preview, Math.max(1, Math.round(a.ttlMs))],
    );
    return fromRow(r.rows[0]!);
  });
}

/** One request as it is now (any status), or undefined. */
export async function getApproval(q: Queryable, id: string): Promise<ControlPlaneApproval | undefined> {
  const r = await q.query<Row>('SELECT * FROM approvals WHERE id = $1', [id]);
  return r.rows[0] ? fromRow(r.rows[0]) : undefined;
}

/** The principal's requests still waiting, oldest first. */
export async function listPendingApprovals(q: Queryable, principal: string): Promise<ControlPlaneApproval[]> {
  const r = await q.query<Row>("SELECT * FROM approvals WHERE principal = $1 AND status = 'pending' AND expires_at > clock_timestamp() ORDER BY created_at, id", [principal]);
  return r.rows.map(fromRow);
}

/**
 * The operator's answer: a compare-and-swap on a pending, unexpired request of `principal` (its
 * row locked for the check), and the NOTIFY in the same transaction. `matches`: the answer is
 * given only if the request still is what the operator was shown (`mismatch` otherwise, nothing
 * changed). `answered: false` with the record: someone else decided it first (the record says
 * who), or it expired; without a record: no such request of this principal.
 */
export async function answerApproval(
  pool: ControlPlanePool,
  principal: string,
  a: { id: string; approve: boolean; remember: boolean; decidedBy: string; matches?: (r: ControlPlaneApproval) => boolean },
): Promise<{ answered: boolean; mismatch?: boolean; record: ControlPlaneApproval | undefined }> {
  return inTransaction(pool, async (c) => {
    const seen = await c.query<Row & { open: boolean }>(
      "SELECT *, status = 'pending' AND expires_at > clock_timestamp() AS open FROM approvals WHERE id = $1 AND principal = $2 FOR UPDATE",
      [a.id, principal],
    );
    const row = seen.rows[0];
    if (!row) return { answered: false, record: undefined };
    const record = fromRow(row);
    if (!row.open) return { answered: false, record };
    if (a.matches && !a.matches(record)) return { answered: false, mismatch: true, record };
    const r = await c.query<Row>('UPDATE approvals SET status = $2, remember = $3, decided_at = clock_timestamp(), decided_by = $4 WHERE id = $1 RETURNING *', [
      a.id,
      a.approve ? 'approved' : 'denied',
      a.approve && a.remember,
      a.decidedBy,
    ]);
    await c.query('SELECT pg_notify($1, $2)', [APPROVAL_CHANNEL, a.id]);
    return { answered: true, record: fromRow(r.rows[0]!) };
  });
}

/** The asking member gives up on a request (it expired, or the call was cancelled); an answer already given stays. */
export async function closeApproval(q: Queryable, id: string, status: 'expired' | 'cancelled'): Promise<void> {
  await q.query("UPDATE approvals SET status = $2, decided_at = clock_timestamp() WHERE id = $1 AND status = 'pending'", [id, status]);
}
