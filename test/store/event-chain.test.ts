// The audit chain against someone who edits the SQLite file: every edit that does not also
// recompute the hashes and the head is found, with the right seq and field.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { openStore } from '../../src/store/database.js';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { appendEvent, appendEvents, chainHead, genesisHash, readEvents, MAX_EVENT_PAYLOAD_BYTES } from '../../src/store/event-chain.js';
import { verifyAllChains, verifyChain, type ChainVerification } from '../../src/store/chain-verify.js';
import { SessionStore } from '../../src/store/session-store.js';
import { ChainInconsistentError, SessionNotFoundError, StoreInputError } from '../../src/store/store-errors.js';
import { forgeEventHash, sha256, tamper, tempStore, type ChainRow } from './store-fixtures.js';

const forge = forgeEventHash;

type Row = ChainRow;

function chain(t: TestContext) {
  const s = tempStore(t);
  let clock = 1_000;
  const store = new SessionStore(s.db, { now: () => clock++ });
  const session = store.createSession({ principal: 'alice' }, { coreDir: '/cores/demo', coreRevision: 'rev-1', runtime: 'local' });
  for (let n = 2; n <= 6; n++) appendEvent(s.db, session.id, 'effect.step', { n, note: `step ${n}`, nested: { z: 1, a: [true, null] } }, 2_000 + n);
  const row = (seq: number) => s.db.prepare('SELECT * FROM runtime_events WHERE session_id = ? AND seq = ?').get(session.id, seq) as Row;
  const verify = () => verifyChain(s.db, session.id);
  return { ...s, store, id: session.id, row, verify };
}

function assertBroken(r: ChainVerification, seq: number, field: string, detail?: RegExp): void {
  assert.equal(r.ok, false, `expected a break, got ${JSON.stringify(r)}`);
  if (r.ok) return;
  assert.deepEqual({ seq: r.seq, field: r.field }, { seq, field }, r.detail);
  if (detail) assert.match(r.detail, detail);
}

test('an untouched chain verifies, and its hashes follow the documented formula', (t) => {
  const c = chain(t);
  const r = c.verify();
  assert.deepEqual(r, { ok: true, sessionId: c.id, count: 6, head: c.row(6).hash });
  assert.equal(chainHead(c.db, c.id)?.seq, 6);
  let prev = sha256(`genesis:${c.id}`);
  assert.equal(genesisHash(c.id), prev);
  for (let seq = 1; seq <= 6; seq++) {
    const e = c.row(seq);
    assert.equal(e.prev_hash, prev, `prev_hash of ${seq}`);
    assert.equal(e.payload, canonicalJson(JSON.parse(e.payload)), 'payload stored canonically');
    assert.equal(e.hash, forge(prev, c.id, seq, e.kind, e.at, JSON.parse(e.payload)), `hash of ${seq}`);
    assert.match(e.hash, /^[0-9a-f]{64}$/);
    prev = e.hash;
  }
  assert.equal(c.row(1).kind, 'session.created');
  const events = readEvents(c.db, c.id);
  assert.deepEqual(events[2]?.payload, { n: 3, note: 'step 3', nested: { a: [true, null], z: 1 } });
});

test('an edited payload (still canonical JSON) is caught at its seq, as a hash mismatch', (t) => {
  const c = chain(t);
  tamper(c.file, 'UPDATE runtime_events SET payload = ? WHERE session_id = ? AND seq = 3', canonicalJson({ n: 3, note: 'nothing to see' }), c.id);
  assertBroken(c.verify(), 3, 'hash', /kind, at or payload of event 3 was edited.*event 4 still links/);
});

test('a payload rewritten by hand into non-canonical JSON is named as the payload', (t) => {
  const c = chain(t);
  const pretty = JSON.stringify(JSON.parse(c.row(4).payload), null, 2);
  tamper(c.file, 'UPDATE runtime_events SET payload = ? WHERE session_id = ? AND seq = 4', pretty, c.id);
  assertBroken(c.verify(), 4, 'payload', /not in canonical form/);
  tamper(c.file, 'UPDATE runtime_events SET payload = ? WHERE session_id = ? AND seq = 4', '{"n":4,', c.id);
  assertBroken(c.verify(), 4, 'payload', /not JSON/);
});

