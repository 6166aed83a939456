// Deferred writes on real SQLite files: a deferred append or message is not in the file until the
// next group commit, lands before anything written after it (chain order = call order), is seen by
// a read on the same connection, fails alone when its chain is tampered with, and checks its input
// before anything is queued.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { appendEvent, appendEventsDeferred, deferredWriteCount, flushDeferredWrites, readEvents } from '../../src/store/event-chain.js';
import { verifyChain } from '../../src/store/chain-verify.js';
import { SessionStore } from '../../src/store/session-store.js';
import { ChainInconsistentError, StoreInputError } from '../../src/store/store-errors.js';
import { goodAndTamperedSessions, tamper, tempStore } from './store-fixtures.js';

const require = createRequire(import.meta.url);

function reader(t: { after(fn: () => void): void }, file: string) {
  const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
  const r = new Sqlite(file, { readonly: true });
  t.after(() => r.close());
  return r.prepare('SELECT kind FROM runtime_events WHERE session_id = ? ORDER BY seq').pluck();
}

test('a deferred append is in the file only after the next group commit, and resolves only then', async (t) => {
  const s = tempStore(t);
  const id = new SessionStore(s.db).createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const kinds = reader(t, s.file);
  const p = appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: { n: 1 } }]);
  assert.deepEqual(kinds.all(id), ['session.created'], 'nothing is written before the commit');
  assert.equal(deferredWriteCount(s.db), 1);
  const [done] = await p;
  assert.equal(done!.seq, 2);
  assert.deepEqual(kinds.all(id), ['session.created', 'effect.completed'], 'resolved means committed');
  assert.equal(deferredWriteCount(s.db), 0);
});

test('anything written after a deferred append lands after it: synchronous appends and SessionStore writes commit the queue first', async (t) => {
  const s = tempStore(t);
  const store = new SessionStore(s.db);
  const id = store.createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const turn = store.addTurn({ principal: 'p' }, id);
  const a = appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: { n: 1 } }]);
  const m = store.addMessageDeferred({ principal: 'p' }, id, { turnId: turn.id, role: 'tool', content: { text: 'deferred' } });
  appendEvent(s.db, id, 'effect.completed', { n: 2 });
  const b = appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: { n: 3 } }]);
  store.endTurn({ principal: 'p' }, turn.id, 'completed');
  await Promise.all([a, m, b]);
  const order = readEvents(s.db, id).map((e) => `${e.kind}${(e.payload as { n?: number }).n ?? ''}`);
  assert.deepEqual(order, ['session.created', 'turn.started', 'effect.completed1', 'message.added', 'effect.completed2', 'effect.completed3', 'turn.ended']);
  assert.equal(verifyChain(s.db, id).ok, true);
});

test('reads on the same connection see deferred writes: readEvents and listMessages commit the queue first', async (t) => {
  const s = tempStore(t);
  const store = new SessionStore(s.db);
  const id = store.createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const m = store.addMessageDeferred({ principal: 'p' }, id, { role: 'user', content: 'hello' });
  assert.deepEqual(store.listMessages({ principal: 'p' }, id).map((x) => x.content), ['hello']);
  const e = appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: {} }]);
  assert.equal(readEvents(s.db, id).at(-1)!.kind, 'effect.completed');
  await Promise.all([m, e]);
});

test('a deferred write to a tampered chain fails alone; the others in its group commit land', async (t) => {
  const { s, store, good, bad } = goodAndTamperedSessions(t);
  const results = await Promise.allSettled([
    appendEventsDeferred(s.db, good, [{ kind: 'effect.completed', payload: { n: 1 } }]),
    appendEventsDeferred(s.db, bad, [{ kind: 'effect.completed', payload: { n: 2 } }]),
    store.addMessageDeferred({ principal: 'p' }, good, { role: 'tool', content: 'x' }),
  ]);
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  assert.ok((results[1] as PromiseRejectedResult).reason instanceof ChainInconsistentError);
  assert.deepEqual(readEvents(s.db, good).map((e) => e.kind), ['session.created', 'effect.completed', 'message.added']);
  assert.equal(verifyChain(s.db, good).ok, true);
});

test('bad input is refused before anything is queued', async (t) => {
  const s = tempStore(t);
  const store = new SessionStore(s.db);
  const id = store.createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  await assert.rejects(appendEventsDeferred(s.db, id, [{ kind: 'Not A Kind', payload: {} }]), StoreInputError);
  await assert.rejects(appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: { when: new Date() } }]), /payload\.when/);
  assert.throws(() => store.addMessageDeferred({ principal: 'p' }, id, { role: 'robot' as never, content: 'x' }), StoreInputError);
  assert.equal(deferredWriteCount(s.db), 0);
  flushDeferredWrites(s.db);
  assert.deepEqual(readEvents(s.db, id).map((e) => e.kind), ['session.created']);
});

test('a flush inside a caller transaction does not join it: the queue waits for the next commit', async (t) => {
  const s = tempStore(t);
  const id = new SessionStore(s.db).createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const p = appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: {} }]);
  assert.throws(() =>
    s.db.transaction(() => {
      flushDeferredWrites(s.db);
      throw new Error('the caller rolls back');
    })(),
  );
  assert.equal(deferredWriteCount(s.db), 1, 'still queued: a rollback of the caller cannot take it along');
  await p;
  assert.deepEqual(readEvents(s.db, id).map((e) => e.kind), ['session.created', 'effect.completed']);
});

test('closing the connection commits its deferred writes first: nothing queued is lost, every promise settles', async (t) => {
  const s = tempStore(t);
  const id = new SessionStore(s.db).createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' }).id;
  const p = appendEventsDeferred(s.db, id, [{ kind: 'effect.completed', payload: { n: 1 } }]);
  s.db.close(); // in the same turn of the event loop, before the group commit would run
  const settled = await Promise.race([p.then(() => 'resolved', () => 'rejected'), new Promise((r) => setTimeout(() => r('pending'), 1000))]);
  assert.equal(settled, 'resolved', 'the deferred append settled');
  assert.deepEqual(reader(t, s.file).all(id), ['session.created', 'effect.completed'], 'and it is in the file');
});
