// The operator's port (decision 125), one suite run once per engine: this machine's SQLite store
// and the PostgreSQL control plane (a real throwaway cluster). Each engine's own writers make the
// same world: principal P with a session and a pending request, principal Q with the same. Then the
// same assertions through the port: P sees only its own sessions, requests, events and changes;
// Q's ids read as missing; an answer is a compare-and-swap bound to the digest shown (a mismatch
// answers nothing, a second answer loses and is told who won, Q's request cannot be answered by
// P); the live feed moves with the answer; the chain verifies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStore, PendingApprovalStore, SessionStore, TaskStore, appendEvent, type Database } from '../../src/store/index.js';
import { sqliteOperatorStore, type OperatorStore } from '../../src/operator/operator-store.js';
import { openControlPlaneOperatorStore } from '../../src/operator/control-plane-operator-store.js';
import { shownDigest } from '../../src/operator/approval-answer.js';
import { ControlPlaneMember, appendAsOwner, createOwnedSession, holdRunTask, migrateControlPlane, openPool, requestApproval, type ControlPlanePool } from '../../src/control-plane/index.js';
import { ownProcessIdentity } from '../../src/process/own-identity.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { tempDir } from '../helpers/procs.js';

const P = 'local:p';
const Q = 'local:q';
const REQUEST = { tool: 'terminal', capability: 'terminal.exec', summary: 'rm -rf build', preview: '{"command":"rm -rf build"}' };

/** What each engine's fixture made, by id, for the shared assertions. */
interface World {
  store: OperatorStore;
  mine: { session: string; approval: string; task: string };
  theirs: { session: string; approval: string; task: string };
  close(): Promise<void>;
}

async function sqliteWorld(): Promise<World> {
  const dir = tempDir('operator-port-sqlite-');
  const db: Database = openStore(join(dir.path, 'supervisor.db'), { checkpointer: false });
  const sessions = new SessionStore(db);
  const approvals = new PendingApprovalStore(db);
  const tasks = new TaskStore(db);
  const make = (principal: string) => {
    const s = sessions.createSession({ principal }, { coreDir: '/cores/demo', coreRevision: 'r1', runtime: 'local' });
    appendEvent(db, s.id, 'effect.requested', { tool: 'terminal' });
    const a = approvals.create({ sessionId: s.id, ...REQUEST, ttlMs: 600_000 });
    const t = tasks.create({ principal }, { sessionId: s.id, kind: 'terminal', sourceTool: 'terminal', summary: 'make deploy' });
    return { session: s.id, approval: a.id, task: t.id };
  };
  const mine = make(P);
  const theirs = make(Q);
  return {
    store: sqliteOperatorStore(db, P, dir.path),
    mine,
    theirs,
    close: async () => {
      db.close();
      dir.remove();
    },
  };
}

async function postgresWorld(url: string): Promise<World> {
  const pool: ControlPlanePool = await openPool(url);
  await migrateControlPlane(pool);
  const member = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'operator-port-test' }), { reclaimEveryMs: 0 });
  const make = async (principal: string) => {
    const lease = await createOwnedSession(member, { core: '/cores/demo' }, undefined, principal);
    await appendAsOwner(member, lease, [{ kind: 'effect.requested', payload: { tool: 'terminal' } }]);
    const a = await requestApproval(member, lease, { principal, ...REQUEST, ttlMs: 600_000 });
    const t = await holdRunTask(member, lease, { id: `tk_${principal.replace(/\W/g, '')}`, kind: 'terminal', summary: 'make deploy' });
    return { session: lease.id, approval: a.id, task: t.id };
  };
  const mine = await make(P);
  const theirs = await make(Q);
  const store = await openControlPlaneOperatorStore(url, P, 'operator-port-test');
  return {
    store,
    mine,
    theirs,
    close: async () => {
      await store.close();
      await member.leave();
      await pool.end();
    },
  };
}

