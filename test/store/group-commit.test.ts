// Group commit and the checkpointer thread, on real SQLite files: concurrent appends share a
// commit but each settles only once its events are in the store, one bad chain does not fail the
// others, and the WAL is checkpointed off the main thread (or automatically if that thread dies).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { appendEventsGrouped, readEvents } from '../../src/store/event-chain.js';
import { verifyChain } from '../../src/store/chain-verify.js';
import { SessionStore } from '../../src/store/session-store.js';
import { ChainInconsistentError } from '../../src/store/store-errors.js';
import { checkpointerDue, checkpointerRunning, checkpointerThread, START_DELAY_MS, startCheckpointerNow } from '../../src/store/checkpointer.js';
import { goodAndTamperedSessions, tamper, tempStore } from './store-fixtures.js';

const require = createRequire(import.meta.url);

test('concurrent grouped appends all land, in per-session order, and each is visible to another connection when it resolves', async (t) => {
  const s = tempStore(t);
  const store = new SessionStore(s.db);
  const ids = [1, 2, 3].map(() => store.createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id);
  const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
  const reader = new Sqlite(s.file, { readonly: true });
  t.after(() => reader.close());
  const count = reader.prepare("SELECT COUNT(*) FROM runtime_events WHERE session_id = ? AND kind = ? AND json_extract(payload, '$.n') = ?").pluck();
  const appends: Promise<void>[] = [];
  for (let n = 0; n < 30; n++) {
    const id = ids[n % 3]!;
    appends.push(
      appendEventsGrouped(s.db, id, [{ kind: 'effect.completed', payload: { n } }], true).then((done) => {
        assert.equal(done.length, 1);
        assert.equal(count.get(id, 'effect.completed', n), 1, `event ${n} resolved before it was committed`);
      }),
    );
  }
  await Promise.all(appends);
  for (const id of ids) {
    assert.equal(verifyChain(s.db, id).ok, true);
    const ns = readEvents(s.db, id).filter((e) => e.kind === 'effect.completed').map((e) => (e.payload as { n: number }).n);
    assert.deepEqual(ns, ns.slice().sort((a, b) => a - b), 'appends of one session keep their order');
    assert.equal(ns.length, 10);
  }
});

test('a batch holding an append to a tampered chain fails only that append', async (t) => {
  const { s, good, bad } = goodAndTamperedSessions(t);
  const results = await Promise.allSettled([
    appendEventsGrouped(s.db, good, [{ kind: 'effect.completed', payload: { n: 1 } }], true),
    appendEventsGrouped(s.db, bad, [{ kind: 'effect.completed', payload: { n: 2 } }], true),
    appendEventsGrouped(s.db, good, [{ kind: 'effect.completed', payload: { n: 3 } }], true),
  ]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.ok((results[1] as PromiseRejectedResult).reason instanceof ChainInconsistentError);
  assert.equal(readEvents(s.db, good).filter((e) => e.kind === 'effect.completed').length, 2);
  assert.equal(readEvents(s.db, bad).filter((e) => e.kind === 'effect.completed').length, 0);
});

test('a payload that is not plain JSON rejects its own append before anything is queued', async (t) => {
  const s = tempStore(t);
  const id = new SessionStore(s.db).createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  await assert.rejects(appendEventsGrouped(s.db, id, [{ kind: 'effect.completed', payload: { at: new Date() } }], true), /payload\.at/);
  assert.equal(verifyChain(s.db, id).ok, true);
});

/** True when every frame of the WAL has been checkpointed, read from the wal-index (native byte order). */
function walBackfilled(file: string): boolean {
  const shm = readFileSync(`${file}-shm`).subarray(0, 136);
  const endian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 'LE' : 'BE';
  const u32 = (at: number) => (endian === 'LE' ? shm.readUInt32LE(at) : shm.readUInt32BE(at));
  return u32(96) >= u32(16);
}

test('the checkpointer thread keeps the WAL small; if it dies, automatic checkpoints come back', async (t) => {
  const s = tempStore(t);
  // Due, not yet started: until then the connection checkpoints by itself.
  assert.equal(checkpointerDue(s.file), true);
  assert.equal(s.db.pragma('wal_autocheckpoint', { simple: true }), 8000);
  startCheckpointerNow(s.file);
  assert.equal(checkpointerRunning(s.file), true);
  assert.equal(s.db.pragma('wal_autocheckpoint', { simple: true }), 0, 'the main connection leaves checkpoints to the thread');
  const id = new SessionStore(s.db).createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const payload = { text: 'x'.repeat(3000) };
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < 500; i++) await appendEventsGrouped(s.db, id, [{ kind: 'effect.completed', payload }], false);
    // Wait until the thread has copied every frame of the log into the database, however slowly a
    // loaded machine schedules it (a fixed 400 ms pause failed under load): the wal-index in -shm
    // holds the log's last frame (mxFrame, offset 16) and how far it was copied (nBackfill, offset 96).
    const deadline = Date.now() + 20_000;
    while (!walBackfilled(s.file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.ok(walBackfilled(s.file), `round ${round}: the checkpointer did not copy the log into the database in 20 s`);
  }
  // 2,000 commits of ~3 pages each would make a WAL of ~24 MiB without checkpoints; with them the
  // log is restarted from its beginning and stays near one round's worth.
  const wal = statSync(`${s.file}-wal`).size;
  assert.ok(wal < 12 * 1024 * 1024, `WAL is ${wal} bytes`);
  const thread = checkpointerThread(s.file);
  assert.ok(thread);
  const exited = new Promise((r) => thread.once('exit', r));
  await thread.terminate();
  await exited;
  assert.equal(checkpointerRunning(s.file), false);
  assert.equal(s.db.pragma('wal_autocheckpoint', { simple: true }), 8000, 'the connection checkpoints by itself again');
});

test('closing the last connection stops the thread', (t) => {
  const s = tempStore(t);
  startCheckpointerNow(s.file);
  assert.equal(checkpointerRunning(s.file), true);
  s.db.close();
  assert.equal(checkpointerRunning(s.file), false);
});

test('a store closed before the thread was due never starts one; one open longer gets it by itself', async (t) => {
  const brief = tempStore(t);
  assert.equal(checkpointerDue(brief.file), true);
  brief.db.close();
  assert.equal(checkpointerDue(brief.file), false);
  assert.equal(checkpointerRunning(brief.file), false);
  await new Promise((r) => setTimeout(r, START_DELAY_MS + 200));
  assert.equal(checkpointerRunning(brief.file), false, 'the cancelled start did not fire after the close');
  const kept = tempStore(t);
  const deadline = Date.now() + START_DELAY_MS + 20_000;
  while (!checkpointerRunning(kept.file) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(checkpointerRunning(kept.file), true, `no thread ${START_DELAY_MS} ms after the open`);
  assert.equal(kept.db.pragma('wal_autocheckpoint', { simple: true }), 0, 'the connection leaves checkpoints to the thread once it runs');
});
