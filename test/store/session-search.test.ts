// Full-text search over stored history (migration 5): existing rows are backfilled, new rows are
// indexed as they are written, every query is principal-scoped, and hostile query text is a
// SearchQueryError (a clear input error), never a crash or a different statement.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { openStore } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { MAX_SEARCH_RESULTS, SearchQueryError, SessionSearch, SessionStore, StoreInputError } from '../../src/store/index.js';
import { tempStore } from './store-fixtures.js';

const require = createRequire(import.meta.url);
const alice = { principal: 'alice' };
const bob = { principal: 'bob' };

function session(store: SessionStore, scope: { principal: string }, messages: string[]) {
  const s = store.createSession(scope, { coreDir: '/core', coreRevision: 'r1', runtime: 'local' });
  const turn = store.addTurn(scope, s.id);
  for (const text of messages) store.addMessage(scope, s.id, { turnId: turn.id, role: 'user', content: { role: 'user', content: text } });
  return s.id;
}

test('rows written before the migration are backfilled; rows written after are indexed as they land', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sv-search-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'supervisor.db');
  // A store as the previous release left it: migrations 1–4 and a conversation.
  const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
  const old = new Sqlite(file);
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const m of MIGRATIONS.filter((m) => m.version <= 4)) {
    old.exec(m.sql);
    old.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 0);
  }
  old.exec(`INSERT INTO sessions VALUES ('se_old', 'alice', '/core', 'r0', 'local', 'completed', 1, 2);
    INSERT INTO turns VALUES ('tu_old', 'se_old', 1, 1, 2, 'completed');
    INSERT INTO messages VALUES ('ms_1', 'se_old', 'tu_old', 1, 'assistant', '{"content":"the pelican report is ready","role":"assistant","toolCalls":[{"arguments":{"command":"ls walrus"},"id":"call_1","name":"terminal"}]}', 5);
    INSERT INTO messages VALUES ('ms_2', 'se_old', 'tu_old', 2, 'tool', '{"callId":"call_1","content":"walrus.txt","name":"terminal","ok":true,"role":"tool"}', 6);`);
  old.close();

  const db = openStore(file);
  t.after(() => db.close());
  const search = new SessionSearch(db);
  const hits = search.search(alice, { query: 'pelican' });
  assert.deepEqual(hits.map((h) => [h.sessionId, h.turn, h.role, h.at]), [['se_old', 1, 'assistant', 5]]);
  assert.match(hits[0]!.snippet, /\[pelican\]/);
  // Tool-call arguments and tool output are searchable; bookkeeping (role, ids) is not indexed.
  assert.equal(search.search(alice, { query: 'walrus' }).length, 2);
  assert.equal(search.search(alice, { query: 'call_1' }).length, 0);
  assert.equal(search.search(alice, { query: 'assistant' }).length, 0);

  const store = new SessionStore(db);
  const fresh = session(store, alice, ['a brand new albatross']);
  assert.deepEqual(search.search(alice, { query: 'albatross' }).map((h) => h.sessionId), [fresh]);
  // A plain-string message is indexed as its text.
  const s2 = store.createSession(alice, { coreDir: '/core', coreRevision: 'r1', runtime: 'local' });
  store.addMessage(alice, s2.id, { role: 'user', content: 'string-only flamingo' });
  assert.deepEqual(search.search(alice, { query: 'flamingo' }).map((h) => [h.sessionId, h.turn]), [[s2.id, null]]);
});

