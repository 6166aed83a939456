// The audit chain's tamper cases, one suite run once per engine: this machine's SQLite store and the
// PostgreSQL control plane (a real throwaway cluster). Both write a session's chain with their own
// append path and check it with the one verifier (store/chain-verify.ts); an attacker edits the rows
// with plain SQL on each, and the same break is reported at the same seq and field on both. The
// SQLite-only cases (and the reasons for each) are in event-chain.test.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { openStore, type Database } from '../../src/store/database.js';
import { appendEvent } from '../../src/store/event-chain.js';
import { verifyChain, type ChainVerification } from '../../src/store/chain-verify.js';
import { SessionStore } from '../../src/store/session-store.js';
import { appendChainEvents, createSharedSession, inTransaction, migrateControlPlane, openPool, verifyControlPlaneChain, type ControlPlanePool } from '../../src/control-plane/index.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { forgeEventHash, sha256, tamper, type ChainRow } from './store-fixtures.js';

const forge = forgeEventHash;

type Row = ChainRow;

/** One session's chain of six events on one engine, and the attacker's raw SQL against it. */
interface Chain {
  id: string;
  /** Raw SQL with `?` placeholders, as someone with write access to the tables would run it. */
  tamper(sql: string, ...params: unknown[]): Promise<void>;
  row(seq: number): Promise<Row>;
  verify(): Promise<ChainVerification>;
}

/** Events 2–6 of every chain: the same kinds, times and payloads on both engines. */
const STEPS = [2, 3, 4, 5, 6].map((n) => ({ kind: 'effect.step', at: 2_000 + n, payload: { n, note: `step ${n}`, nested: { z: 1, a: [true, null] } } }));

function assertBroken(r: ChainVerification, seq: number, field: string, detail?: RegExp): void {
  assert.equal(r.ok, false, `expected a break, got ${JSON.stringify(r)}`);
  if (r.ok) return;
  assert.deepEqual({ seq: r.seq, field: r.field }, { seq, field }, r.detail);
  if (detail) assert.match(r.detail, detail);
}

function chainSuite(engine: string, newChain: () => Promise<Chain>): void {
  it(`${engine}: an untouched chain verifies and follows the documented formula`, async () => {
    const c = await newChain();
    const r = await c.verify();
    assert.deepEqual(r, { ok: true, sessionId: c.id, count: 6, head: (await c.row(6)).hash });
    let prev = sha256(`genesis:${c.id}`);
    for (let seq = 1; seq <= 6; seq++) {
      const e = await c.row(seq);
      assert.equal(e.prev_hash, prev);
      assert.equal(e.hash, forge(prev, c.id, seq, e.kind, e.at, JSON.parse(e.payload)));
      prev = e.hash;
    }
  });

  it(`${engine}: an edited payload, kind or at is a hash break at its seq; a non-canonical payload is named`, async () => {
    const c = await newChain();
    await c.tamper('UPDATE runtime_events SET payload = ? WHERE session_id = ? AND seq = 3', canonicalJson({ n: 3, note: 'nothing to see' }), c.id);
    assertBroken(await c.verify(), 3, 'hash', /kind, at or payload of event 3 was edited/);
    const d = await newChain();
    await d.tamper("UPDATE runtime_events SET kind = 'effect.skipped' WHERE session_id = ? AND seq = 5", d.id);
    assertBroken(await d.verify(), 5, 'hash');
    const e = await newChain();
    await e.tamper('UPDATE runtime_events SET payload = ? WHERE session_id = ? AND seq = 4', JSON.stringify(JSON.parse((await e.row(4)).payload), null, 2), e.id);
    assertBroken(await e.verify(), 4, 'payload', /not in canonical form/);
  });

  it(`${engine}: deleted events are missing at their seq; the newest one is caught by the head`, async () => {
    const c = await newChain();
    await c.tamper('DELETE FROM runtime_events WHERE session_id = ? AND seq = 3', c.id);
    assertBroken(await c.verify(), 3, 'missing', /event 3 is missing/);
    const d = await newChain();
    await d.tamper('DELETE FROM runtime_events WHERE session_id = ? AND seq = 6', d.id);
    assertBroken(await d.verify(), 6, 'missing', /head records 6 event\(s\) but the chain ends at seq 5/);
  });

  it(`${engine}: a forged or deleted head is caught`, async () => {
    const c = await newChain();
    await c.tamper('UPDATE chain_heads SET hash = ? WHERE session_id = ?', sha256('forged'), c.id);
    assertBroken(await c.verify(), 6, 'head', /forged/);
    await c.tamper('DELETE FROM chain_heads WHERE session_id = ?', c.id);
    assertBroken(await c.verify(), 6, 'head', /head row is missing/);
  });

  it(`${engine}: reordered events are diagnosed as such`, async () => {
    const c = await newChain();
    await c.tamper('UPDATE runtime_events SET seq = 100 WHERE session_id = ? AND seq = 3', c.id);
    await c.tamper('UPDATE runtime_events SET seq = 3 WHERE session_id = ? AND seq = 4', c.id);
    await c.tamper('UPDATE runtime_events SET seq = 4 WHERE session_id = ? AND seq = 100', c.id);
    assertBroken(await c.verify(), 3, 'seq', /stored at seq 3 was written as seq 4: .*renumbered or reordered/);
  });

  it(`${engine}: a re-hashed forgery breaks the link to the next event; a forged append past the head is named`, async () => {
    const c = await newChain();
    const e = await c.row(3);
    const payload = { n: 3, note: 'rewritten history' };
    await c.tamper('UPDATE runtime_events SET payload = ?, hash = ? WHERE session_id = ? AND seq = 3', canonicalJson(payload), forge(e.prev_hash, c.id, 3, e.kind, e.at, payload), c.id);
    assertBroken(await c.verify(), 4, 'prev_hash', /re-hashed forgery/);
    const d = await newChain();
    const six = await d.row(6);
    const h7 = forge(six.hash, d.id, 7, 'effect.step', 9_999, { forged: true });
    await d.tamper('INSERT INTO runtime_events (session_id, seq, kind, at, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', d.id, 7, 'effect.step', 9_999, '{"forged":true}', six.hash, h7);
    assertBroken(await d.verify(), 7, 'head', /added after the head/);
  });

  it(`${engine}: residual risk, the same on both: the newest event deleted with the head rewritten consistently verifies`, async () => {
    const c = await newChain();
    const five = await c.row(5);
    await c.tamper('DELETE FROM runtime_events WHERE session_id = ? AND seq = 6', c.id);
    await c.tamper('UPDATE chain_heads SET seq = 5, hash = ? WHERE session_id = ?', five.hash, c.id);
    assert.deepEqual(await c.verify(), { ok: true, sessionId: c.id, count: 5, head: five.hash });
  });
}

