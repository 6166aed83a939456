// Approval requests waiting for an operator in another terminal. The run inserts a row and polls
// it; `supervisor approvals` answers it. Principal-scoped through the owning session: an operator
// sees and answers only their own runs' requests. Rows hold the bounded, field-redacted preview
// the prompt would show, never raw arguments.
import { randomBytes } from 'node:crypto';
import type { Database } from './database.js';
import type { PrincipalScope } from './session-store.js';
import { StoreInputError } from './store-errors.js';
import { faultPoint } from './fault-injection.js';

/** The longest action a pending request holds (and shows) in full. */
export const PENDING_SUMMARY_MAX = 65_536;

export type PendingStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'cancelled';

export interface PendingApproval {
  id: string;
  sessionId: string;
  tool: string;
  capability: string;
  summary: string;
  preview: string;
  status: PendingStatus;
  remember: boolean;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  /** Who answered (`supervisor approvals` at a terminal, or a `supervisor web` page); null until then. */
  decidedBy: string | null;
}

/** A request as the operator lists it: with the delegation chain of its session. */
export interface ListedApproval extends PendingApproval {
  /** Session ids from the root session to the request's own (one id when it is not a child agent's). */
  chain: string[];
}

/** How far up a delegation chain is followed (the depth limit is at most 8). */
const CHAIN_MAX = 16;

interface Row {
  id: string;
  session_id: string;
  tool: string;
  capability: string;
  summary: string;
  preview: string;
  status: PendingStatus;
  remember: number;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
  decided_by: string | null;
}

const of = (r: Row): PendingApproval => ({
  id: r.id,
  sessionId: r.session_id,
  tool: r.tool,
  capability: r.capability,
  summary: r.summary,
  preview: r.preview,
  status: r.status,
  remember: r.remember === 1,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  decidedAt: r.decided_at,
  decidedBy: r.decided_by,
});

export class PendingApprovalStore {
  private readonly q;

  constructor(private readonly db: Database, private readonly now: () => number = Date.now) {
    const owned = 'SELECT p.* FROM pending_approvals p JOIN sessions s ON s.id = p.session_id';
    this.q = {
      insert: db.prepare(`INSERT INTO pending_approvals (id, session_id, tool, capability, summary, preview, status, owner_pid, created_at, expires_at)
        VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`),
      byId: db.prepare('SELECT * FROM pending_approvals WHERE id = ?'),
      owned: db.prepare(`${owned} WHERE p.id = ? AND s.principal = ?`),
      pending: db.prepare(`${owned} WHERE s.principal = ? AND p.status = 'pending' AND p.expires_at > ? ORDER BY p.created_at, p.id`),
      // The compare-and-swap: only a request still pending (and not past its expiry) is answered, so
      // of two answers (two tabs, a tab and a terminal) exactly one changes the row.
      decide: db.prepare("UPDATE pending_approvals SET status = ?, remember = ?, decided_at = ?, decided_by = ? WHERE id = ? AND status = 'pending' AND expires_at > ?"),
      close: db.prepare("UPDATE pending_approvals SET status = ?, decided_at = ? WHERE id = ? AND status = 'pending'"),
      // A child agent's session is some agent.spawn task's child_session_id; its parent is that task's session.
      chain: db.prepare(`WITH RECURSIVE up(sid, depth) AS (
          SELECT ?, 0
          UNION ALL SELECT t.session_id, up.depth + 1 FROM tasks t JOIN up ON t.child_session_id = up.sid WHERE up.depth < ${CHAIN_MAX}
        ) SELECT sid FROM up ORDER BY depth DESC`),
    };
  }

  /**
   * The waiting run's side: a new pending request for `ttlMs`. The action summary is what the
   * operator approves, so it is kept whole: one longer than PENDING_SUMMARY_MAX is refused (the
   * caller denies the call), never cut where nobody can see the rest.
   */
  create(r: { sessionId: string; tool: string; capability: string; summary: string; preview: string; ttlMs: number }): PendingApproval {
    if (r.summary.length > PENDING_SUMMARY_MAX) {
      throw new StoreInputError('summary', `the action is ${r.summary.length} characters, more than the ${PENDING_SUMMARY_MAX} a pending request shows in full; answer it at a terminal instead`);
    }
    const id = `ap_${randomBytes(8).toString('hex')}`;
    const now = this.now();
    this.q.insert.run(id, r.sessionId, r.tool.slice(0, 256), r.capability.slice(0, 512), r.summary, r.preview.slice(0, 4000), process.pid, now, now + r.ttlMs);
    faultPoint(this.db, 'approval-pending');
    return of(this.q.byId.get(id) as Row);
  }

  /** The waiting run's side: the row as it is now (no scope: the run created it). */
  poll(id: string): PendingApproval | undefined {
    const r = this.q.byId.get(id) as Row | undefined;
    return r && of(r);
  }

  /** The waiting run's side: it stopped waiting (timeout or cancel) without an answer. */
  close(id: string, status: 'expired' | 'cancelled'): void {
    this.q.close.run(status, this.now(), id);
  }

  /** The operator's side: one request of their runs, in any state; undefined if not theirs or not found. */
  get(scope: PrincipalScope, id: string): ListedApproval | undefined {
    const r = this.q.owned.get(id, principal(scope)) as Row | undefined;
    return r && { ...of(r), chain: this.chainOf(r.session_id) };
  }

  /** The operator's side: requests of their runs still waiting. */
  list(scope: PrincipalScope): ListedApproval[] {
    return (this.q.pending.all(principal(scope), this.now()) as Row[]).map((r) => ({ ...of(r), chain: this.chainOf(r.session_id) }));
  }

  /** The delegation chain of a session, root first (parent → child, as the prompt tags it). */
  private chainOf(sessionId: string): string[] {
    return (this.q.chain.all(sessionId) as { sid: string }[]).map((c) => c.sid);
  }

  /**
   * The operator's side: answers a waiting request. undefined if it is not theirs or not found;
   * `answered: false` if it was no longer waiting (answered, expired or cancelled already); the
   * record then says who answered it. `decidedBy` names this answer's origin (bounded text).
   */
  answer(scope: PrincipalScope, id: string, approved: boolean, remember: boolean, decidedBy: string): { record: PendingApproval; answered: boolean } | undefined {
    const r = this.q.owned.get(id, principal(scope)) as Row | undefined;
    if (!r) return undefined;
    const changed = this.q.decide.run(approved ? 'approved' : 'denied', remember ? 1 : 0, this.now(), decidedBy.slice(0, 200), id, this.now()).changes === 1;
    return { record: of(this.q.byId.get(id) as Row), answered: changed };
  }
}

function principal(scope: PrincipalScope): string {
  const p = (scope as PrincipalScope | undefined)?.principal;
  if (typeof p !== 'string' || p === '') throw new StoreInputError('principal', 'must be a non-empty string');
  return p;
}
