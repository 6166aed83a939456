// Sessions, turns, messages and approvals: scoped to their principal (another principal sees
// exactly what a missing id shows), mirrored into the audit chain, migrated in place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { TestContext } from 'node:test';
import { openStore } from '../../src/store/database.js';
import { SessionStore, type PrincipalScope } from '../../src/store/session-store.js';
import { verifyChain } from '../../src/store/chain-verify.js';
import { SessionEndedError, SessionNotFoundError, StoreInputError, TurnNotFoundError } from '../../src/store/store-errors.js';
import { tamper, tempStore } from './store-fixtures.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { reconcileDeadOwners } from '../../src/store/owner-reconcile.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const alice: PrincipalScope = { principal: 'alice' };
const mallory: PrincipalScope = { principal: 'mallory' };
const core = { coreDir: '/cores/demo', coreRevision: 'rev-abc', runtime: 'local' };

function setup(t: TestContext) {
  const s = tempStore(t);
  let clock = 10_000;
  const store = new SessionStore(s.db, { now: () => clock++ });
  return { ...s, store };
}

/** The error a call throws, for comparing what a wrong principal and a missing id get. */
function caught(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  assert.fail('expected an error');
}

test('migrations 2 to 12 apply on top of migration 1 and keep the spawn rows (7 rebuilds spawns)', (t) => {
  const { file } = tempStore(t);
  // A store as an earlier release left it: only migration 1.
  tamper(file, "DROP TRIGGER messages_fts_insert; DROP TRIGGER messages_fts_update; DROP TRIGGER messages_fts_delete; DROP VIEW message_search_text; DROP TABLE message_fts; DROP TABLE pending_approvals; DROP TABLE task_logs; DROP TABLE tasks; DROP TABLE sessions; DROP TABLE turns; DROP TABLE messages; DROP TABLE approvals; DROP TABLE runtime_events; DROP TABLE chain_heads; DROP TABLE operator_changes; DELETE FROM schema_migrations WHERE version IN (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);");
  tamper(file, "INSERT INTO spawns (spawn_id, pid, pgid, sid, platform, boot_id, start_marker, command, owner_pid, owner_start_marker, status, started_at) VALUES ('sp1', 1, 1, 1, 'linux', 'b', 'm', 'sh', 1, 'm', 'exited', 1)");
  const db = openStore(file);
  t.after(() => db.close());
  assert.deepEqual(db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all(), [
    { version: 1, name: 'spawns' },
    { version: 2, name: 'sessions-audit' },
    { version: 3, name: 'tasks' },
    { version: 4, name: 'pending-approvals' },
    { version: 5, name: 'message-search' },
    { version: 6, name: 'owners-and-reasons' },
    { version: 7, name: 'spawns-starting' },
    { version: 8, name: 'tasks-cancel-requested' },
    { version: 9, name: 'tasks-delegation' },
    { version: 10, name: 'operator-changes' },
    { version: 11, name: 'spawn-cancel-requests' },
    { version: 12, name: 'spawn-principal' },
  ]);
  assert.deepEqual(db.prepare('SELECT spawn_id, pid, status, principal FROM spawns').all(), [{ spawn_id: 'sp1', pid: 1, status: 'exited', principal: null }]);
  // A starting row has no pid; any other status needs one.
  db.exec("INSERT INTO spawns (spawn_id, platform, boot_id, start_marker, command, owner_pid, owner_start_marker, status, started_at) VALUES ('sp2', 'linux', 'b', 'm', 'sh', 1, 'm', 'starting', 2)");
  assert.throws(() => db.exec("INSERT INTO spawns (spawn_id, platform, boot_id, start_marker, command, owner_pid, owner_start_marker, status, started_at) VALUES ('sp3', 'linux', 'b', 'm', 'sh', 1, 'm', 'running', 3)"), /CHECK/);
  const s = new SessionStore(db).createSession(alice, core);
  assert.equal(verifyChain(db, s.id).ok, true);
});

test('a session is created with a generated id and opens its chain with session.created', (t) => {
  const { db, store } = setup(t);
  const s = store.createSession(alice, core);
  assert.match(s.id, /^se_[0-9a-f]{24}$/);
  assert.deepEqual(s, { id: s.id, principal: 'alice', ...core, status: 'running', createdAt: 10_000, endedAt: null, endReason: null });
  assert.deepEqual(store.getSession(alice, s.id), s);
  const [created] = store.listEvents(alice, s.id);
  assert.deepEqual(
    { seq: created?.seq, kind: created?.kind, payload: created?.payload },
    { seq: 1, kind: 'session.created', payload: { principal: 'alice', core_dir: '/cores/demo', core_revision: 'rev-abc', runtime: 'local' } },
  );
  assert.notEqual(store.createSession(alice, core).id, s.id);
  assert.deepEqual(verifyChain(db, s.id), { ok: true, sessionId: s.id, count: 1, head: created?.hash });
});

