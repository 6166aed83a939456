// session_search through the EffectRuntime: capability, then approval, and only then any read of
// the history. The store connection is traced (better-sqlite3's `verbose`), so each test can see
// whether and when the search statement ran relative to the approver being asked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { loadCore } from '../../../src/core/index.js';
import { buildCatalog } from '../../../src/catalog/index.js';
import { EffectRuntime } from '../../../src/effects/index.js';
import { ProcessSupervisor } from '../../../src/process/index.js';
import { approvalDecision, ApprovalBroker, type Approver, type ApprovalRequest } from '../../../src/policy/index.js';
import { openStore, SessionStore, type Database } from '../../../src/store/index.js';
import { makeCore, removeTempCores } from '../../core/temp-core.js';
import { tempDir } from '../../helpers/procs.js';

const require = createRequire(import.meta.url);
const AGENT = (grants: string) => `name: t\ntoolsets: [sessions]\ngrants: [${grants}]\n`;

describe('session_search', () => {
  const state = tempDir();
  let sup: ProcessSupervisor;
  let db: Database;
  let sessions: SessionStore;
  /** Every statement the runtime's connection ran, and the moments the approver was asked. */
  const trace: string[] = [];
  const searched = (from = 0) => trace.slice(from).filter((s) => /message_fts MATCH/.test(s)).length;

  before(() => {
    sup = ProcessSupervisor.open({ stateDir: state.path });
    const file = join(state.path, 'supervisor.db');
    openStore(file).close(); // creates and migrates the file
    const Sqlite = require('better-sqlite3') as typeof BetterSqlite3;
    db = new Sqlite(file, { verbose: (sql) => trace.push(String(sql)) });
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    sessions = new SessionStore(db);
  });
  after(async () => {
    db.close();
    await sup.close();
    state.remove();
    removeTempCores();
  });

  /** An approver that writes down when it was asked, and may act before it answers. */
  function approver(answer: boolean, during?: (r: ApprovalRequest) => void): Approver & { asked: ApprovalRequest[] } {
    const asked: ApprovalRequest[] = [];
    return {
      asked,
      async decide(r) {
        asked.push(r);
        trace.push('-- approver asked');
        during?.(r);
        return approvalDecision(answer, 'operator', answer ? 'approved in test' : 'denied in test');
      },
    };
  }

  async function setup(opts: { grants: string; approver: Approver; principal?: string }) {
    const principal = opts.principal ?? 'alice';
    const dir = makeCore({ 'agent.yaml': AGENT(opts.grants) });
    const core = await loadCore(dir);
    const catalog = buildCatalog({ core, principal });
    const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: opts.approver }), supervisor: sup, db });
    const s = sessions.createSession({ principal }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
    const turn = sessions.addTurn({ principal }, s.id);
    const say = (text: string) => sessions.addMessage({ principal }, s.id, { turnId: turn.id, role: 'user', content: { role: 'user', content: text } });
    const call = (args: Record<string, unknown>) => runtime.execute(runtime.request('session_search', args)!, { principal, sessionId: s.id });
    return { sessionId: s.id, say, call };
  }

  test('history is read only after the approval: a message written while the approver decides is found', async () => {
    let session!: Awaited<ReturnType<typeof setup>>;
    const ask = approver(true, () => session.say('written during approval: quokka'));
    session = await setup({ grants: 'session.read', approver: ask });
    session.say('an earlier quokka mention');
    const mark = trace.length;
    const out = await session.call({ query: 'quokka' });
    assert.equal(out.ok, true, JSON.stringify(!out.ok && out.message));
    assert.equal(ask.asked.length, 1);
    const body = JSON.parse(out.views.model.content) as { count: number; results: { snippet: string }[] };
    // A read before the approval could not contain what the approver wrote.
    assert.equal(body.count, 2);
    assert.ok(body.results.some((r) => r.snippet.includes('during approval')), out.views.model.content);
    const asked = trace.indexOf('-- approver asked', mark);
    const firstRead = trace.findIndex((s, i) => i >= mark && /message_fts MATCH/.test(s));
    assert.ok(asked >= 0 && firstRead > asked, `search ran at ${firstRead}, approver asked at ${asked}`);
  });

  test('denied: no history is read at all', async () => {
    const ask = approver(false);
    const s = await setup({ grants: 'session.read', approver: ask });
    s.say('the denied capybara');
    const mark = trace.length;
    const out = await s.call({ query: 'capybara' });
    assert.equal(out.ok, false);
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    assert.equal(ask.asked.length, 1);
    assert.equal(searched(mark), 0);
  });

  test('without session.read: refused at the capability step, nobody asked, nothing read', async () => {
    const ask = approver(true);
    const s = await setup({ grants: 'catalog.read', approver: ask });
    const mark = trace.length;
    const out = await s.call({ query: 'anything' });
    assert.deepEqual(!out.ok && [out.code, out.step], ['CAPABILITY_DENIED', 3]);
    assert.equal(ask.asked.length, 0);
    assert.equal(searched(mark), 0);
  });

  test('the ordinary scope is the bound session; the operator scope needs session.read:owned and its approval', async () => {
    const bobAsk = approver(true);
    const bob = await setup({ grants: 'session.read, session.read:owned', approver: bobAsk, principal: 'bob' });
    bob.say('bob wombat diary');
    const other = await setup({ grants: 'session.read', approver: approver(true) });
    other.say('alice wombat in another session');

    const ask = approver(true);
    const s = await setup({ grants: 'session.read', approver: ask });
    s.say('alice wombat here');
    const own = JSON.parse((await s.call({ query: 'wombat' })).views.model.content) as { results: { session_id: string }[] };
    assert.deepEqual(own.results.map((r) => r.session_id), [s.sessionId]);

    // session.read does not cover session.read:owned (one grammar: a target is a further segment).
    const mark = trace.length;
    const asked = ask.asked.length;
    const refused = await s.call({ query: 'wombat', scope: 'owned' });
    assert.deepEqual(!refused.ok && [refused.code, refused.step], ['CAPABILITY_DENIED', 4]);
    assert.match(!refused.ok ? refused.message : '', /session\.read:owned/);
    assert.equal(ask.asked.length, asked);
    assert.equal(searched(mark), 0);

    const opAsk = approver(true);
    const op = await setup({ grants: 'session.read, session.read:owned', approver: opAsk });
    op.say('operator wombat');
    const all = await op.call({ query: 'wombat', scope: 'owned' });
    assert.equal(all.ok, true);
    assert.equal(opAsk.asked.length, 1);
    assert.match(opAsk.asked[0]!.actionSummary, /all your sessions/);
    const found = JSON.parse(all.views.model.content) as { results: { session_id: string }[] };
    assert.deepEqual(new Set(found.results.map((r) => r.session_id)), new Set([s.sessionId, other.sessionId, op.sessionId]));
    assert.ok(!all.views.model.content.includes(bob.sessionId) && !all.views.model.content.includes('bob'));
    // Approving the session scope does not approve the owned scope: they are different actions.
    assert.notEqual(opAsk.asked[0]!.key.id, ask.asked[0]!.key.id);
  });

  test('the model sees a bounded projection: session, turn, role, time, snippet; no principal, no whole messages', async () => {
    const s = await setup({ grants: 'session.read', approver: approver(true) });
    for (let i = 0; i < 30; i++) s.say(`${'padding '.repeat(500)} ibis number ${i} ${'padding '.repeat(500)}`);
    const out = await s.call({ query: 'ibis', limit: 20 });
    const body = JSON.parse(out.views.model.content) as { count: number; results: Record<string, unknown>[] };
    assert.equal(body.count, 20);
    for (const r of body.results) {
      assert.deepEqual(Object.keys(r).sort(), ['at', 'role', 'session_id', 'snippet', 'turn']);
      assert.ok(String(r.snippet).length <= 400);
      assert.match(String(r.at), /^\d{4}-\d\d-\d\dT/);
    }
    assert.ok(!out.views.model.content.includes('alice'));
    const tooMany = await s.call({ query: 'ibis', limit: 21 });
    assert.equal(!tooMany.ok && tooMany.code, 'ARGS_INVALID');
  });

  test('hostile queries: a clear tool error (or a refusal of the arguments), never a crash', async () => {
    const s = await setup({ grants: 'session.read', approver: approver(true) });
    s.say('plain text for the hostile queries');
    for (const q of ['"unbalanced', 'NEAR(', 'NEAR(a b, -1)', 'foo: text', 'rank: x', "'; DROP TABLE messages; --", '(((', 'AND', '*']) {
      const out = await s.call({ query: q });
      assert.equal(out.ok, true, `${q}: ${!out.ok && out.message}`);
      assert.equal(out.ok && out.isError, true, q);
      assert.match(out.views.model.content, /not a valid full-text query/, q);
    }
    for (const q of ['', '   ', 'x'.repeat(257), 'x'.repeat(100_000)]) {
      const out = await s.call({ query: q });
      assert.equal(!out.ok && out.code, 'ARGS_INVALID', JSON.stringify(q.slice(0, 10)));
    }
    const still = await s.call({ query: 'plain' });
    assert.equal(JSON.parse(still.views.model.content).count, 1);
  });
});
