// For `doctor`: whether the store's SQLite binding loads here and opens a database.
import { createRequire } from 'node:module';

export function probeSqlite(): { ok: boolean; detail: string; version?: string } {
  const require = createRequire(import.meta.url);
  let Database: typeof import('better-sqlite3');
  try {
    Database = require('better-sqlite3') as typeof import('better-sqlite3');
  } catch (err) {
    return { ok: false, detail: `better-sqlite3 does not load (run npm ci; 12.x is needed on Node 20): ${err instanceof Error ? err.message : String(err)}` };
  }
  const nativeBinding = process.env.SUPERVISOR_SQLITE_BINDING;
  const db = nativeBinding ? new Database(':memory:', { nativeBinding }) : new Database(':memory:');
  try {
    const row = db.prepare('select sqlite_version() as v').get() as { v: string };
    const pkg = require('better-sqlite3/package.json') as { version: string };
    return { ok: true, detail: `better-sqlite3 ${pkg.version} opens an in-memory database`, version: row.v };
  } finally {
    db.close();
  }
}
