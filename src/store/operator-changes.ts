// The ordered feed of what an operator's views show changing (migration 10): a pending request
// asked or decided, a session or task started or ended. Triggers write it; the web page's live
// stream reads it, its seq being the SSE event id a reconnecting page resumes from. Rows hold ids
// and states only. Principal-scoped through the owning session, like every operator query.
import type { Database } from './database.js';
import type { PrincipalScope } from './session-store.js';
import { StoreInputError } from './store-errors.js';

export type OperatorChangeKind = 'approval' | 'session' | 'task';

export interface OperatorChange {
  seq: number;
  kind: OperatorChangeKind;
  /** The changed row's id (a pending request, a session or a task). */
  ref: string;
  sessionId: string;
  status: string;
  at: number;
}

interface Row {
  seq: number;
  kind: OperatorChangeKind;
  ref: string;
  session_id: string;
  status: string;
  at: number;
}

/** How many rows the feed keeps (the trigger in migration 10 drops older ones). */
export const OPERATOR_CHANGES_KEPT = 10_000;

export class OperatorChangeFeed {
  private readonly q;

  constructor(db: Database) {
    this.q = {
      // sqlite_sequence holds AUTOINCREMENT's high-water mark: one row read, whatever the feed's size.
      head: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'operator_changes'").pluck(),
      oldest: db.prepare('SELECT min(seq) FROM operator_changes').pluck(),
      after: db.prepare(
        'SELECT c.* FROM operator_changes c JOIN sessions s ON s.id = c.session_id WHERE c.seq > ? AND s.principal = ? ORDER BY c.seq LIMIT ?',
      ),
    };
  }

  /** The newest seq written (by anyone), 0 before the first: a cheap "has anything changed" probe. */
  head(): number {
    return (this.q.head.get() as number | undefined) ?? 0;
  }

  /**
   * Whether a reader that has seen everything up to `seq` can still be given every later change:
   * false once rows after it were dropped (the reader must reload its lists instead).
   */
  continuousAfter(seq: number): boolean {
    const oldest = this.q.oldest.get() as number | null;
    return oldest === null || oldest <= seq + 1;
  }

  /** The principal's changes after `seq`, oldest first, at most `limit`. */
  after(scope: PrincipalScope, seq: number, limit = 500): OperatorChange[] {
    const p = (scope as PrincipalScope | undefined)?.principal;
    if (typeof p !== 'string' || p === '') throw new StoreInputError('principal', 'must be a non-empty string');
    return (this.q.after.all(seq, p, limit) as Row[]).map((r) => ({ seq: r.seq, kind: r.kind, ref: r.ref, sessionId: r.session_id, status: r.status, at: r.at }));
  }
}
