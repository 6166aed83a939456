// session_search over the copied messages of every member's runs (decision 127). A copied message
// is indexed as tsvector parts built by the supervisor's own tokenizer from the same text the
// SQLite index takes (decision 128), and a query is parsed once by the same parser and handed to
// PostgreSQL as tsquery literals it cannot misread: the same query finds the same messages on
// both engines. Ranking differs (ts_rank here, bm25 in FTS5); snippets are cut by the same code.
import { checkedSearch, type SessionSearchHit, type SessionSearchQuery } from '../store/session-search.js';
import { searchableText, snippetOf, toPartsQuery, tsvectorDocuments } from '../store/search-query.js';
import type { PrincipalScope } from '../store/session-store.js';
import type { Queryable } from './connect.js';

/** The tsvector parts a copied message is indexed by (none for a message with no text). */
export function messageSearchDocuments(content: string): string[] {
  return tsvectorDocuments(searchableText(content));
}

type HitRow = { session_id: string; turn: number | null; role: string; created_at: string; content: string };

/**
 * The principal's copied messages that match, best first. `exceptRuns`: local session ids whose
 * copies are left out (the asking host's own sessions, which its own store answers for, fresher).
 * Throws SearchQueryError for a malformed query, as the SQLite search does.
 */
export async function searchCopiedMessages(q: Queryable, scope: PrincipalScope, query: SessionSearchQuery, exceptRuns: readonly string[] = []): Promise<SessionSearchHit[]> {
  const { principal, parsed, sessionId, limit } = checkedSearch(scope, query);
  const parts = toPartsQuery(parsed);
  if (parts === null) return [];
  // A message matches when its parts together satisfy the query: each phrase or NEAR within one
  // part (the parts overlap enough for that), AND / OR / NOT across them. The GIN index finds the
  // candidates; the condition is checked per message over its parts.
  const first = 6;
  const condition = parts.condition((i) => `bool_or(p.doc @@ $${first + i}::tsquery)`);
  const r = await q.query<HitRow>(
    `WITH candidates AS (
       SELECT DISTINCT c.session_id, c.seq FROM message_search c JOIN sessions s ON s.id = c.session_id
        WHERE c.doc @@ $1::tsquery AND s.principal = $2 AND ($3::text IS NULL OR c.session_id = $3)
          AND split_part(c.session_id, '@', 1) <> ALL($4::text[])
     ), matched AS (
       SELECT p.session_id, p.seq, max(ts_rank(p.doc, $1::tsquery)) AS rank
         FROM message_search p JOIN candidates USING (session_id, seq)
        GROUP BY p.session_id, p.seq HAVING ${condition}
     ), hits AS (
       -- A session resumed by a later run is copied again under that run's member: one hit per
       -- message of the local session, from its newest copy.
       SELECT DISTINCT ON (split_part(m.session_id, '@', 1), m.seq) m.session_id, m.seq, m.turn, m.role, m.created_at, m.content, matched.rank
         FROM matched JOIN session_messages m USING (session_id, seq) JOIN sessions s ON s.id = m.session_id
        ORDER BY split_part(m.session_id, '@', 1), m.seq, s.created_at DESC, s.id DESC
     )
     SELECT session_id, turn, role, created_at, content FROM hits
      ORDER BY rank DESC, created_at DESC, session_id, seq
      LIMIT $5`,
    [parts.candidate, principal, sessionId, [...exceptRuns], limit, ...parts.leaves],
  );
  return r.rows.map((x) => ({
    sessionId: x.session_id,
    turn: x.turn,
    role: x.role,
    at: Number(x.created_at),
    snippet: snippetOf(searchableText(x.content), parsed),
  }));
}
