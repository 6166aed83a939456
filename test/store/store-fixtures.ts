// Store test helpers: a real SQLite file in a temp dir per test, and a raw connection that plays
// the attacker (plain better-sqlite3, foreign keys off, no help from the store's code).
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { TestContext } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { openStore, type Database } from '../../src/store/database.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { SessionStore } from '../../src/store/session-store.js';

const require = createRequire(import.meta.url);

export interface TempStore {
  dir: string;
  file: string;
  db: Database;
}

/** A fresh store under a temp state dir, closed and removed after the test. */
export function tempStore(t: TestContext): TempStore {
  const dir = mkdtempSync(join(tmpdir(), 'sv-store-'));
  const file = join(dir, 'supervisor.db');
  const db = openStore(file);
  t.after(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { dir, file, db };
}

/**
 * Runs raw SQL against the file through its own connection, as someone editing the file would.
 * Without params the SQL may hold several statements.
 */
export function tamper(file: string, sql: string, ...params: unknown[]): void {
  const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
  const raw = new Sqlite(file);
  raw.pragma('foreign_keys = OFF'); // better-sqlite3 turns them on; someone editing the file would not
  try {
    if (params.length === 0) raw.exec(sql);
    else raw.prepare(sql).run(...params);
  } finally {
    raw.close();
  }
}

/** Two sessions of principal `p` in a fresh store: `good`, and `bad` whose chain head was deleted. */
export function goodAndTamperedSessions(t: TestContext): { s: TempStore; store: SessionStore; good: string; bad: string } {
  const s = tempStore(t);
  const store = new SessionStore(s.db);
  const good = store.createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const bad = store.createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  tamper(s.file, 'DELETE FROM chain_heads WHERE session_id = ?', bad);
  return { s, store, good, bad };
}

export const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** The documented hash formula, computed without the store's code: what a forger (or an auditor) would write. */
export const forgeEventHash = (prev: string, sessionId: string, seq: number, kind: string, at: number, payload: unknown): string =>
  sha256(`${prev}\n${canonicalJson({ session_id: sessionId, seq, kind, at, payload })}`);

/** One runtime_events row as either engine stores it (the columns the verifier reads). */
export type { ChainEventRow as ChainRow } from '../../src/store/chain-verify.js';