test("another principal's sessions never match, in either scope; the session scope stays in its session", (t) => {
  const { db } = tempStore(t);
  const store = new SessionStore(db);
  const search = new SessionSearch(db);
  const a1 = session(store, alice, ['the secret plan mentions marmalade']);
  const a2 = session(store, alice, ['marmalade again, second session']);
  const b1 = session(store, bob, ['bob also likes marmalade']);
  assert.deepEqual(new Set(search.search(alice, { query: 'marmalade' }).map((h) => h.sessionId)), new Set([a1, a2]));
  assert.deepEqual(search.search(alice, { query: 'marmalade', sessionId: a1 }).map((h) => h.sessionId), [a1]);
  // Naming bob's session gives what a missing session gives: nothing.
  assert.deepEqual(search.search(alice, { query: 'marmalade', sessionId: b1 }), []);
  assert.deepEqual(search.search(alice, { query: 'marmalade', sessionId: 'se_missing' }), []);
  assert.deepEqual(search.search(bob, { query: 'marmalade' }).map((h) => h.sessionId), [b1]);
  assert.deepEqual(search.search({ principal: 'mallory' }, { query: 'marmalade' }), []);
  assert.throws(() => search.search(undefined as never, { query: 'marmalade' }), StoreInputError);
  assert.throws(() => search.search({ principal: '' }, { query: 'marmalade' }), StoreInputError);
});

test('results are bounded: at most MAX_SEARCH_RESULTS hits, snippets of a few hundred characters', (t) => {
  const { db } = tempStore(t);
  const store = new SessionStore(db);
  const long = `${'filler '.repeat(2000)}needle ${'filler '.repeat(2000)}`;
  session(store, alice, Array.from({ length: 40 }, () => long));
  const search = new SessionSearch(db);
  assert.equal(search.search(alice, { query: 'needle', limit: 1000 }).length, MAX_SEARCH_RESULTS);
  assert.equal(search.search(alice, { query: 'needle' }).length, 10);
  assert.equal(search.search(alice, { query: 'needle', limit: -5 }).length, 1);
  for (const h of search.search(alice, { query: 'needle' })) {
    assert.ok(h.snippet.length <= 400, `snippet of ${h.snippet.length} characters`);
    assert.match(h.snippet, /\[needle\]/);
  }
});

test('hostile query text is a SearchQueryError or no match, and the store keeps working', (t) => {
  const { db } = tempStore(t);
  const store = new SessionStore(db);
  const sid = session(store, alice, ['hello world from the history']);
  const search = new SessionSearch(db);
  const syntax = [
    '"unbalanced',
    'hel"lo',
    'NEAR(',
    'NEAR(hello world, -1)',
    '(((',
    ')',
    'AND OR',
    'NOT',
    'hello +',
    '*',
    "'; DROP TABLE messages; --",
    "hello') OR 1=1 --",
    'foo: hello', // a column filter on a column that does not exist
    'rank: hello',
    'principal: alice',
    'session_id: x',
  ];
  for (const q of syntax) {
    assert.throws(
      () => search.search(alice, { query: q }),
      (err: unknown) => err instanceof SearchQueryError && /not a valid full-text query/.test(err.message),
      `query ${JSON.stringify(q)}`,
    );
  }
  // Inputs that parse (or match nothing) just answer.
  // A lone NUL is a syntax error to FTS5; with text around it, it is a separator. Either way: no crash.
  assert.throws(() => search.search(alice, { query: '\u0000' }), SearchQueryError);
  for (const q of ['a\u0000b', '\u202e', 'x'.repeat(256), 'body: hello', '{body}: hello', '^hello', 'hello*', 'SELECT * FROM sessions']) {
    assert.doesNotThrow(() => search.search(alice, { query: q }), `query ${JSON.stringify(q.slice(0, 20))}`);
  }
  assert.equal(search.search(alice, { query: 'body: hello' }).length, 1);
  for (const q of ['', '   ', 'x'.repeat(257), 'x'.repeat(1_000_000), 42 as never, null as never]) {
    assert.throws(() => search.search(alice, { query: q }), StoreInputError);
  }
  // Nothing was dropped or changed; the index still answers.
  assert.equal(store.listMessages(alice, sid).length, 1);
  assert.equal(search.search(alice, { query: '"hello world"' }).length, 1);
});
