// The operator change feed (migration 10): triggers write one row per request asked or decided and
// per session or task started or ended; reads are principal-scoped; the feed keeps the newest
// 10,000 rows and says when a reader fell behind them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, OperatorChangeFeed, OPERATOR_CHANGES_KEPT, PendingApprovalStore, SessionStore } from '../../src/store/index.js';

function tempStore() {
  const dir = mkdtempSync(join(tmpdir(), 'operator-changes-'));
  const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
  return { db, [Symbol.dispose]: () => (db.close(), rmSync(dir, { recursive: true, force: true })) };
}

test('every asked and decided request, and every session state, is one feed row; another principal sees none of them', () => {
  const { db, [Symbol.dispose]: dispose } = tempStore();
  try {
    const sessions = new SessionStore(db);
    const approvals = new PendingApprovalStore(db);
    const feed = new OperatorChangeFeed(db);
    const alice = { principal: 'alice' };
    const s = sessions.createSession(alice, { coreDir: '/c', coreRevision: 'r', runtime: 'local' });
    const r = approvals.create({ sessionId: s.id, tool: 'terminal', capability: 'terminal.exec', summary: 'ls', preview: '{}', ttlMs: 60_000 });
    const first = approvals.answer(alice, r.id, true, false, 'a test');
    const second = approvals.answer(alice, r.id, false, false, 'a second test');
    assert.equal(first?.answered, true);
    assert.equal(second?.answered, false, 'the compare-and-swap lets one answer through');
    assert.equal(second?.record.decidedBy, 'a test', 'the loser is told who decided');
    sessions.endSession(alice, s.id, 'completed');
    const rows = feed.after(alice, 0).map((c) => [c.kind, c.ref, c.status]);
    assert.deepEqual(rows, [
      ['session', s.id, 'running'],
      ['approval', r.id, 'pending'],
      ['approval', r.id, 'approved'],
      ['session', s.id, 'completed'],
    ]);
    assert.equal(feed.head(), 4);
    assert.deepEqual(feed.after({ principal: 'mallory' }, 0), []);
    assert.deepEqual(feed.after(alice, 2).map((c) => c.seq), [3, 4]);
  } finally {
    dispose();
  }
});

test(`the feed keeps the newest ${OPERATOR_CHANGES_KEPT} rows, and tells a reader behind them to reload`, () => {
  const { db, [Symbol.dispose]: dispose } = tempStore();
  try {
    const sessions = new SessionStore(db);
    const feed = new OperatorChangeFeed(db);
    const alice = { principal: 'alice' };
    const s = sessions.createSession(alice, { coreDir: '/c', coreRevision: 'r', runtime: 'local' });
    const approvals = new PendingApprovalStore(db);
    db.transaction(() => {
      for (let i = 0; i < OPERATOR_CHANGES_KEPT + 50; i++) approvals.create({ sessionId: s.id, tool: 't', capability: 'c', summary: `${i}`, preview: '', ttlMs: 60_000 });
    })();
    const head = feed.head();
    assert.equal(head, OPERATOR_CHANGES_KEPT + 51);
    assert.equal((db.prepare('SELECT count(*) FROM operator_changes').pluck().get() as number), OPERATOR_CHANGES_KEPT);
    assert.equal(feed.continuousAfter(0), false, 'a reader at 0 missed dropped rows');
    assert.equal(feed.continuousAfter(head - OPERATOR_CHANGES_KEPT), true);
    assert.equal(feed.continuousAfter(head), true);
  } finally {
    dispose();
  }
});