test('an edited kind or at is caught', (t) => {
  const c = chain(t);
  tamper(c.file, "UPDATE runtime_events SET kind = 'effect.skipped' WHERE session_id = ? AND seq = 5", c.id);
  assertBroken(c.verify(), 5, 'hash');
  tamper(c.file, "UPDATE runtime_events SET kind = 'effect.step' WHERE session_id = ? AND seq = 5", c.id);
  assert.equal(c.verify().ok, true, 'restoring the original kind restores the chain');
  tamper(c.file, 'UPDATE runtime_events SET at = at + 1 WHERE session_id = ? AND seq = 2', c.id);
  assertBroken(c.verify(), 2, 'hash');
});

test('an edited prev_hash or hash column is named as such', (t) => {
  const c = chain(t);
  tamper(c.file, "UPDATE runtime_events SET prev_hash = 'ab' || substr(prev_hash, 3) WHERE session_id = ? AND seq = 3", c.id);
  assertBroken(c.verify(), 3, 'prev_hash', /prev_hash column was edited/);
  tamper(c.file, 'UPDATE runtime_events SET prev_hash = ? WHERE session_id = ? AND seq = 3', c.row(2).hash, c.id);
  assert.equal(c.verify().ok, true);
  tamper(c.file, "UPDATE runtime_events SET hash = ? WHERE session_id = ? AND seq = 3", '0'.repeat(64), c.id);
  assertBroken(c.verify(), 3, 'hash', /matches neither/);
});

test('a deleted middle event is reported missing at its seq', (t) => {
  const c = chain(t);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 3', c.id);
  assertBroken(c.verify(), 3, 'missing', /event 3 is missing/);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 4', c.id);
  assertBroken(c.verify(), 3, 'missing', /events 3–4 are missing/);
});

test('deleting the first event (session.created) is caught too', (t) => {
  const c = chain(t);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 1', c.id);
  assertBroken(c.verify(), 1, 'missing');
});

test('deleting only the newest event is caught by the head', (t) => {
  const c = chain(t);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 6', c.id);
  assertBroken(c.verify(), 6, 'missing', /head records 6 event\(s\) but the chain ends at seq 5/);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq >= 4', c.id);
  assertBroken(c.verify(), 4, 'missing', /events 4–6 are missing/);
});