test('a whole transcript is recorded and mirrored into one intact chain', (t) => {
  const { db, store } = setup(t);
  const s = store.createSession(alice, core);
  store.addMessage(alice, s.id, { role: 'system', content: { text: 'you are a test' } });
  const t1 = store.addTurn(alice, s.id);
  assert.deepEqual({ seq: t1.seq, status: t1.status }, { seq: 1, status: 'running' });
  const m = store.addMessage(alice, s.id, { turnId: t1.id, role: 'user', content: { text: 'run ls', parts: [{ b: 2, a: 1 }] } });
  assert.equal(m.seq, 2);
  assert.match(m.id, /^ms_[0-9a-f]{24}$/);
  const a1 = store.recordApproval(alice, s.id, { key: 'k'.repeat(64), tool: 'terminal', capability: 'terminal.exec', decision: 'allow', source: 'prompt', reason: 'operator said yes' });
  store.recordApproval(alice, s.id, { key: 'k'.repeat(64), tool: 'terminal', capability: 'terminal.exec', decision: 'deny', source: 'operator' });
  assert.equal(store.findApproval(alice, s.id, 'k'.repeat(64))?.decision, 'deny', 'the newest decision wins');
  assert.equal(store.findApproval(alice, s.id, 'other'), undefined);
  store.endTurn(alice, t1.id, 'completed');
  const t2 = store.addTurn(alice, s.id);
  assert.equal(t2.seq, 2);
  store.appendEvent(alice, s.id, 'effect.finished', { tool: 'terminal', exit_code: 0 });
  const ended = store.endSession(alice, s.id, 'completed');
  assert.deepEqual({ status: ended.status, endedAt: typeof ended.endedAt }, { status: 'completed', endedAt: 'number' });

  // The content is stored canonically and comes back as the same value.
  assert.equal(db.prepare('SELECT content FROM messages WHERE id = ?').pluck().get(m.id), '{"parts":[{"a":1,"b":2}],"text":"run ls"}');
  assert.deepEqual(store.listMessages(alice, s.id).map((x) => [x.seq, x.role, x.turnId]), [
    [1, 'system', null],
    [2, 'user', t1.id],
  ]);

  const events = store.listEvents(alice, s.id);
  assert.deepEqual(events.map((e) => e.kind), [
    'session.created',
    'message.added',
    'turn.started',
    'message.added',
    'approval.recorded',
    'approval.recorded',
    'turn.ended',
    'turn.started',
    'effect.finished',
    'turn.ended', // the running turn 2 is ended with the session
    'session.ended',
  ]);
  const added = events[3]!.payload as Record<string, unknown>;
  assert.equal(added.content_sha256, createHash('sha256').update('{"parts":[{"a":1,"b":2}],"text":"run ls"}').digest('hex'));
  assert.equal(added.content, undefined, 'the chain carries the digest, not the content');
  assert.deepEqual(events[4]!.payload, { approval_id: a1.id, key: 'k'.repeat(64), tool: 'terminal', capability: 'terminal.exec', decision: 'allow', source: 'prompt', reason: 'operator said yes' });
  assert.equal(store.listEvents(alice, s.id, { afterSeq: 9 }).length, 2);
  assert.deepEqual(verifyChain(db, s.id), { ok: true, sessionId: s.id, count: 11, head: events[10]!.hash });
});

