// The supervisor's SQLite control plane: one file, WAL, numbered migrations applied in order.
import { chmodSync } from 'node:fs';
import { makeDirs } from './make-dirs.js';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';
import { attachCheckpointer, AUTO_CHECKPOINT_PAGES, releaseCheckpointer } from './checkpointer.js';

export type Database = BetterSqlite3.Database;

export class StoreError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

const require = createRequire(import.meta.url);

/** Opens (creating if needed) the store at `file` and brings its schema up to date. */
export function openStore(file: string): Database {
  const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
  if (file !== ':memory:') {
    makeDirs(dirname(file), 0o700);
  }
  let db: Database;
  // An operator-supplied prebuilt binding, for platforms where better-sqlite3 could not fetch its
  // own at install time (the Windows suite under Wine uses this).
  const nativeBinding = process.env.SUPERVISOR_SQLITE_BINDING;
  try {
    db = nativeBinding ? new Sqlite(file, { nativeBinding }) : new Sqlite(file);
  } catch (cause) {
    throw new StoreError('STORE_OPEN_FAILED', `cannot open the store at ${file}: ${(cause as Error).message}`, { cause });
  }
  if (file !== ':memory:') {
    try {
      chmodSync(file, 0o600);
    } catch {
      // A store on a filesystem without modes still works; nothing secret is stored in it.
    }
  }
  // The wait first: switching to WAL and migrating take locks another opener may hold.
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  db.pragma('foreign_keys = ON');
  migrate(db, file);
  // Not on Windows: a file the thread still holds open for a moment after close could not be removed.
  if (file !== ':memory:' && process.platform !== 'win32' && process.env.SUPERVISOR_SQLITE_CHECKPOINTER !== '0') {
    attachCheckpointer(db, file);
    const close = db.close.bind(db);
    db.close = () => {
      releaseCheckpointer(db, file);
      return close();
    };
  }
  return db;
}

/**
 * Applies the missing migrations. Several processes may open a fresh store at once: the versions
 * are read and every missing one applied under one write lock (BEGIN IMMEDIATE), so the second
 * opener finds them applied instead of racing to create the same tables.
 */
function migrate(db: Database, file: string): void {
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    const applied = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version),
    );
    const newest = Math.max(0, ...applied);
    const known = MIGRATIONS.length === 0 ? 0 : MIGRATIONS[MIGRATIONS.length - 1]!.version;
    if (newest > known) {
      throw new StoreError(
        'STORE_TOO_NEW',
        `the store at ${file} has schema version ${newest}, newer than this supervisor knows (${known}); upgrade the supervisor or use another --state-dir`,
      );
    }
    for (const m of MIGRATIONS) {
      if (applied.has(m.version)) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    }
  }).immediate();
}
