// The PostgreSQL control plane against a real throwaway cluster: migrations, members and their
// heartbeats, fencing epochs, self-fencing, SKIP LOCKED claims, rescues, and the audit chain under
// concurrent appends (verified with the SQLite store's own verifier).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { OPERATOR_CHANGES_KEPT } from '../../src/store/operator-changes.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createServer } from 'node:net';
import {
  ControlPlaneMember,
  ControlPlaneError,
  MemberFencedError,
  OwnershipLostError,
  answerApproval,
  appendAsOwner,
  appendChainEvents,
  archiveFinished,
  claimTask,
  createOwnedSession,
  createSharedSession,
  endOwnedSession,
  enqueueTask,
  fencedUpdate,
  finishTask,
  holdRunTask,
  inTransaction,
  listSessions,
  migrateControlPlane,
  openPool,
  recordTaskEvent,
  requestApproval,
  verifyControlPlaneChain,
  type ControlPlanePool,
  type MemberOptions,
} from '../../src/control-plane/index.js';
import { ownProcessIdentity } from '../../src/process/index.js';
import { probeControlPlane } from '../../src/control-plane/control-plane-probe.js';
import { CONTROL_PLANE_MIGRATIONS } from '../../src/control-plane/index.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';

const skip = pgUnavailableReason() ?? false;