test('another principal gets exactly the answer a missing id gets, for every call', (t) => {
  const { store } = setup(t);
  const s = store.createSession(alice, core);
  const turn = store.addTurn(alice, s.id);
  const missing = 'se_000000000000000000000000';
  assert.equal(store.getSession(mallory, s.id), undefined);
  assert.deepEqual(store.listSessions(mallory), []);
  const calls: [string, (id: string) => unknown][] = [
    ['endSession', (id) => store.endSession(mallory, id, 'failed')],
    ['addTurn', (id) => store.addTurn(mallory, id)],
    ['addMessage', (id) => store.addMessage(mallory, id, { role: 'user', content: 'hi' })],
    ['listMessages', (id) => store.listMessages(mallory, id)],
    ['recordApproval', (id) => store.recordApproval(mallory, id, { key: 'k', tool: 't', capability: 'c', decision: 'allow', source: 'policy' })],
    ['findApproval', (id) => store.findApproval(mallory, id, 'k')],
    ['appendEvent', (id) => store.appendEvent(mallory, id, 'effect.finished', {})],
    ['listEvents', (id) => store.listEvents(mallory, id)],
  ];
  for (const [name, call] of calls) {
    const wrongOwner = caught(() => call(s.id));
    const absent = caught(() => call(missing));
    assert.ok(wrongOwner instanceof SessionNotFoundError, name);
    assert.ok(absent instanceof SessionNotFoundError, name);
    assert.equal(wrongOwner.code, absent.code, name);
    assert.equal(wrongOwner.message.replace(s.id, 'ID'), absent.message.replace(missing, 'ID'), name);
  }
  const wrongTurn = caught(() => store.endTurn(mallory, turn.id, 'failed'));
  const noTurn = caught(() => store.endTurn(mallory, 'tu_000000000000000000000000', 'failed'));
  assert.ok(wrongTurn instanceof TurnNotFoundError && noTurn instanceof TurnNotFoundError);
  assert.equal(wrongTurn.message.replace(turn.id, 'ID'), noTurn.message.replace('tu_000000000000000000000000', 'ID'));
  // Nothing mallory tried left a trace, and alice's session is untouched.
  assert.equal(store.getSession(alice, s.id)?.status, 'running');
  assert.equal(store.listEvents(alice, s.id).length, 2);
});

test('listSessions shows only the principal’s own sessions, newest first, filtered by status', (t) => {
  const { store } = setup(t);
  const a1 = store.createSession(alice, core);
  const m1 = store.createSession(mallory, core);
  const a2 = store.createSession(alice, core);
  store.endSession(alice, a1.id, 'failed');
  assert.deepEqual(store.listSessions(alice).map((s) => s.id), [a2.id, a1.id]);
  assert.deepEqual(store.listSessions(alice, { status: 'failed' }).map((s) => s.id), [a1.id]);
  assert.deepEqual(store.listSessions(alice, { limit: 1 }).map((s) => s.id), [a2.id]);
  assert.deepEqual(store.listSessions(mallory).map((s) => s.id), [m1.id]);
});

test('a turn of another session (even the same principal’s) cannot carry a message', (t) => {
  const { store } = setup(t);
  const s1 = store.createSession(alice, core);
  const s2 = store.createSession(alice, core);
  const turn = store.addTurn(alice, s2.id);
  assert.throws(() => store.addMessage(alice, s1.id, { turnId: turn.id, role: 'user', content: 'x' }), TurnNotFoundError);
});

test('nothing is added to an ended session or turn', (t) => {
  const { store } = setup(t);
  const s = store.createSession(alice, core);
  const turn = store.addTurn(alice, s.id);
  store.endTurn(alice, turn.id, 'cancelled');
  assert.throws(() => store.endTurn(alice, turn.id, 'completed'), SessionEndedError);
  assert.throws(() => store.addMessage(alice, s.id, { turnId: turn.id, role: 'user', content: 'x' }), SessionEndedError);
  store.endSession(alice, s.id, 'interrupted');
  for (const fn of [
    () => store.addTurn(alice, s.id),
    () => store.addMessage(alice, s.id, { role: 'user', content: 'x' }),
    () => store.recordApproval(alice, s.id, { key: 'k', tool: 't', capability: 'c', decision: 'deny', source: 'policy' }),
    () => store.endSession(alice, s.id, 'completed'),
  ]) {
    const err = caught(fn);
    assert.ok(err instanceof SessionEndedError, String(err));
    assert.equal(err.code, 'SESSION_ENDED');
    assert.match(err.message, /interrupted/);
  }
  // Late runtime events of an ended session are still audited.
  assert.equal(store.appendEvent(alice, s.id, 'effect.cleanup', { killed: 0 }).kind, 'effect.cleanup');
});

