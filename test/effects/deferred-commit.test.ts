// The effect pipeline's deferred audit commit (output commit): with `commit: 'deferred'` an
// effect's record joins the store's next group commit instead of delaying execute(); durable() is
// the barrier; a failed deferred commit fails durable() and every later effect; the turn loop
// never shows the model a tool result whose record is not in the store. Real SQLite files and real
// processes; the model provider is a double.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { AuditCommitError } from '../../src/effects/index.js';
import { ApprovalRules, NonInteractiveApprover, RuleApprover } from '../../src/policy/index.js';
import { runTurn, type HistoryItem, type ModelProvider, type ModelTurn } from '../../src/turns/index.js';
import { tamper } from '../store/store-fixtures.js';
import { runtimeSuite } from './runtime-fixture.js';

const require = createRequire(import.meta.url);
const AGENT = 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n';

describe('deferred audit commit', () => {
  const suite = runtimeSuite();
  const file = (): string => suite.db().name;
  const completed = (sessionId: string): number => {
    const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
    const r = new Sqlite(file(), { readonly: true });
    try {
      return r.prepare("SELECT COUNT(*) FROM runtime_events WHERE session_id = ? AND kind = 'effect.completed'").pluck().get(sessionId) as number;
    } finally {
      r.close();
    }
  };
  const setup = () => suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] }), new NonInteractiveApprover()), principal: 'p' });

  test('execute() returns before the record is committed; durable() commits it; the default still commits first', async () => {
    const s = await setup();
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'touch ran' })!, { ...s.ctx, commit: 'deferred' });
    assert.equal(out.ok, true);
    assert.ok(existsSync(join(s.dir, 'ran')), 'the effect ran');
    assert.equal(completed(s.ctx.sessionId), 0, 'not committed yet when execute() resolved');
    await s.runtime.durable();
    assert.equal(completed(s.ctx.sessionId), 1, 'durable() is the barrier');
    const again = await s.runtime.execute(s.runtime.request('terminal', { command: 'true' })!, s.ctx);
    assert.equal(again.ok, true);
    assert.equal(completed(s.ctx.sessionId), 2, 'before-return (the default) commits before execute() resolves');
  });

  test('a deferred commit that fails (tampered chain) fails durable() and every later effect, before it runs', async () => {
    const s = await setup();
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'true' })!, { ...s.ctx, commit: 'deferred' });
    assert.equal(out.ok, true);
    tamper(file(), 'DELETE FROM chain_heads WHERE session_id = ?', s.ctx.sessionId);
    await assert.rejects(s.runtime.durable(), (e: unknown) => e instanceof AuditCommitError && /could not be committed/.test((e as Error).message));
    await assert.rejects(s.runtime.execute(s.runtime.request('terminal', { command: 'touch marker' })!, s.ctx), AuditCommitError);
    assert.equal(existsSync(join(s.dir, 'marker')), false, 'nothing runs after a lost record');
  });

  test('the turn loop shows the model no tool result whose record is not in the store', async () => {
    const s = await setup();
    const checked: number[] = [];
    const provider: ModelProvider = {
      name: 'checking',
      async next(history: readonly HistoryItem[]): Promise<ModelTurn> {
        // Every tool result the model is shown has its effect.completed committed, seen from another connection.
        const results = history.filter((h) => h.role === 'tool').length;
        checked.push(completed(s.ctx.sessionId) - results);
        if (results < 3) return { text: null, toolCalls: [0, 1].map((i) => ({ id: `c${results}-${i}`, name: 'terminal', arguments: { command: `echo ${results}-${i}` } })) };
        return { text: 'done', toolCalls: [] };
      },
    };
    const r = await runTurn('go', { runtime: s.runtime, provider, principal: 'p', sessionId: s.ctx.sessionId, maxIterations: 5 });
    assert.equal(r.outcome, 'completed');
    assert.deepEqual(checked, [0, 0, 0], 'committed records minus results shown: never negative');
    assert.equal(completed(s.ctx.sessionId), 4);
  });
});
