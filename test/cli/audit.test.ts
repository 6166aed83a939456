// `supervisor audit verify` through the real command: exit 0 intact, 1 broken (session, seq,
// field named), 2 unknown session or no store; --json prints one object; --help is true.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { CLI } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { openStore } from '../../src/store/database.js';
import { SessionStore } from '../../src/store/session-store.js';
import { appendEvent } from '../../src/store/event-chain.js';
import { tamper } from '../store/store-fixtures.js';

const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, SUPERVISOR_STATE_DIR: '', ...env } });

const inProcess = (args: string[]) => runMain(...args);

/** A state dir holding a store with two sessions of a few events each; the store is closed. */
function stateDir(t: TestContext) {
  const dir = mkdtempSync(join(tmpdir(), 'sv-audit-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'supervisor.db');
  const db = openStore(file);
  const store = new SessionStore(db);
  const a = store.createSession({ principal: 'alice' }, { coreDir: '/c', coreRevision: 'r1', runtime: 'local' });
  const b = store.createSession({ principal: 'bob' }, { coreDir: '/c', coreRevision: 'r1', runtime: 'local' });
  for (let i = 0; i < 4; i++) {
    appendEvent(db, a.id, 'effect.step', { i });
    appendEvent(db, b.id, 'effect.step', { i });
  }
  db.close();
  return { dir, file, a: a.id, b: b.id };
}

test('an intact store: exit 0, every session listed with its head', (t) => {
  const s = stateDir(t);
  const r = run(['audit', 'verify', '--state-dir', s.dir]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^ok +${s.a} +5 event\\(s\\) +head [0-9a-f]{64}$`, 'm'));
  assert.match(r.stdout, new RegExp(`^ok +${s.b} `, 'm'));
  assert.match(r.stdout, /checked 2 session\(s\): 2 intact, 0 broken/);

  const j = run(['audit', 'verify', '--json', '--state-dir', s.dir]);
  assert.equal(j.status, 0);
  assert.equal(j.stdout.trim().split('\n').length, 1, 'one object, one line');
  const out = JSON.parse(j.stdout) as Record<string, unknown>;
  assert.deepEqual(Object.keys(out).sort(), ['broken', 'checked', 'intact', 'ok', 'sessions', 'store']);
  assert.deepEqual({ ok: out.ok, checked: out.checked, intact: out.intact, broken: out.broken, store: out.store }, { ok: true, checked: 2, intact: 2, broken: 0, store: s.file });
  const sessions = out.sessions as Record<string, unknown>[];
  assert.deepEqual(Object.keys(sessions[0]!).sort(), ['count', 'head', 'ok', 'sessionId']);
  assert.deepEqual(sessions.map((x) => x.sessionId).sort(), [s.a, s.b].sort());
});

test('a broken chain: exit 1, naming session, event seq and field; --session narrows the check', (t) => {
  const s = stateDir(t);
  tamper(s.file, 'UPDATE runtime_events SET payload = ? WHERE session_id = ? AND seq = 3', '{"i":99}', s.b);
  const r = run(['audit', 'verify', '--state-dir', s.dir]);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, new RegExp(`^BROKEN +${s.b} +event 3, field hash: kind, at or payload of event 3 was edited`, 'm'));
  assert.match(r.stdout, new RegExp(`^ok +${s.a} `, 'm'));
  assert.match(r.stdout, /1 intact, 1 broken/);

  const j = run(['audit', 'verify', '--json', '--state-dir', s.dir]);
  assert.equal(j.status, 1);
  const out = JSON.parse(j.stdout) as { ok: boolean; broken: number; sessions: Record<string, unknown>[] };
  assert.equal(out.ok, false);
  assert.equal(out.broken, 1);
  const bad = out.sessions.find((x) => x.sessionId === s.b)!;
  assert.deepEqual(Object.keys(bad).sort(), ['detail', 'field', 'ok', 'seq', 'sessionId']);
  assert.deepEqual({ ok: bad.ok, seq: bad.seq, field: bad.field }, { ok: false, seq: 3, field: 'hash' });

  assert.equal(run(['audit', 'verify', '--session', s.a, '--state-dir', s.dir]).status, 0, 'the intact session alone passes');
  const only = run(['audit', 'verify', '--session', s.b, '--json', '--state-dir', s.dir]);
  assert.equal(only.status, 1);
  assert.equal((JSON.parse(only.stdout) as { checked: number }).checked, 1);
});

test('deleting the newest event is reported as missing through the CLI', (t) => {
  const s = stateDir(t);
  tamper(s.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 5', s.a);
  const r = run(['audit', 'verify', '--session', s.a, '--state-dir', s.dir]);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /event 5, field missing: the head records 5 event\(s\) but the chain ends at seq 4/);
});

test('an unknown session: exit 2, as text and as one JSON object', (t) => {
  const s = stateDir(t);
  const r = run(['audit', 'verify', '--session', 'se_ffffffffffffffffffffffff', '--state-dir', s.dir]);
  assert.equal(r.status, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /session "se_ffffffffffffffffffffffff" is not in the store at .*supervisor\.db; run without --session/);
  const j = run(['audit', 'verify', '--session', 'se_ffffffffffffffffffffffff', '--json', '--state-dir', s.dir]);
  assert.equal(j.status, 2);
  const out = JSON.parse(j.stdout) as { ok: boolean; error: { code: string; message: string } };
  assert.equal(out.ok, false);
  assert.equal(out.error.code, 'SESSION_NOT_FOUND');
});

test('no store in the state dir is exit 2 (never an empty "intact" store), and so is a file that is not a store', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sv-audit-cli-empty-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const r = run(['audit', 'verify', '--state-dir', dir]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /no store at .*supervisor\.db; pass --state-dir/);
  const j = run(['audit', 'verify', '--json', '--state-dir', dir]);
  assert.equal((JSON.parse(j.stdout) as { error: { code: string } }).error.code, 'STORE_NOT_FOUND');
  assert.equal(run(['audit', 'verify', '--state-dir', dir]).status, 2, 'verifying did not create a store');

  writeFileSync(join(dir, 'supervisor.db'), 'this is not a database, it is a text file of more than a hundred bytes, long enough for a header check');
  const g = run(['audit', 'verify', '--state-dir', dir]);
  assert.equal(g.status, 2);
  assert.match(g.stderr, /cannot (open|read) the store/);
});

test('the state dir comes from SUPERVISOR_STATE_DIR when --state-dir is absent', (t) => {
  const s = stateDir(t);
  const r = run(['audit', 'verify', '--json'], { SUPERVISOR_STATE_DIR: s.dir });
  assert.equal(r.status, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { store: string }).store, s.file);
});

// In-process (main(argv, io)): only parsing and help, no store is touched.
test('help is true and usage errors name the flag and the fix', async () => {
  for (const args of [['audit', '--help'], ['audit', 'verify', '--help']]) {
    const h = await inProcess(args);
    assert.equal(h.status, 0);
    assert.match(h.stdout, /^Usage: supervisor audit verify \[--session ID\] \[--json\] \[--state-dir DIR\]/);
    assert.match(h.stdout, /0 +every chain checked is intact\n +1 +at least one chain is broken \(with --store: or a local chain differs from its copy\)\n +2 /);
    assert.match(h.stdout, /--store URL +verify your sessions' chains on the PostgreSQL control plane/);
  }
  const noUrl = await inProcess(['audit', 'verify', '--store']);
  assert.equal(noUrl.status, 2);
  assert.match(noUrl.stderr, /--store needs a PostgreSQL URL, e\.g\. --store postgres:\/\/user@host:5432\/supervisor/);
  const notPg = await inProcess(['audit', 'verify', '--store', 'sqlite:///tmp/x.db']);
  assert.equal(notPg.status, 2);
  assert.match(notPg.stderr, /--store takes a PostgreSQL URL/);
  assert.match((await inProcess(['--help'])).stdout, /^  audit verify \[--session ID\] \[--json\]/m);
  const bare = await inProcess(['audit']);
  assert.equal(bare.status, 2);
  const unknownSub = await inProcess(['audit', 'check']);
  assert.equal(unknownSub.status, 2);
  assert.match(unknownSub.stderr, /unknown audit command "check"; the only one is "verify"/);
  const badFlag = await inProcess(['audit', 'verify', '--fast']);
  assert.equal(badFlag.status, 2);
  assert.match(badFlag.stderr, /unknown option --fast for audit verify/);
  const noValue = await inProcess(['audit', 'verify', '--session']);
  assert.equal(noValue.status, 2);
  assert.match(noValue.stderr, /--session needs a session id/);
  assert.match((await inProcess(['audit', 'verify', '--session', '--json'])).stderr, /--session needs a session id/);
});