test('bad input is refused, naming the field, and writes nothing', (t) => {
  const { db, store } = setup(t);
  const s = store.createSession(alice, core);
  const field = (fn: () => unknown) => {
    const err = caught(fn);
    assert.ok(err instanceof StoreInputError, String(err));
    return err.field;
  };
  assert.equal(field(() => store.createSession({ principal: '' }, core)), 'principal');
  assert.equal(field(() => store.createSession(undefined as unknown as PrincipalScope, core)), 'principal');
  assert.equal(field(() => store.createSession(alice, { ...core, coreRevision: '' })), 'coreRevision');
  assert.equal(field(() => store.addMessage(alice, s.id, { role: 'robot' as 'user', content: 'x' })), 'role');
  assert.equal(field(() => store.addMessage(alice, s.id, { role: 'user', content: { text: undefined } })), 'content.text');
  assert.equal(field(() => store.recordApproval(alice, s.id, { key: 'k', tool: 't', capability: 'c', decision: 'maybe' as 'allow', source: 'policy' })), 'decision');
  assert.equal(field(() => store.endSession(alice, s.id, 'running' as 'completed')), 'status');
  assert.equal(field(() => store.appendEvent(alice, s.id, 'BAD KIND', {})), 'kind');
  assert.equal(db.prepare('SELECT COUNT(*) FROM sessions').pluck().get(), 1);
  assert.equal(db.prepare('SELECT COUNT(*) FROM messages').pluck().get(), 0);
  assert.equal(store.listEvents(alice, s.id).length, 1);
});

test('a write whose event cannot be appended leaves no row behind', (t) => {
  const { db, file, store } = setup(t);
  const s = store.createSession(alice, core);
  tamper(file, 'DELETE FROM chain_heads WHERE session_id = ?', s.id);
  assert.throws(() => store.addTurn(alice, s.id), /cannot be extended/);
  assert.equal(db.prepare('SELECT COUNT(*) FROM turns').pluck().get(), 0, 'the turn row was rolled back with its event');
});

test('migration 6 keeps a version-5 store’s rows; a session it left running with no owner is interrupted by reconciliation', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'sv-store-v5-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'supervisor.db');
  // The store as release 5 wrote it, with a run that died in the middle of a task and a request.
  const raw = new (createRequire(import.meta.url)('better-sqlite3') as new (f: string) => { exec(s: string): void; close(): void })(file);
  raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const m of MIGRATIONS.filter((x) => x.version <= 5)) raw.exec(`${m.sql}; INSERT INTO schema_migrations VALUES (${m.version}, '${m.name}', 1);`);
  raw.exec(`INSERT INTO sessions VALUES ('se_old', 'alice', '/c', 'r', 'local', 'running', 1, NULL);
    INSERT INTO runtime_events VALUES ('se_old', 1, 'session.created', 1, '{}', 'x', 'y');
    INSERT INTO tasks (id, session_id, kind, source_tool, status, summary, write_scope, owner_pid, created_at) VALUES ('tk_old', 'se_old', 'terminal.exec', 'terminal', 'running', 'sleep', 'out/', 999999, 1);
    INSERT INTO pending_approvals (id, session_id, tool, capability, summary, preview, status, owner_pid, created_at, expires_at) VALUES ('pa_old', 'se_old', 'terminal', 'terminal.exec', 'ls', '{}', 'pending', 999999, 1, 9999999999999);`);
  raw.close();
  const db = openStore(file);
  t.after(() => db.close());
  assert.equal(db.prepare("SELECT principal FROM tasks WHERE id = 'tk_old'").pluck().get(), 'alice', 'the principal is backfilled from the session');
  assert.equal(db.prepare("SELECT status FROM pending_approvals WHERE id = 'pa_old'").pluck().get(), 'pending');
  // The hand-made row's chain has no head: reconciliation marks the rows all the same and names the
  // break, instead of leaving the session running or failing every later start.
  const report = reconcileDeadOwners(db, () => false, process.pid);
  assert.deepEqual(report.sessions.map((s) => [s.sessionId, s.tasks, s.pendingApprovals]), [['se_old', ['tk_old'], ['pa_old']]]);
  assert.match(report.sessions[0]!.reason, /was not recorded/);
  assert.match(report.sessions[0]!.chainError ?? '', /cannot be extended/);
  assert.equal(db.prepare("SELECT status FROM sessions WHERE id = 'se_old'").pluck().get(), 'interrupted');
  assert.equal(db.prepare("SELECT status FROM tasks WHERE id = 'tk_old'").pluck().get(), 'interrupted');
  assert.equal(db.prepare("SELECT status FROM pending_approvals WHERE id = 'pa_old'").pluck().get(), 'interrupted');
  // A session with an intact chain and no recorded owner gets its audit event.
  const legacy = new SessionStore(db).createSession(alice, core);
  db.prepare('UPDATE sessions SET owner_pid = NULL WHERE id = ?').run(legacy.id);
  const second = reconcileDeadOwners(db, () => false, process.pid);
  assert.deepEqual(second.sessions.map((s) => [s.sessionId, s.chainError]), [[legacy.id, undefined]]);
  assert.equal(db.prepare('SELECT kind FROM runtime_events WHERE session_id = ? ORDER BY seq DESC LIMIT 1').pluck().get(legacy.id), 'session.interrupted');
  assert.equal(verifyChain(db, legacy.id).ok, true);
});

