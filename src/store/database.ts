// The supervisor's SQLite control plane: one file, WAL, numbered migrations applied in order.
import { lstatSync } from 'node:fs';
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
// A static import, so that the exec bundle carries better-sqlite3's JavaScript (a dozen CommonJS
// files, each resolved and read at every start otherwise; decision 67). Its addon is loaded when a
// store is opened, by path (addonPath below).
import Sqlite from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';
import { StoreError } from './store-errors.js';
import { ensurePrivateDir, ensurePrivateFile, withPrivateUmask } from './private-files.js';
import { attachCheckpointer, AUTO_CHECKPOINT_PAGES, releaseCheckpointer } from './checkpointer.js';
import { flushDeferredWrites } from './event-chain.js';

export type Database = BetterSqlite3.Database;

export { StoreError };

const require = createRequire(import.meta.url);

/**
 * Opens (creating if needed) the store at `file` and brings its schema up to date. `checkpointer:
 * false` is for a short-lived reader (the operator's views): no checkpoint thread is started for it,
 * and SQLite's automatic checkpoint stays on for the odd small write it makes.
 */
export function openStore(file: string, opts: { checkpointer?: boolean } = {}): Database {
  if (file !== ':memory:') prepareStoreFile(file);
  let db: Database;
  // An operator-supplied prebuilt binding, for platforms where better-sqlite3 could not fetch its
  // own at install time (the Windows suite under Wine uses this); else the addon by its path.
  const nativeBinding = process.env.SUPERVISOR_SQLITE_BINDING || addonPath();
  try {
    // SQLite creates -wal and -shm with the database file's mode; the umask keeps them 0600 too.
    db = withPrivateUmask(() => {
      const opened = nativeBinding ? new Sqlite(file, { nativeBinding }) : new Sqlite(file);
      // The wait first: switching to WAL and migrating take locks another opener may hold.
      opened.pragma('busy_timeout = 5000');
      enterWal(opened);
      return opened;
    });
  } catch (cause) {
    throw new StoreError('STORE_OPEN_FAILED', `cannot open the store at ${file}: ${(cause as Error).message}`, { cause });
  }
  db.pragma('synchronous = NORMAL');
  db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  db.pragma('foreign_keys = ON');
  migrate(db, file);
  // Not on Windows: a file the thread still holds open for a moment after close could not be removed.
  const checkpointed = file !== ':memory:' && opts.checkpointer !== false && process.platform !== 'win32' && process.env.SUPERVISOR_SQLITE_CHECKPOINTER !== '0';
  if (checkpointed) attachCheckpointer(db, file);
  const close = db.close.bind(db);
  db.close = () => {
    // Deferred writes (group commit) still queued land before the connection goes: closed first,
    // they were lost and their promises never settled (an effect's audit events among them).
    if (db.open) flushDeferredWrites(db);
    if (checkpointed) releaseCheckpointer(db, file);
    return close();
  };
  return db;
}

/**
 * Switches a fresh store to WAL (a store in WAL already stays there at no cost). The switch needs
 * the file to itself, and SQLite does not wait on the busy timeout for a lock it would have to
 * upgrade while another opener holds one (that could deadlock): it answers SQLITE_BUSY at once.
 * So openers that reach a fresh store together take turns here, for as long as the busy timeout
 * (one of 24 at once failed with "database is locked" at load 5).
 */
function enterWal(db: Database): void {
  const deadline = Date.now() + 5000;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw err;
      Atomics.wait(nap, 0, 0, 2 + Math.floor(Math.random() * 8));
    }
  }
}

/**
 * better-sqlite3's addon where its install puts it, so that opening skips the `bindings` package's
 * search (a stack trace, then a stat per candidate directory: ~10 ms of every `exec`, decision 65).
 * Undefined when it is not there (another layout): better-sqlite3 then searches as before.
 */
let addon: { path: string | undefined } | null = null;
function addonPath(): string | undefined {
  // Resolved once per process: a run opens the store more than once (checkpointer, reconcile).
  if (addon === null) {
    try {
      addon = { path: require.resolve('better-sqlite3/build/Release/better_sqlite3.node') };
    } catch {
      addon = { path: undefined };
    }
  }
  return addon.path;
}

/**
 * The store's directory is private (0700, ours) and the file exists 0600 before SQLite opens it:
 * created with O_EXCL|O_NOFOLLOW, never chmod-ed after. A symlinked store or WAL is refused — in a
 * directory only we can write, nobody can swap one in after this check.
 */
function prepareStoreFile(file: string): void {
  ensurePrivateDir(dirname(file));
  ensurePrivateFile(file, 'the store');
  for (const side of [`${file}-wal`, `${file}-shm`]) {
    // Not there yet: SQLite creates it under the private umask. There: a file of ours, not a link.
    if (existsQuietly(side)) ensurePrivateFile(side, 'the store journal');
  }
}

function existsQuietly(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Applies the missing migrations. Several processes may open a fresh store at once: the versions
 * are read and every missing one applied under one write lock (BEGIN IMMEDIATE), so the second
 * opener finds them applied instead of racing to create the same tables.
 */
function migrate(db: Database, file: string): void {
  // An up-to-date store (every open but the first few) needs no write lock: the check is a read, so
  // an operator's `sessions` or `approvals` never waits behind a run's write (issue 16).
  const applied = appliedVersions(db, file);
  if (applied && MIGRATIONS.every((m) => applied.has(m.version))) return;
  db.transaction(() => {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
    const now = appliedVersions(db, file)!;
    for (const m of MIGRATIONS) {
      if (now.has(m.version)) continue;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, Date.now());
    }
  }).immediate();
}

/** The applied migration versions (null before the first), refusing a store from a newer release. */
function appliedVersions(db: Database, file: string): Set<number> | null {
  if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get()) return null;
  const applied = new Set((db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((r) => r.version));
  const newest = Math.max(0, ...applied);
  const known = MIGRATIONS.length === 0 ? 0 : MIGRATIONS[MIGRATIONS.length - 1]!.version;
  if (newest > known) {
    throw new StoreError(
      'STORE_TOO_NEW',
      `the store at ${file} has schema version ${newest}, newer than this supervisor knows (${known}); upgrade the supervisor or use another --state-dir`,
    );
  }
  return applied;
}
