// Reads a state dir's store the way an outside observer would: its own read-only connection,
// opened and closed per query, so a test sees only what the supervisor committed.
import { createRequire } from 'node:module';

export type Row = Record<string, unknown>;
const require = createRequire(import.meta.url);
const Sqlite = require('better-sqlite3') as new (f: string, o: { readonly: boolean }) => { prepare(s: string): { all(...a: unknown[]): Row[] }; close(): void };

export function query(state: string, sql: string, ...args: unknown[]): Row[] {
  const db = new Sqlite(`${state}/supervisor.db`, { readonly: true });
  try {
    return db.prepare(sql).all(...args);
  } finally {
    db.close();
  }
}

/** A session's audit chain as an observer reads it: each event's kind and parsed payload, in order. */
export function chainOf(state: string, session: string): { kind: string; payload: any }[] {
  return query(state, 'SELECT kind, payload FROM runtime_events WHERE session_id = ? ORDER BY seq', session).map((e) => ({ kind: String(e.kind), payload: JSON.parse(String(e.payload)) }));
}
