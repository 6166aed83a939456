// The store loads better-sqlite3's addon by its path (issue 17): the `bindings` package's search
// (a stack trace to find the caller, then stat after stat over a dozen candidate directories) ran
// on every open, on every `exec`. SUPERVISOR_SQLITE_BINDING still wins when set (decision 65).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DATABASE = new URL('../../src/store/database.js', import.meta.url).href;

test('opening the store does not search for the addon through the bindings package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-binding-'));
  try {
    const script = `
      import { createRequire } from 'node:module';
      const { openStore } = await import(${JSON.stringify(DATABASE)});
      const db = openStore(${JSON.stringify(join(dir, 'state', 'supervisor.db'))}, { checkpointer: false });
      const ok = db.prepare('SELECT 1 AS one').get().one === 1;
      db.close();
      const req = createRequire(${JSON.stringify(DATABASE)});
      const searched = Object.keys(req.cache).some((k) => /[\\\\/]node_modules[\\\\/]bindings[\\\\/]/.test(k));
      console.log(JSON.stringify({ ok, searched }));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, SUPERVISOR_SQLITE_BINDING: '' } });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim()), { ok: true, searched: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