test('reconciliation leaves a live owner’s session alone and interrupts a dead one’s, once', (t) => {
  const { db, store } = setup(t);
  const live = store.createSession(alice, { ...core, owner: { pid: 101, startMarker: 'linux:b:1' } });
  const dead = store.createSession(alice, { ...core, owner: { pid: 102, startMarker: 'linux:b:2' } });
  store.addTurn(alice, dead.id);
  const alive = (pid: number) => pid === 101;
  const first = reconcileDeadOwners(db, alive, 1);
  assert.deepEqual(first.sessions.map((s) => s.sessionId), [dead.id]);
  assert.equal(first.sessions[0]!.turns.length, 1);
  assert.equal(store.getSession(alice, live.id)?.status, 'running');
  const ended = store.getSession(alice, dead.id)!;
  assert.equal(ended.status, 'interrupted');
  assert.match(ended.endReason ?? '', /its supervisor \(pid 102\) stopped without ending it; reconciled by pid 1/);
  assert.equal(verifyChain(db, dead.id).ok, true);
  assert.deepEqual(reconcileDeadOwners(db, alive, 1).sessions, []);
  // Resumed by a new owner, it runs again and is that owner's.
  const resumed = store.resumeSession(alice, dead.id, { coreRevision: 'rev-abc', owner: { pid: 101, startMarker: 'linux:b:1' } });
  assert.deepEqual([resumed.status, resumed.endReason], ['running', null]);
  assert.deepEqual(reconcileDeadOwners(db, alive, 1).sessions, []);
});

test('a session imported from another machine keeps its id, its messages and their digests; a bad import writes nothing', (t) => {
  const { db, store } = setup(t);
  const id = 'se_0123456789abcdef01234567';
  const messages = [
    { role: 'user' as const, content: { role: 'user', content: 'first' } },
    { role: 'assistant' as const, content: { role: 'assistant', content: 'noted', n: [2, 1] } },
  ];
  const from = { session: `${id}@member-a`, head: 'a'.repeat(64) };
  const owner = { pid: process.pid, startMarker: 'linux:boot:1' };
  // Each refusal is checked before anything is written.
  assert.throws(() => store.importSession(alice, { ...core, id: 'se_../../x', importedFrom: from, messages }), /is not a session id/);
  assert.throws(() => store.importSession(alice, { ...core, id, importedFrom: from, messages: [{ role: 'wizard' as never, content: 'x' }] }), StoreInputError);
  assert.equal(store.getSession(alice, id), undefined, 'nothing was written');
  assert.equal(db.prepare('SELECT count(*) FROM runtime_events WHERE session_id = ?').pluck().get(id), 0);

  const s = store.importSession(alice, { ...core, id, owner, importedFrom: from, messages });
  assert.deepEqual([s.id, s.status], [id, 'running']);
  assert.deepEqual(store.listMessages(alice, id).map((m) => [m.seq, m.role, m.turnId, m.content]), messages.map((m, i) => [i + 1, m.role, null, m.content]));
  const events = store.listEvents(alice, id);
  assert.deepEqual(events.map((e) => e.kind), ['session.created', 'message.added', 'message.added']);
  assert.deepEqual((events[0]!.payload as { imported_from: unknown }).imported_from, { ...from, messages: 2 });
  const stored = db.prepare('SELECT content FROM messages WHERE session_id = ? AND seq = 2').pluck().get(id) as string;
  assert.equal((events[2]!.payload as { content_sha256: string }).content_sha256, createHash('sha256').update(stored).digest('hex'));
  assert.deepEqual(verifyChain(db, id), { ok: true, sessionId: id, count: 3, head: events[2]!.hash });
  // The same id again (here, or another principal's): refused, the first import untouched.
  assert.throws(() => store.importSession(alice, { ...core, id, importedFrom: from, messages }), /is in this store already/);
  assert.throws(() => store.importSession({ principal: 'bob' }, { ...core, id, importedFrom: from, messages }), /is in this store already/);
  assert.equal(store.listMessages(alice, id).length, 2);
});
