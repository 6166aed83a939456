// Full-text search over stored history (FTS5, migration 5), scoped to the principal that owns it.
// Rows hold durable views only (already redacted when they were written); a hit comes back as a
// short snippet with where and when it was said, never the whole message. The query text is parsed
// by search-query.ts (one language for SQLite and PostgreSQL, decision 128); FTS5 only ever sees
// quoted tokens.
import type { Database } from './database.js';
import { principalOf, type PrincipalScope } from './session-store.js';
import { flushDeferredWrites } from './event-chain.js';
import { StoreInputError } from './store-errors.js';
import { parseSearchQuery, SearchQueryError, toFts5, type SearchQuery } from './search-query.js';

export { SearchQueryError } from './search-query.js';

export const MAX_SEARCH_QUERY_CHARS = 256;
export const MAX_SEARCH_RESULTS = 20;
/** Tokens of context a snippet shows around the match, and the characters it may take at most. */
const SNIPPET_TOKENS = 16;
const MAX_SNIPPET_CHARS = 400;

export interface SessionSearchHit {
  sessionId: string;
  /** The turn's number in its session (1, 2, …), or null for a message outside any turn. */
  turn: number | null;
  role: string;
  /** Epoch milliseconds. */
  at: number;
  /** Matched terms are wrapped in [ ]; cut text is marked with …. */
  snippet: string;
}

export interface SessionSearchQuery {
  /** The search language (search-query.ts): words, "a phrase", word*, AND / OR / NOT, ( ), NEAR(a b, 5). */
  query: string;
  /** Only this session (the ordinary scope); null or absent: every session of the principal. */
  sessionId?: string | null;
  /** Default 10, at most MAX_SEARCH_RESULTS. */
  limit?: number;
}

interface HitRow {
  session_id: string;
  turn: number | null;
  role: string;
  created_at: number;
  snippet: string | null;
}

export class SessionSearch {
  private readonly q;

  constructor(private readonly db: Database) {
    // One statement for both scopes: the principal is always bound, the session optionally.
    // Another principal's messages never join: s.principal is part of every match.
    this.q = db.prepare(`
      SELECT m.session_id, t.seq AS turn, m.role, m.created_at,
             snippet(message_fts, 0, '[', ']', '…', ${SNIPPET_TOKENS}) AS snippet
        FROM message_fts
        JOIN messages m ON m.rowid = message_fts.rowid
        JOIN sessions s ON s.id = m.session_id
        LEFT JOIN turns t ON t.id = m.turn_id
       WHERE message_fts MATCH @query
         AND s.principal = @principal
         AND (@session IS NULL OR m.session_id = @session)
       ORDER BY rank, m.created_at DESC
       LIMIT @limit`);
  }

  /** Hits for `scope.principal`, best first. Throws SearchQueryError for a malformed query. */
  search(scope: PrincipalScope, q: SessionSearchQuery): SessionSearchHit[] {
    flushDeferredWrites(this.db);
    const { principal, parsed, sessionId: session, limit } = checkedSearch(scope, q);
    const match = toFts5(parsed);
    if (match === null) return []; // every term was symbols only: nothing can match
    let rows: HitRow[];
    try {
      rows = this.q.all({ query: match, principal, session, limit }) as HitRow[];
    } catch (err) {
      // The MATCH text is built from quoted tokens, so FTS5 should never reject it; if it does, the
      // caller still gets an input error, not a crash. Anything else (busy, corrupt, I/O) stays an exception.
      if ((err as { code?: unknown }).code === 'SQLITE_ERROR') throw new SearchQueryError((err as Error).message.slice(0, 120));
      throw err;
    }
    return rows.map((r) => ({
      sessionId: r.session_id,
      turn: r.turn,
      role: r.role,
      at: r.created_at,
      snippet: bounded(r.snippet ?? ''),
    }));
  }
}

/** A search as both engines take it: the principal, the parsed query, the session (or null) and the bounded limit. */
export interface CheckedSearch {
  principal: string;
  parsed: SearchQuery;
  sessionId: string | null;
  limit: number;
}

/**
 * Checks a search's input the one way both engines do (the SQLite store's and the control plane's,
 * decision 127): StoreInputError naming the field, SearchQueryError for a malformed query.
 */
export function checkedSearch(scope: PrincipalScope, q: SessionSearchQuery): CheckedSearch {
  const principal = principalOf(scope);
  const query = q?.query;
  if (typeof query !== 'string' || query.trim() === '') throw new StoreInputError('query', 'must be a non-empty string');
  if (query.length > MAX_SEARCH_QUERY_CHARS) throw new StoreInputError('query', `is ${query.length} characters, over the limit of ${MAX_SEARCH_QUERY_CHARS}`);
  const sessionId = q.sessionId ?? null;
  if (sessionId !== null && typeof sessionId !== 'string') throw new StoreInputError('sessionId', 'must be a string or null');
  const limit = Math.min(Math.max(1, Math.floor(Number(q.limit ?? 10)) || 1), MAX_SEARCH_RESULTS);
  return { principal, parsed: parseSearchQuery(query), sessionId, limit };
}

function bounded(s: string): string {
  return s.length > MAX_SNIPPET_CHARS ? `${s.slice(0, MAX_SNIPPET_CHARS - 1)}…` : s;
}
