// Opening the store from several processes at once, and a store from a newer release: every opener
// either gets an up-to-date store or a clear refusal. Real processes, real SQLite files.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, tempDir } from '../helpers/procs.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { openStore } from '../../src/store/database.js';
import { tamper } from './store-fixtures.js';

const DATABASE = new URL('../../src/store/database.js', import.meta.url).href;
const dirs: { remove(): void }[] = [];
after(() => dirs.forEach((d) => d.remove()));

/**
 * A process that loads the store module, then waits for `go` to exist and opens `file`: every
 * opener is past its start-up when the race begins, so they all meet on the fresh file.
 */
function openFrom(file: string, go: string): Promise<{ code: number | null; stderr: string }> {
  const code = `const fs = require('node:fs');
    import(${JSON.stringify(DATABASE)}).then((m) => {
      process.stdout.write('ready\\n');
      const nap = new Int32Array(new SharedArrayBuffer(4));
      while (!fs.existsSync(${JSON.stringify(go)})) Atomics.wait(nap, 0, 0, 1);
      m.openStore(${JSON.stringify(file)}).close();
    }).catch((e) => { console.error(e.message); process.exit(1); })`;
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    c.stdout.once('data', () => ready.push(c.pid!));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (exit) => resolve({ code: exit, stderr }));
  });
}
const ready: number[] = [];

test('24 processes opening one fresh store at once all succeed, and each migration is applied once', async () => {
  // Before: "table spawns already exists" in 18 of 60 opens, once "duplicate column name".
  for (let round = 0; round < 1; round++) {
    const d = tempDir('store-race-');
    dirs.push(d);
    const file = join(d.path, 'supervisor.db');
    const go = join(d.path, 'go');
    ready.length = 0;
    const running = Promise.all(Array.from({ length: 24 }, () => openFrom(file, go)));
    const deadline = Date.now() + 60_000;
    while (ready.length < 24 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    writeFileSync(go, '');
    const results = await running;
    assert.deepEqual(results.filter((r) => r.code !== 0), [], 'every opener succeeded');
    const db = openStore(file);
    try {
      const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all();
      assert.deepEqual(versions, MIGRATIONS.map((m) => m.version));
    } finally {
      db.close();
    }
  }
});

test('a store from a newer release: every command refuses it in one paragraph, exit 2, no stack', () => {
  const d = tempDir('store-new-');
  dirs.push(d);
  const file = join(d.path, 'supervisor.db');
  openStore(file).close();
  tamper(file, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, ?, 1)', 'from-the-future');
  for (const args of [['sessions'], ['tasks'], ['approvals'], ['reconcile'], ['exec', '--state-dir', d.path, '--', 'true']]) {
    const argv = args[0] === 'exec' ? args : [...args, '--state-dir', d.path];
    const r = spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, args[0] === 'exec' ? 125 : 2, `${args[0]}: ${r.stderr}`);
    assert.match(r.stderr, /^supervisor: the store at .+ has schema version 999, newer than this supervisor knows .+; upgrade the supervisor or use another --state-dir\n$/);
  }
});

test('opening an up-to-date store takes no write lock: it opens at once while another connection holds one', async () => {
  // Operator commands (sessions, tasks, approvals) open the store while a run writes to it (issue 16):
  // a migration check under BEGIN IMMEDIATE made each of them wait for the writer, up to busy_timeout.
  const d = tempDir('store-open-lock-');
  dirs.push(d);
  const file = join(d.path, 'supervisor.db');
  openStore(file).close();
  const writer = openStore(file);
  writer.exec('BEGIN IMMEDIATE');
  try {
    const t0 = performance.now();
    const reader = openStore(file);
    const ms = performance.now() - t0;
    assert.equal((reader.prepare('SELECT count(*) AS n FROM schema_migrations').get() as { n: number }).n, MIGRATIONS.length);
    reader.close();
    // Before: SQLITE_BUSY after busy_timeout (5 s). The bound leaves room for a loaded machine.
    assert.ok(ms < 3_000, `the open waited ${Math.round(ms)} ms for the writer`);
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
});