test('deleting the newest event and rolling the head back without its right hash is caught', (t) => {
  const c = chain(t);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 6', c.id);
  tamper(c.file, 'UPDATE chain_heads SET seq = 5 WHERE session_id = ?', c.id); // hash still event 6's
  assertBroken(c.verify(), 5, 'head', /head's hash differs/);
  tamper(c.file, "UPDATE chain_heads SET hash = 'f00d' WHERE session_id = ?", c.id);
  assertBroken(c.verify(), 5, 'head');
});

test('residual risk: deleting the newest event and rewriting the head consistently is NOT detectable', (t) => {
  // Without an anchor outside the store nothing can tell this from a chain that simply ended at 5.
  // docs/audit.md says so and says what to do (keep the head hash elsewhere).
  const c = chain(t);
  const before = c.verify();
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 6', c.id);
  tamper(c.file, 'UPDATE chain_heads SET seq = 5, hash = ? WHERE session_id = ?', c.row(5).hash, c.id);
  const after = c.verify();
  assert.deepEqual(after, { ok: true, sessionId: c.id, count: 5, head: c.row(5).hash });
  // ... but an operator who kept the earlier head sees the difference.
  assert.ok(before.ok && after.ok && before.head !== after.head);
});

test('a forged or deleted head is caught', (t) => {
  const c = chain(t);
  tamper(c.file, 'UPDATE chain_heads SET hash = ? WHERE session_id = ?', sha256('forged'), c.id);
  assertBroken(c.verify(), 6, 'head', /forged/);
  tamper(c.file, 'DELETE FROM chain_heads WHERE session_id = ?', c.id);
  assertBroken(c.verify(), 6, 'head', /head row is missing/);
});

test('swapping two events’ seq is caught and diagnosed as reordering', (t) => {
  const c = chain(t);
  tamper(
    c.file,
    `UPDATE runtime_events SET seq = -1 WHERE session_id = '${c.id}' AND seq = 3;
     UPDATE runtime_events SET seq = 3 WHERE session_id = '${c.id}' AND seq = 4;
     UPDATE runtime_events SET seq = 4 WHERE session_id = '${c.id}' AND seq = -1;`,
  );
  assertBroken(c.verify(), 3, 'seq', /stored at seq 3 was written as seq 4: .*renumbered or reordered/);
});

test('closing a gap by renumbering the later events is caught', (t) => {
  const c = chain(t);
  tamper(
    c.file,
    `DELETE FROM runtime_events WHERE session_id = '${c.id}' AND seq = 3;
     UPDATE runtime_events SET seq = seq - 1 WHERE session_id = '${c.id}' AND seq > 3;
     UPDATE chain_heads SET seq = 5 WHERE session_id = '${c.id}';`,
  );
  assertBroken(c.verify(), 3, 'seq', /written as seq 4/);
});

test('an inserted event is caught: garbage hash, correct hash without the head, before the genesis', (t) => {
  const c = chain(t);
  const ins = 'INSERT INTO runtime_events (session_id, seq, kind, at, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)';
  tamper(c.file, ins, c.id, 7, 'effect.step', 9_999, '{"forged":true}', c.row(6).hash, sha256('anything'));
  assertBroken(c.verify(), 7, 'hash');
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 7', c.id);

  // A forger who knows the formula but cannot move the head without being seen elsewhere.
  const h7 = forge(c.row(6).hash, c.id, 7, 'effect.step', 9_999, { forged: true });
  tamper(c.file, ins, c.id, 7, 'effect.step', 9_999, '{"forged":true}', c.row(6).hash, h7);
  assertBroken(c.verify(), 7, 'head', /added after the head/);
  // And appending on top of it is refused instead of colliding with the forged row.
  assert.throws(() => appendEvent(c.db, c.id, 'effect.step', {}), ChainInconsistentError);
  tamper(c.file, 'DELETE FROM runtime_events WHERE session_id = ? AND seq = 7', c.id);

  tamper(c.file, ins, c.id, 0, 'session.created', 1, '{}', genesisHash(c.id), sha256('x'));
  assertBroken(c.verify(), 0, 'seq', /before the first event/);
});

test('an event replaced by a re-hashed forgery breaks the link to the next one', (t) => {
  const c = chain(t);
  const e = c.row(3);
  const payload = { n: 3, note: 'rewritten history' };
  tamper(c.file, 'UPDATE runtime_events SET payload = ?, hash = ? WHERE session_id = ? AND seq = 3', canonicalJson(payload), forge(e.prev_hash, c.id, 3, e.kind, e.at, payload), c.id);
  assertBroken(c.verify(), 4, 'prev_hash', /re-hashed forgery/);
});

test('an event copied from another session does not verify there', (t) => {
  const c = chain(t);
  const other = c.store.createSession({ principal: 'alice' }, { coreDir: '/cores/demo', coreRevision: 'rev-1', runtime: 'local' });
  appendEvent(c.db, other.id, 'effect.step', { n: 2, note: 'step 2', nested: { z: 1, a: [true, null] } }, 2_002);
  const e = c.row(2);
  tamper(c.file, 'UPDATE runtime_events SET kind = ?, at = ?, payload = ?, prev_hash = ?, hash = ? WHERE session_id = ? AND seq = 2', e.kind, e.at, e.payload, e.prev_hash, e.hash, other.id);
  const r = verifyChain(c.db, other.id);
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.seq, 2);
});

test('a session whose every event and head were deleted is caught (its row remains)', (t) => {
  const c = chain(t);
  tamper(c.file, `DELETE FROM runtime_events WHERE session_id = '${c.id}'; DELETE FROM chain_heads WHERE session_id = '${c.id}';`);
  assertBroken(c.verify(), 1, 'missing', /every event and the head were deleted/);
  // Appending must not quietly open a fresh chain from the genesis over the deleted one.
  assert.throws(() => appendEvent(c.db, c.id, 'effect.step', {}), ChainInconsistentError);
});

test('appending refuses to extend a chain whose head was deleted', (t) => {
  const c = chain(t);
  tamper(c.file, 'DELETE FROM chain_heads WHERE session_id = ?', c.id);
  assert.throws(() => appendEvent(c.db, c.id, 'effect.step', {}), (err: unknown) => {
    assert.ok(err instanceof ChainInconsistentError);
    assert.equal(err.code, 'AUDIT_CHAIN_INCONSISTENT');
    assert.match(err.message, /events up to seq 6 but no head row/);
    return true;
  });
});