/** The one suite, run against a world of either engine. */
function operatorPortSuite(engine: 'sqlite' | 'postgres', open: () => Promise<World>): void {
  let w: World;
  before(async () => {
    w = await open();
  });
  after(async () => w?.close());

  it(`${engine}: lists only the principal's sessions and requests; another principal's ids read as missing`, async () => {
    assert.equal(w.store.engine, engine);
    const sessions = await w.store.listSessions(50);
    assert.deepEqual(sessions.map((s) => s.id), [w.mine.session]);
    assert.equal(sessions[0]!.status, 'running');
    assert.equal(sessions[0]!.core, '/cores/demo');
    assert.equal(await w.store.getSession(w.theirs.session), undefined);
    assert.deepEqual((await w.store.listApprovals()).map((a) => [a.id, a.status, a.sessionId]), [[w.mine.approval, 'pending', w.mine.session]]);
    assert.equal(await w.store.getApproval(w.theirs.approval), undefined);
    assert.deepEqual(await w.store.listEvents(w.theirs.session, 0, 100), []);
  });

  it(`${engine}: the session's events, and its chain intact`, async () => {
    const events = await w.store.listEvents(w.mine.session, 0, 100);
    assert.ok(events.some((e) => e.kind === 'effect.requested'), JSON.stringify(events.map((e) => e.kind)));
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'in order from seq 1');
    const later = await w.store.listEvents(w.mine.session, events.at(-1)!.seq, 100);
    assert.deepEqual(later, [], 'nothing after the newest');
    const chain = await w.store.verifyChain(w.mine.session);
    assert.equal(chain.ok, true, chain.text);
    assert.match(chain.text, new RegExp(`^intact: ${events.length} event\\(s\\)`));
  });

  it(`${engine}: the principal's running task is listed and its cancel asked; another principal's is neither`, async () => {
    const listed = await w.store.listTasks(undefined, 50);
    assert.deepEqual(listed.map((t) => [t.id, t.sessionId, t.status]), [[w.mine.task, w.mine.session, 'running']]);
    assert.match(listed[0]!.summary, /make deploy/);
    assert.deepEqual(await w.store.listTasks(w.theirs.session, 50), []);
    assert.equal(await w.store.requestTaskCancel(w.theirs.task, 'a tab'), undefined, "another principal's task reads as missing");
    const asked = await w.store.requestTaskCancel(w.mine.task, 'a tab');
    assert.equal(asked?.id, w.mine.task);
    assert.equal(asked?.status, 'running', 'a request: the run that holds it stops it');
  });

  it(`${engine}: an answer is one compare-and-swap bound to the digest shown; the feed moves with it`, async () => {
    const shown = (await w.store.getApproval(w.mine.approval))!;
    assert.equal(shown.digest, shownDigest(REQUEST));
    const before = await w.store.feedHead();
    assert.ok(before > 0, 'the requests and sessions are on the feed');
    const seen = await w.store.changesAfter(0);
    assert.ok(seen.some((c) => c.kind === 'approval' && c.ref === w.mine.approval && c.status === 'pending'));
    assert.ok(!seen.some((c) => c.ref === w.theirs.approval || c.sessionId === w.theirs.session), "another principal's changes are not on the principal's feed");

    const wrong = await w.store.answerApproval({ id: w.mine.approval, approve: true, always: false, expect: '0000000000000000', decidedBy: 'a tab' });
    assert.deepEqual(wrong, { kind: 'digest-mismatch', digest: shown.digest });
    assert.equal((await w.store.getApproval(w.mine.approval))!.status, 'pending', 'a mismatch answers nothing');

    const foreign = await w.store.answerApproval({ id: w.theirs.approval, approve: true, always: false, decidedBy: 'a tab' });
    assert.deepEqual(foreign, { kind: 'not-found' });

    const first = await w.store.answerApproval({ id: w.mine.approval, approve: true, always: false, expect: shown.digest, decidedBy: 'the first tab' });
    assert.equal(first.kind, 'answered');
    const second = await w.store.answerApproval({ id: w.mine.approval, approve: false, always: false, decidedBy: 'the second tab' });
    assert.equal(second.kind, 'lost');
    assert.equal(second.kind === 'lost' && second.record.decidedBy, 'the first tab');
    assert.equal((await w.store.getApproval(w.mine.approval))!.status, 'approved');
    assert.deepEqual(await w.store.listApprovals(), [], 'nothing of the principal waits any more');

    assert.ok((await w.store.feedHead()) > before);
    assert.equal(await w.store.feedContinuousAfter(before), true);
    const moved = await w.store.changesAfter(before);
    assert.deepEqual(moved.map((c) => [c.kind, c.ref, c.status]), [['approval', w.mine.approval, 'approved']]);
  });
}

describe('the operator port on SQLite', () => operatorPortSuite('sqlite', sqliteWorld));

describe('the operator port on PostgreSQL', { skip: pgUnavailableReason() ?? false, timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let url: string;
  before(async () => {
    cluster = await startPgCluster();
    url = await cluster.createDatabase('operator_port');
  });
  operatorPortSuite('postgres', () => postgresWorld(url));
  // Registered after the suite's own: hooks run in order, and the world closes before its cluster stops.
  after(async () => cluster?.stop());
});