describe('PostgreSQL control plane', { skip }, () => {
  let cluster: PgCluster;
  const pools: ControlPlanePool[] = [];
  const members: ControlPlaneMember[] = [];
  let dbCount = 0;

  before(async () => {
    cluster = await startPgCluster();
  });
  after(async () => {
    for (const m of members) m.stopTimers();
    // Bounded: a pool whose client a failed test still holds never ends on its own; stopping the
    // cluster then closes that client's socket, so a failure is reported instead of hanging here.
    for (const p of pools) await Promise.race([p.end().catch(() => {}), sleep(5000)]);
    await cluster?.stop();
  });

  /** A fresh database with the control plane's schema, and a pool on it. */
  async function freshPlane(): Promise<{ url: string; pool: ControlPlanePool }> {
    const url = await cluster.createDatabase(`cp_${++dbCount}`);
    const pool = await openPool(url, { max: 8 });
    pools.push(pool);
    await migrateControlPlane(pool);
    return { url, pool };
  }

  async function join(pool: ControlPlanePool, opts: MemberOptions = {}): Promise<ControlPlaneMember> {
    const m = await ControlPlaneMember.join(pool, ownProcessIdentity(), { reclaimEveryMs: 0, ...opts });
    members.push(m);
    return m;
  }

  /** Makes a member's lease lapse now, by the server's clock (what a SIGKILL leads to after a lease). */
  async function expire(pool: ControlPlanePool, m: ControlPlaneMember): Promise<void> {
    m.stopTimers();
    await pool.query("UPDATE members SET lease_expires_at = clock_timestamp() - interval '1 millisecond' WHERE id = $1", [m.id]);
  }

  it('applies its migrations once, even when three members start on an empty database at the same time', async () => {
    const url = await cluster.createDatabase('cp_migrate');
    const three = await Promise.all([0, 1, 2].map(() => openPool(url)));
    pools.push(...three);
    const applied = await Promise.all(three.map((p) => migrateControlPlane(p)));
    assert.deepEqual(applied.flat().sort((x, y) => x - y), CONTROL_PLANE_MIGRATIONS.map((m) => m.version), 'each migration ran exactly once across the three');
    assert.deepEqual(await migrateControlPlane(three[0]!), []);
    const versions = await three[0]!.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(versions.rows.map((r) => r.version), CONTROL_PLANE_MIGRATIONS.map((m) => m.version));
    // A schema from a newer supervisor is refused with what to do, not half-used.
    await three[0]!.query("INSERT INTO schema_migrations (version, name) VALUES (99, 'from the future')");
    await assert.rejects(migrateControlPlane(three[1]!), (e: ControlPlaneError) => e.code === 'CONTROL_PLANE_TOO_NEW' && /version 99.*upgrade this supervisor/.test(e.message));
  });

  it('a wrong URL or a refused connection is a clear error that never shows the password', async () => {
    await assert.rejects(openPool('mysql://u@h/db'), (e: ControlPlaneError) => e.code === 'CONTROL_PLANE_URL' && /postgres:\/\//.test(e.message));
    await assert.rejects(openPool('not a url'), (e: ControlPlaneError) => e.code === 'CONTROL_PLANE_URL');
    const closedPort = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    await assert.rejects(openPool(`postgres://someone:hunter2@127.0.0.1:${closedPort}/x`, { connectTimeoutMs: 2000 }), (e: ControlPlaneError) => {
      assert.equal(e.code, 'CONTROL_PLANE_UNREACHABLE');
      assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${closedPort}`));
      assert.doesNotMatch(e.message, /hunter2/);
      return true;
    });
  });

  it("doctor's controlPlane line: a superuser role is a finding, a role of its own passes; a newer schema and a refused server are named", async () => {
    const { url, pool } = await freshPlane();
    const known = CONTROL_PLANE_MIGRATIONS.at(-1)!.version;
    const asSuper = await probeControlPlane(url);
    assert.equal(asSuper.ok, false);
    assert.match(asSuper.version ?? '', /^PostgreSQL 1\d/);
    assert.match(asSuper.detail, new RegExp(`schema at version ${known} \\(current\\); LISTEN/NOTIFY delivered; role postgres \\(superuser\\)\\. the role postgres is a superuser`));
    // A role that owns only its own database: nothing to report.
    await pool.query('CREATE ROLE cp_member LOGIN');
    await pool.query('CREATE DATABASE cp_own OWNER cp_member');
    const own = url.replace('postgres@', 'cp_member@').replace(/\/[^/]+$/, '/cp_own');
    const fine = await probeControlPlane(own);
    assert.equal(fine.ok, true, fine.detail);
    assert.match(fine.detail, new RegExp(`no schema yet \\(the first run creates it, version ${known}\\); LISTEN/NOTIFY delivered; role cp_member$`));
    // A schema newer than this supervisor: named, with the fix.
    await pool.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
    const newer = await probeControlPlane(url);
    assert.match(newer.detail, /the schema is at version 999, newer than this supervisor knows .*upgrade this supervisor/);
    await pool.query('DELETE FROM schema_migrations WHERE version = 999');
    const refused = await probeControlPlane('postgres://someone:hunter2@127.0.0.1:1/x');
    assert.equal(refused.ok, false);
    assert.match(refused.detail, /^postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/);
    assert.doesNotMatch(refused.detail, /hunter2/);
  });

  it('a member registers its identity and its heartbeat moves its lease forward', async () => {
    const { pool } = await freshPlane();
    const m = await join(pool, { leaseMs: 1500 });
    const row = async () =>
      (await pool.query<{ host_id: string; boot_id: string; pid: number; start_marker: string; heartbeat_at: Date; status: string }>('SELECT * FROM members WHERE id = $1', [m.id])).rows[0]!;
    const first = await row();
    const me = ownProcessIdentity();
    assert.deepEqual([first.host_id, first.boot_id, first.pid, first.start_marker, first.status], [me.hostId, me.bootId, process.pid, me.startMarker, 'alive']);
    await sleep(400);
    const later = await row();
    assert.ok(later.heartbeat_at > first.heartbeat_at, 'heartbeats renewed the lease');
    assert.equal(m.fenced, false);
    await m.leave();
    assert.equal((await row()).status, 'left');
  });

  it('a write under a stale epoch matches no row and raises OwnershipLostError; the new owner finishes the task once', async () => {
    const { pool } = await freshPlane();
    const session = await createSharedSession(pool);
    await enqueueTask(pool, { sessionId: session, kind: 'noop', input: { n: 1 } });
    const a = await join(pool);
    const b = await join(pool);
    const taskA = (await claimTask(a))!;
    assert.equal(taskA.epoch, 1);
    await expire(pool, a);
    const reclaimed = await b.reclaimExpired();
    assert.deepEqual(reclaimed.map((r) => [r.memberId, r.tasks.map((t) => t.outcome)]), [[a.id, ['requeued']]]);
    const taskB = (await claimTask(b))!;
    assert.equal(taskB.id, taskA.id);
    assert.equal(taskB.epoch, 3, 'the reclaim and the new claim each moved the epoch');
    // A's stale lease, straight at the database (past A's own local check): nothing is written.
    await assert.rejects(
      inTransaction(pool, (c) => fencedUpdate(c, taskA, "status = 'succeeded', result = '\"stale\"'")),
      (e: OwnershipLostError) => e.code === 'OWNERSHIP_LOST' && e.epoch === 1,
    );
    // And through the API, A has fenced itself locally (its lease lapsed by its own clock too).
    await assert.rejects(finishTask(a, taskA, { status: 'succeeded', result: 'stale' }), (e) => e instanceof MemberFencedError || e instanceof OwnershipLostError);
    await finishTask(b, taskB, { status: 'succeeded', result: { ok: true } });
    await assert.rejects(finishTask(b, taskB, { status: 'succeeded', result: 'twice' }), OwnershipLostError, 'a finished task cannot be finished again');
    const t = (await pool.query<{ status: string; result: string; epoch: number }>('SELECT status, result, epoch FROM tasks WHERE id = $1', [taskA.id])).rows[0]!;
    assert.deepEqual(t, { status: 'succeeded', result: '{"ok":true}', epoch: 3 });
    const attempts = await pool.query<{ attempt: number; status: string; member_id: string }>('SELECT attempt, status, member_id FROM task_attempts WHERE task_id = $1 ORDER BY attempt', [taskA.id]);
    assert.deepEqual(attempts.rows, [
      { attempt: 1, status: 'interrupted', member_id: a.id },
      { attempt: 2, status: 'succeeded', member_id: b.id },
    ]);
    const kinds = (await pool.query<{ kind: string }>('SELECT kind FROM runtime_events WHERE session_id = $1 ORDER BY seq', [session])).rows.map((r) => r.kind);
    assert.deepEqual(kinds, ['session.created', 'task.queued', 'task.claimed', 'task.interrupted', 'task.requeued', 'task.claimed', 'task.succeeded']);
    assert.equal((await verifyControlPlaneChain(pool, session)).ok, true);
  });

  it('a member that cannot renew for half its lease fences itself before the lease lapses: it calls onFenced and writes nothing more', async () => {
    const { url } = await freshPlane();
    const own = await openPool(url);
    let fencedAt = 0;
    let why = '';
    const leaseMs = 1000;
    const m = await join(own, {
      leaseMs,
      onFenced: (reason) => {
        fencedAt = performance.now();
        why = reason;
      },
    });
    const lease = await createOwnedSession(m);
    const cut = performance.now();
    await own.end(); // every renewal fails from now on
    while (!fencedAt && performance.now() - cut < 3000) await sleep(10);
    assert.ok(fencedAt > 0, 'onFenced was called');
    // The rule is half a lease by the member's clock (plus a watchdog tick and event-loop lag); the
    // safety bound is the whole lease: others may reclaim only after it, so the stop must come first.
    assert.ok(fencedAt - cut < leaseMs, `fenced ${Math.round(fencedAt - cut)} ms after renewals stopped; the lease is ${leaseMs} ms`);
    assert.match(why, /half the 1000 ms lease|refused the renewal/);
    await assert.rejects(appendAsOwner(m, lease, [{ kind: 'note.late', payload: {} }]), MemberFencedError);
  });

  it('a server that goes away mid-run: the member fences itself before its lease could lapse and refuses every write', async () => {
    const doomed = await startPgCluster();
    try {
      const pool = await openPool(await doomed.createDatabase('doomed'), { connectTimeoutMs: 500 });
      pools.push(pool);
      await migrateControlPlane(pool);
      const leaseMs = 2000;
      let fencedAt = 0;
      const m = await join(pool, { leaseMs, onFenced: () => (fencedAt = performance.now()) });
      const lease = await createOwnedSession(m);
      // Gone once stop() returns: until then (a loaded machine takes a while to end a cluster) the
      // member may still renew, and its half-lease clock starts at its last renewal.
      await doomed.stop();
      const gone = performance.now();
      while (!fencedAt && performance.now() - gone < 5000) await sleep(10);
      assert.ok(fencedAt > 0, 'onFenced was called');
      assert.ok(fencedAt - gone < leaseMs, `fenced ${Math.round(fencedAt - gone)} ms after the server went away; the lease is ${leaseMs} ms`);
      await assert.rejects(appendAsOwner(m, lease, [{ kind: 'note.after', payload: {} }]), MemberFencedError);
      await assert.rejects(claimTask(m), MemberFencedError);
    } finally {
      await doomed.stop();
    }
  });

  it('pg_terminate_backend on a member’s connections: the member reconnects, keeps its lease and its writes land whole', async () => {
    const { pool } = await freshPlane();
    const admin = await openPool(cluster.url);
    pools.push(admin);
    const m = await join(pool, { leaseMs: 2000 });
    const lease = await createOwnedSession(m);
    await appendAsOwner(m, lease, [{ kind: 'note.before', payload: {} }]);
    const killed = await admin.query<{ ok: boolean }>(
      "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE datname = current_database() IS NOT TRUE AND application_name = 'supervisor' AND pid <> pg_backend_pid()",
    );
    assert.ok(killed.rowCount! > 0, 'the member had connections to terminate');
    // The pool drops the dead connections; the next write goes through a new one.
    let written = false;
    for (let i = 0; i < 5 && !written; i++) {
      try {
        await appendAsOwner(m, lease, [{ kind: 'note.after', payload: { i } }]);
        written = true;
      } catch (err) {
        assert.match((err as Error).message, /terminat|Connection|connection/, 'a terminated connection is the only failure allowed');
      }
    }
    assert.ok(written);
    await sleep(700);
    assert.equal(m.fenced, false, 'heartbeats resumed on new connections');
    const kinds = (await pool.query<{ kind: string }>('SELECT kind FROM runtime_events WHERE session_id = $1 ORDER BY seq', [lease.id])).rows.map((r) => r.kind);
    assert.deepEqual(kinds.filter((k) => k !== 'note.after'), ['session.created', 'note.before']);
    assert.ok(kinds.includes('note.after'));
    assert.equal((await verifyControlPlaneChain(pool, lease.id)).ok, true, 'no half-written append');
  });

  it('a dead member’s session is marked interrupted with an audit event by the next sweep; a run task it held is failed, never run again', async () => {
    const { pool } = await freshPlane();
    // Leases long enough that event-loop lag on a loaded machine does not fence a member before
    // the test has used it (half a lease without a renewal fences).
    const dead = await join(pool, { leaseMs: 1500 });
    const sweeper = await join(pool, { leaseMs: 8000, reclaimEveryMs: 100 });
    const lease = await createOwnedSession(dead, { title: 'owned' });
    await appendAsOwner(dead, lease, [{ kind: 'note.work', payload: { step: 1 } }]);
    const held = await holdRunTask(dead, lease, { id: 'tk_held', kind: 'terminal', summary: 'make deploy' });
    dead.stopTimers(); // as if SIGKILLed: no more heartbeats
    const deadline = Date.now() + 15_000;
    let row: { status: string; end_reason: string; epoch: number } | undefined;
    while (Date.now() < deadline) {
      row = (await pool.query<{ status: string; end_reason: string; epoch: number }>('SELECT status, end_reason, epoch FROM sessions WHERE id = $1', [lease.id])).rows[0];
      if (row?.status === 'interrupted') break;
      await sleep(50);
    }
    assert.equal(row?.status, 'interrupted');
    assert.equal(row?.epoch, 2);
    assert.match(row!.end_reason, new RegExp(`member ${dead.id}.*reclaimed by member ${sweeper.id}`));
    const gap = (
      await pool.query<{ ms: number }>('SELECT (extract(epoch FROM (s.ended_at - m.heartbeat_at)) * 1000)::float8 AS ms FROM sessions s, members m WHERE s.id = $1 AND m.id = $2', [lease.id, dead.id])
    ).rows[0]!.ms;
    assert.ok(gap < 10_000, `reclaimed ${Math.round(gap)} ms after the last heartbeat`);
    const last = (await pool.query<{ kind: string; payload: string }>('SELECT kind, payload FROM runtime_events WHERE session_id = $1 ORDER BY seq DESC LIMIT 1', [lease.id])).rows[0]!;
    assert.equal(last.kind, 'session.interrupted');
    assert.equal(JSON.parse(last.payload).member_id, dead.id);
    assert.equal((await verifyControlPlaneChain(pool, lease.id)).ok, true);
    // The task ran on the dead member's host: it is failed (its tree is that host's reconcile's), not queued for another.
    const task = (await pool.query<{ status: string; reason: string }>('SELECT status, reason FROM tasks WHERE id = $1', [held.id])).rows[0]!;
    assert.equal(task.status, 'failed');
    assert.match(task.reason, /its runner was lost 1 time\(s\), more than max_rescues 0 allows/);
    assert.equal(await claimTask(sweeper), null, 'nothing to claim');
    const kinds = (await pool.query<{ kind: string }>('SELECT kind FROM runtime_events WHERE session_id = $1 ORDER BY seq', [lease.id])).rows.map((r) => r.kind);
    assert.deepEqual(kinds, ['session.created', 'note.work', 'task.held', 'task.interrupted', 'task.failed', 'session.interrupted']);
  });

  it('a member frozen inside a transaction (its row locks held) is still reclaimed: the server ends the idle transaction, the sweep does not wait on it', async () => {
    const { url, pool } = await freshPlane();
    // The frozen member's own pool, as a member opens it (openPool's defaults).
    const frozenPool = await openPool(url, { max: 2 });
    pools.push(frozenPool);
    const frozen = await join(frozenPool, { leaseMs: 1500 });
    const session = await createSharedSession(pool);
    await enqueueTask(pool, { sessionId: session, kind: 'work', input: {}, maxRescues: 3 });
    const t = (await claimTask(frozen))!;
    // Mid-transaction, the task row and the chain head locked, then nothing: what a SIGSTOP between
    // two statements leaves on the server.
    const held = await frozenPool.connect();
    held.on('error', () => {}); // the server ends this connection: that is the point
    // The sweeper's lease is the longest there is: on a loaded machine a shorter one fences the
    // sweeper itself (half a lease of event-loop lag), and then nobody sweeps.
    let sweeper: ControlPlaneMember | undefined;
    try {
      await held.query('BEGIN');
      await held.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [t.id]);
      frozen.stopTimers();
      sweeper = await join(pool, { leaseMs: 8000, reclaimEveryMs: 100 });
      const deadline = Date.now() + 20_000;
      let status: string | undefined;
      while (Date.now() < deadline) {
        status = (await pool.query<{ status: string }>('SELECT status FROM members WHERE id = $1', [frozen.id])).rows[0]?.status;
        if (status === 'dead') break;
        await sleep(100);
      }
      assert.equal(status, 'dead', `the sweep reclaimed the frozen member although it held a row lock (sweeper fenced: ${sweeper.fenced})`);
      const task = (await pool.query<{ status: string; rescues: number }>('SELECT status, rescues FROM tasks WHERE id = $1', [t.id])).rows[0]!;
      assert.deepEqual([task.status, task.rescues], ['queued', 1], 'its task went back to the queue');
      await assert.rejects(held.query('SELECT 1'), 'the server ended the idle transaction and its connection');
    } finally {
      // Released whatever happened above: a held client would keep its pool from ever ending.
      held.release(true);
      sweeper?.stopTimers();
    }
  });

  it('a task that loses its runner every time fails after max_rescues, with the reason', async () => {
    const { pool } = await freshPlane();
    const session = await createSharedSession(pool);
    const id = await enqueueTask(pool, { sessionId: session, kind: 'poison', input: {}, maxRescues: 1 });
    const sweeper = await join(pool);
    for (let run = 1; run <= 2; run++) {
      const runner = await join(pool);
      const t = (await claimTask(runner))!;
      assert.equal(t.id, id, `run ${run} claims the poison task`);
      await expire(pool, runner);
      await sweeper.reclaimExpired();
    }
    const t = (await pool.query<{ status: string; rescues: number; reason: string }>('SELECT status, rescues, reason FROM tasks WHERE id = $1', [id])).rows[0]!;
    assert.equal(t.status, 'failed');
    assert.equal(t.rescues, 2);
    assert.match(t.reason, /lost 2 time\(s\), more than max_rescues 1/);
    assert.equal(await claimTask(sweeper), null, 'nothing left to claim');
    assert.equal((await verifyControlPlaneChain(pool, session)).ok, true);
  });

  it('members claiming at once each get a different task (SKIP LOCKED): every task runs exactly once', async () => {
    const { pool } = await freshPlane();
    const session = await createSharedSession(pool);
    const n = 60;
    for (let i = 0; i < n; i++) await enqueueTask(pool, { sessionId: session, kind: 'noop', input: { i } });
    const three = await Promise.all([0, 1, 2].map(() => join(pool, { leaseMs: 4000 })));
    const latencies: number[] = [];
    const byMember = new Map<string, number>();
    await Promise.all(
      three.map(async (m) => {
        for (;;) {
          const t0 = performance.now();
          const t = await claimTask(m);
          latencies.push(performance.now() - t0);
          if (!t) return;
          byMember.set(m.id, (byMember.get(m.id) ?? 0) + 1);
          await recordTaskEvent(m, t, 'task.progress', { pct: 50 });
          await finishTask(m, t, { status: 'succeeded', result: t.input });
        }
      }),
    );
    const done = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM task_attempts WHERE status = 'succeeded'");
    assert.equal(done.rows[0]!.n, n);
    const twice = await pool.query("SELECT task_id FROM task_attempts GROUP BY task_id HAVING count(*) > 1");
    assert.equal(twice.rowCount, 0, 'no task was claimed twice');
    assert.equal([...byMember.values()].reduce((a, b) => a + b, 0), n);
    const v = await verifyControlPlaneChain(pool, session);
    assert.ok(v.ok && v.count === 1 + n * 4, JSON.stringify(v));
    latencies.sort((a, b) => a - b);
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1);
    console.log(`# claim latency over ${latencies.length} claims by 3 members: p50 ${pct(50)} ms, p99 ${pct(99)} ms; split ${[...byMember.values()].join('/')}`);
  });

  it('the audit chain stays linear under concurrent appends, and the shared verifier finds a tampered event', async () => {
    const { pool } = await freshPlane();
    const session = await createSharedSession(pool);
    const writers = 6;
    const each = 40;
    await Promise.all(
      Array.from({ length: writers }, (_, w) =>
        (async () => {
          for (let i = 0; i < each; i++) await inTransaction(pool, (c) => appendChainEvents(c, session, [{ kind: 'note.concurrent', payload: { w, i } }]));
        })(),
      ),
    );
    const v = await verifyControlPlaneChain(pool, session);
    assert.deepEqual(v.ok && v.count, 1 + writers * each);
    // A row planted past the head: the next append refuses to build on a chain it cannot extend.
    const top = 1 + writers * each;
    await pool.query("INSERT INTO runtime_events (session_id, seq, kind, at, payload, prev_hash, hash) VALUES ($1, $2, 'note.planted', 0, '{}', 'x', 'y')", [session, top + 1]);
    await assert.rejects(
      inTransaction(pool, (c) => appendChainEvents(c, session, [{ kind: 'note.next', payload: {} }])),
      (e: Error) => e.name === 'ChainInconsistentError' && new RegExp(`past the head \\(seq ${top}\\)`).test(e.message),
    );
    await pool.query('DELETE FROM runtime_events WHERE session_id = $1 AND seq = $2', [session, top + 1]);
    await pool.query("UPDATE runtime_events SET payload = '{\"i\":0,\"w\":99}' WHERE session_id = $1 AND seq = 17", [session]);
    const broken = await verifyControlPlaneChain(pool, session);
    assert.equal(broken.ok, false);
    assert.deepEqual(!broken.ok && [broken.seq, broken.field], [17, 'hash']);
    assert.match(!broken.ok ? broken.detail : '', /edited/);
  });

  it('finished rows leave the hot tables: an ended session\'s events, finished tasks, decided approvals; chains still verify, running work stays; the live feed keeps its newest rows', async () => {
    const { pool } = await freshPlane();
    const m = await join(pool, { archiveEveryMs: 0 });
    // Finished: a session that ended, a task that succeeded, an approval that was answered.
    const ended = await createOwnedSession(m, {}, undefined, 'p');
    await appendAsOwner(m, ended, [{ kind: 'note', payload: { i: 1 } }]);
    const asked = await requestApproval(m, ended, { principal: 'p', tool: 't', capability: 'c', summary: 's', preview: '{}', ttlMs: 60_000 });
    await answerApproval(pool, 'p', { id: asked.id, approve: true, remember: false, decidedBy: 'test' });
    await endOwnedSession(m, ended, 'completed');
    const shared = await createSharedSession(pool);
    const doneTask = await enqueueTask(pool, { sessionId: shared, kind: 'noop', input: {} });
    await finishTask(m, (await claimTask(m))!, { status: 'succeeded', result: null });
    // Still going: a running session with a pending approval, and a queued task.
    const running = await createOwnedSession(m, {}, undefined, 'p');
    const pending = await requestApproval(m, running, { principal: 'p', tool: 't', capability: 'c', summary: 's', preview: '{}', ttlMs: 60_000 });
    const queued = await enqueueTask(pool, { sessionId: shared, kind: 'noop', input: {} });
    const before = (await verifyControlPlaneChain(pool, ended.id)) as { ok: true; count: number };

    // Not old enough yet: nothing moves.
    assert.deepEqual(await archiveFinished(pool, { olderThanMs: 3_600_000 }), { sessions: 0, events: 0, tasks: 0, attempts: 0, approvals: 0 });
    const moved = await archiveFinished(pool, { olderThanMs: 0 });
    assert.deepEqual(moved, { sessions: 1, events: before.count, tasks: 1, attempts: 1, approvals: 1 });
    const count = async (sql: string, params: unknown[]) => (await pool.query<{ n: number }>(sql, params)).rows[0]!.n;
    assert.equal(await count('SELECT count(*)::int AS n FROM runtime_events WHERE session_id = $1', [ended.id]), 0);
    assert.equal(await count('SELECT count(*)::int AS n FROM runtime_events_archive WHERE session_id = $1', [ended.id]), before.count);
    assert.equal(await count('SELECT count(*)::int AS n FROM tasks WHERE id = $1', [doneTask]), 0);
    assert.equal(await count('SELECT count(*)::int AS n FROM tasks_archive WHERE id = $1', [doneTask]), 1);
    assert.equal(await count('SELECT count(*)::int AS n FROM approvals WHERE id = $1', [asked.id]), 0);
    // The archived chain verifies over both tables, the running one is untouched, and the queue still works.
    assert.deepEqual(await verifyControlPlaneChain(pool, ended.id), before);
    assert.equal((await verifyControlPlaneChain(pool, running.id)).ok, true);
    assert.equal(await count('SELECT count(*)::int AS n FROM approvals WHERE id = $1 AND status = $2', [pending.id, 'pending']), 1);
    assert.equal((await claimTask(m))!.id, queued);
    assert.deepEqual((await listSessions(pool, 'p')).map((x) => x.id).sort(), [ended.id, running.id].sort(), 'an archived session is still listed');
    // A second pass finds nothing more.
    assert.deepEqual(await archiveFinished(pool, { olderThanMs: 0 }), { sessions: 0, events: 0, tasks: 0, attempts: 0, approvals: 0 });
    // The operator's live feed keeps its newest OPERATOR_CHANGES_KEPT rows, the newest among them.
    await pool.query("INSERT INTO operator_changes (kind, ref, session_id, principal, status) SELECT 'session', 'flood', 'flood', 'p', 'running' FROM generate_series(1, $1::int)", [OPERATOR_CHANGES_KEPT + 10]);
    const newest = await count('SELECT max(seq)::int AS n FROM operator_changes', []);
    await archiveFinished(pool, { olderThanMs: 0 });
    assert.equal(await count('SELECT count(*)::int AS n FROM operator_changes', []), OPERATOR_CHANGES_KEPT);
    assert.equal(await count('SELECT max(seq)::int AS n FROM operator_changes', []), newest);
    // A member's sweep does it on its own, when asked to.
    const later = await createOwnedSession(m, {}, undefined, 'p');
    await endOwnedSession(m, later, 'completed');
    await join(pool, { reclaimEveryMs: 20, archiveEveryMs: 20, archiveAfterMs: 0 });
    for (let i = 0; i < 200 && (await count('SELECT count(*)::int AS n FROM runtime_events WHERE session_id = $1', [later.id])) > 0; i++) await sleep(25);
    assert.equal(await count('SELECT count(*)::int AS n FROM runtime_events WHERE session_id = $1', [later.id]), 0, 'the sweep archived the ended session');
  });

  it('stopTimers stops a member\'s heartbeat even when a renewal is in flight: nothing runs on its pool afterwards', async () => {
    const { url, pool } = await freshPlane();
    const own = await openPool(url);
    // The blocker sits in its transaction on purpose: no idle-in-transaction limit for it.
    const patient = await openPool(url, { idleInTransactionMs: 0 });
    pools.push(patient);
    const errors: unknown[] = [];
    const m = await join(own, { leaseMs: 8000, onError: (e) => errors.push(e) }); // a renewal every 1333 ms
    // Hold the member's row, so its next scheduled renewal waits on the lock: in flight.
    const blocker = await patient.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT id FROM members WHERE id = $1 FOR UPDATE', [m.id]);
      const waiting = async () => (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE members SET heartbeat_at%'")).rows[0]!.n;
      for (let i = 0; i < 100 && (await waiting()) === 0; i++) await sleep(50);
      assert.equal(await waiting(), 1, 'a renewal waits on the held row');
      m.stopTimers();
      await blocker.query('COMMIT');
    } finally {
      blocker.release();
    }
    await own.end(); // waits for the renewal in flight, which must not schedule another
    await sleep(2000);
    assert.deepEqual(errors.map((e) => (e as Error).message), [], 'no renewal ran after stopTimers');
  });
});