test('verifyAllChains checks every session, and finds sessions known only by their events', (t) => {
  const c = chain(t);
  const b = c.store.createSession({ principal: 'bob' }, { coreDir: '/cores/b', coreRevision: 'r', runtime: 'local' });
  appendEvent(c.db, b.id, 'effect.step', { ok: true });
  tamper(c.file, 'UPDATE runtime_events SET at = 0 WHERE session_id = ? AND seq = 2', b.id);
  const all = verifyAllChains(c.db);
  assert.equal(all.length, 2);
  assert.equal(all.find((r) => r.sessionId === c.id)?.ok, true);
  assertBroken(all.find((r) => r.sessionId === b.id)!, 2, 'hash');
  // The session row goes (foreign keys off in the raw connection): the chain is still checked.
  tamper(c.file, 'DELETE FROM sessions WHERE id = ?', c.id);
  assert.equal(verifyAllChains(c.db).find((r) => r.sessionId === c.id)?.ok, true);
  assert.throws(() => verifyChain(c.db, 'se_000000000000000000000000'), SessionNotFoundError);
});

test('appendEvent refuses what it cannot hash faithfully, naming the field', (t) => {
  const c = chain(t);
  const field = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof StoreInputError, String(err));
      assert.equal(err.code, 'STORE_INPUT_INVALID');
      return err.field;
    }
    assert.fail('expected a StoreInputError');
  };
  assert.equal(field(() => appendEvent(c.db, c.id, 'Effect Step', {})), 'kind');
  assert.equal(field(() => appendEvent(c.db, c.id, '', {})), 'kind');
  assert.equal(field(() => appendEvent(c.db, c.id, 'effect.step', {}, -1)), 'at');
  assert.equal(field(() => appendEvent(c.db, c.id, 'effect.step', {}, 1.5)), 'at');
  assert.equal(field(() => appendEvent(c.db, c.id, 'effect.step', { result: { items: [1, undefined] } })), 'payload.result.items[1]');
  assert.equal(field(() => appendEvent(c.db, c.id, 'effect.step', { when: new Date(0) })), 'payload.when');
  assert.equal(field(() => appendEvent(c.db, c.id, 'effect.step', { n: 10n })), 'payload.n');
  assert.equal(field(() => appendEvent(c.db, c.id, 'effect.step', { big: 'x'.repeat(MAX_EVENT_PAYLOAD_BYTES) })), 'payload');
  assert.throws(() => appendEvent(c.db, 'se_nope', 'effect.step', {}), SessionNotFoundError);
  // The chain's own lookup says which store it asked, so a report tells a wrong connection from a missing row.
  assert.throws(() => appendEvent(c.db, 'se_nope', 'effect.step', {}), (e: Error) => e.message.includes(`no session row and no chain head in the store ${c.db.name}`));
  // Nothing refused left a trace.
  assert.deepEqual(c.verify(), { ok: true, sessionId: c.id, count: 6, head: c.row(6).hash });
});

test('two connections appending to one session in turn keep one intact chain', (t) => {
  const c = chain(t);
  const second = openStore(c.file);
  t.after(() => second.close());
  for (let i = 0; i < 50; i++) {
    appendEvent(i % 2 ? second : c.db, c.id, 'effect.step', { i });
  }
  const r = verifyChain(second, c.id);
  assert.equal(r.ok && r.count, 56);
});

test('appendEvents writes a batch in one transaction: consecutive seqs, one head move, all or nothing', (t) => {
  const c = chain(t);
  const out = appendEvents(c.db, c.id, [
    { kind: 'effect.requested', payload: { tool: 'terminal' }, at: 5_000 },
    { kind: 'effect.approved', payload: { source: 'policy' }, at: 5_001 },
    { kind: 'effect.finished', payload: { exit_code: 0 } },
  ]);
  assert.deepEqual(out.map((e) => e.seq), [7, 8, 9]);
  assert.equal(out[1]!.prevHash, out[0]!.hash);
  assert.deepEqual(c.verify(), { ok: true, sessionId: c.id, count: 9, head: out[2]!.hash });
  assert.deepEqual(appendEvents(c.db, c.id, []), []);
  assert.throws(
    () => appendEvents(c.db, c.id, [{ kind: 'effect.ok', payload: {} }, { kind: 'effect.bad', payload: { x: Number.NaN } }]),
    (err: unknown) => err instanceof StoreInputError && err.field === 'events[1].payload.x',
  );
  assert.equal(chainHead(c.db, c.id)?.seq, 9, 'the refused batch wrote nothing');
});
