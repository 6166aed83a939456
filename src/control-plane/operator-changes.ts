// The operator's live feed on the control plane (migration 7, decision 125): the same rows as the
// SQLite store's operator_changes (kind, ref, session, status), written by triggers on every
// member's writes, read principal-scoped after a seq. The archive sweep trims it.
import type { OperatorChange, OperatorChangeKind } from '../store/operator-changes.js';
import type { Queryable } from './connect.js';

/** The newest change's seq (by anyone), 0 before the first: one index probe. */
export async function changeFeedHead(q: Queryable): Promise<number> {
  const r = await q.query<{ seq: number | null }>('SELECT max(seq) AS seq FROM operator_changes');
  return r.rows[0]?.seq ?? 0;
}

/** False once rows after `seq` were trimmed: a reader that far behind reloads its lists. */
export async function changeFeedContinuousAfter(q: Queryable, seq: number): Promise<boolean> {
  const r = await q.query<{ oldest: number | null }>('SELECT min(seq) AS oldest FROM operator_changes');
  const oldest = r.rows[0]?.oldest ?? null;
  return oldest === null || oldest <= seq + 1;
}

/** The principal's changes after `seq`, oldest first, at most `limit`. */
export async function changesAfter(q: Queryable, principal: string, seq: number, limit = 500): Promise<OperatorChange[]> {
  const r = await q.query<{ seq: number; kind: OperatorChangeKind; ref: string; session_id: string; status: string; at: number }>(
    'SELECT seq, kind, ref, session_id, status, at FROM operator_changes WHERE principal = $1 AND seq > $2 ORDER BY seq LIMIT $3',
    [principal, seq, limit],
  );
  return r.rows.map((x) => ({ seq: x.seq, kind: x.kind, ref: x.ref, sessionId: x.session_id, status: x.status, at: x.at }));
}