describe('the audit chain against an attacker on SQLite', () => {
  const dirs: string[] = [];
  const readers: Database[] = [];
  after(() => {
    for (const r of readers) r.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  chainSuite('sqlite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sv-chain-'));
    dirs.push(dir);
    const file = join(dir, 'supervisor.db');
    const db = openStore(file, { checkpointer: false });
    const session = new SessionStore(db, { now: () => 1_000 }).createSession({ principal: 'alice' }, { coreDir: '/cores/demo', coreRevision: 'rev-1', runtime: 'local' });
    for (const s of STEPS) appendEvent(db, session.id, s.kind, s.payload, s.at);
    db.close();
    const read = openStore(file, { checkpointer: false });
    readers.push(read);
    return {
      id: session.id,
      tamper: async (sql, ...params) => tamper(file, sql, ...params),
      row: async (seq) => read.prepare('SELECT * FROM runtime_events WHERE session_id = ? AND seq = ?').get(session.id, seq) as Row,
      verify: async () => verifyChain(read, session.id),
    };
  });
});

describe('the audit chain against an attacker on PostgreSQL', { skip: pgUnavailableReason() ?? false, timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let pool: ControlPlanePool;
  before(async () => {
    cluster = await startPgCluster();
    pool = await openPool(await cluster.createDatabase('chain_tamper'));
    await migrateControlPlane(pool);
  });
  chainSuite('postgres', async () => {
    const id = await createSharedSession(pool, {});
    await inTransaction(pool, (c) => appendChainEvents(c, id, STEPS));
    // `?` placeholders become $1, $2, … as the attacker's psql would take them.
    const toPg = (sql: string): string => {
      let n = 0;
      return sql.replace(/\?/g, () => `$${++n}`);
    };
    return {
      id,
      tamper: async (sql, ...params) => void (await pool.query(toPg(sql), params)),
      row: async (seq) => (await pool.query<Row>('SELECT seq, kind, at, payload, prev_hash, hash FROM runtime_events WHERE session_id = $1 AND seq = $2', [id, seq])).rows[0]!,
      verify: () => verifyControlPlaneChain(pool, id),
    };
  });
  // Registered after the suite's hooks: the pool and the cluster outlive every test.
  after(async () => {
    await pool?.end();
    await cluster?.stop();
  });
});
