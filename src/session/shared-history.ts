// session_search with a control plane (decision 127). This machine's store answers first: it is
// the record of every session it holds, the running one included, with what the copy has not
// caught up with yet; the ordinary scope (this session) is answered there alone. Searching every
// session of the principal adds the control plane's copies of the other machines' runs, leaving
// out the copies of sessions this store holds. This machine's hits come first, then the others',
// each in its own engine's order (their ranks are not on one scale).
import type { SessionHistory } from '../adapters/adapter-types.js';
import { checkedSearch, SessionSearch, type Database, type PrincipalScope, type SessionSearchHit, type SessionSearchQuery } from '../store/index.js';

/** The control plane's search, leaving out the copies of `exceptRuns` (local session ids). */
export type OtherMachinesSearch = (scope: PrincipalScope, query: SessionSearchQuery, exceptRuns: readonly string[]) => Promise<SessionSearchHit[]>;

export function sharedHistory(db: Database, otherMachines: OtherMachinesSearch): SessionHistory {
  const here = new SessionSearch(db);
  const heldHere = db.prepare('SELECT id FROM sessions WHERE principal = ?').pluck();
  return {
    async search(scope, query) {
      const hits = here.search(scope, query); // a malformed query is refused here, before any round trip
      const { principal, sessionId, limit } = checkedSearch(scope, query);
      if (sessionId !== null || hits.length >= limit) return hits;
      const there = await otherMachines(scope, { ...query, limit: limit - hits.length }, heldHere.all(principal) as string[]);
      return [...hits, ...there];
    },
  };
}
