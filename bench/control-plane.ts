// Benchmark — the PostgreSQL control plane (issue 21), on a throwaway cluster of Debian's server:
//   1. durable no-op effects per second (one commit holding an effect's two audit events, fenced
//      by the session's lease) with 1 and 3 members on one PostgreSQL, beside the SQLite store's
//      figure (appendEvents, one commit per effect) in the same run;
//   2. task claim latency p50/p99 with 3 members claiming at once (claim + finish loops);
//   3. reclaim time after SIGKILL of a member process mid-task, p50 over 10 (lease 2000 ms, sweep
//      every 100 ms): from the kill, and from the member's last heartbeat (server clock);
//   4. a run's chain copied to the control plane (decision 124): from a local commit to its copy
//      there, p50/p99, with events committed every 10 ms; and a burst of 2,000 committed at once,
//      shipped in batches of 200 (events per second);
//   5. a run's messages copied (decision 127): local commit -> copy with its search parts, p50/p99,
//      a message every 10 ms; a burst of 500 messages of ~4 KiB (messages per second); and
//      session_search over those copies on PostgreSQL beside the same queries on the host's SQLite
//      store, p50 per query (decision 128's one language on both).
// Members in 1 and 2 are in this process, each with its own pool (connections are what they share
// with separate processes; the chaos test covers separate processes).
//
//   npm run build && node dist/bench/control-plane.js [--quick] [--json]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ControlPlaneMember,
  answerApproval,
  appendAsOwner,
  ChainShipper,
  claimTask,
  ControlPlaneListener,
  createOwnedSession,
  createSharedSession,
  enqueueTask,
  finishTask,
  migrateControlPlane,
  openPool,
  requestApproval,
  searchCopiedMessages,
  type ControlPlanePool,
} from '../src/control-plane/index.js';
import { ownProcessIdentity } from '../src/process/index.js';
import { appendEvent, appendEvents, openStore, readEventRows, readStoredMessages, SessionSearch, SessionStore } from '../src/store/index.js';
import { startPgCluster } from '../test/helpers/pg-cluster.js';
import { progress } from './common.js';
import { summarize, round } from './stats.js';

const quick = process.argv.includes('--quick');
const json = process.argv.includes('--json');
const MEMBER = fileURLToPath(new URL('../test/helpers/control-plane-member.js', import.meta.url));
const EFFECT_SECONDS = quick ? 2 : 5;
const LOOPS_PER_MEMBER = 4;

const effectEvents = (i: number) => [
  { kind: 'effect.requested', payload: { i, tool: 'noop' } },
  { kind: 'effect.completed', payload: { i, ok: true } },
];

async function pgEffectsPerSecond(url: string, members: number): Promise<number> {
  const pools: ControlPlanePool[] = [];
  const joined: ControlPlaneMember[] = [];
  try {
    for (let m = 0; m < members; m++) {
      const pool = await openPool(url, { max: LOOPS_PER_MEMBER });
      pools.push(pool);
      joined.push(await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: `bench-${m}` }), { reclaimEveryMs: 0 }));
    }
    let done = 0;
    const until = performance.now() + EFFECT_SECONDS * 1000;
    const t0 = performance.now();
    await Promise.all(
      joined.flatMap((member) =>
        Array.from({ length: LOOPS_PER_MEMBER }, async () => {
          const lease = await createOwnedSession(member);
          while (performance.now() < until) await appendAsOwner(member, lease, effectEvents(done++));
        }),
      ),
    );
    return done / ((performance.now() - t0) / 1000);
  } finally {
    for (const m of joined) await m.leave().catch(() => {});
    for (const p of pools) await p.end().catch(() => {});
  }
}

function sqliteEffectsPerSecond(): number {
  const dir = mkdtempSync(join(tmpdir(), 'bench-cp-sqlite-'));
  try {
    const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
    const session = new SessionStore(db).createSession({ principal: 'bench' }, { coreDir: dir, coreRevision: 'r', runtime: 'local' });
    let done = 0;
    const until = performance.now() + EFFECT_SECONDS * 1000;
    const t0 = performance.now();
    while (performance.now() < until) appendEvents(db, session.id, effectEvents(done++));
    const rate = done / ((performance.now() - t0) / 1000);
    db.close();
    return rate;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function claimLatency(url: string): Promise<{ p50: number; p99: number; n: number }> {
  const setup = await openPool(url);
  const pools: ControlPlanePool[] = [setup];
  const joined: ControlPlaneMember[] = [];
  try {
    const session = await createSharedSession(setup);
    const tasks = quick ? 150 : 600;
    for (let i = 0; i < tasks; i++) await enqueueTask(setup, { sessionId: session, kind: 'noop', input: { i } });
    for (let m = 0; m < 3; m++) {
      const pool = await openPool(url);
      pools.push(pool);
      joined.push(await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: `claim-${m}` }), { reclaimEveryMs: 0 }));
    }
    const lat: number[] = [];
    await Promise.all(
      joined.map(async (m) => {
        for (;;) {
          const t0 = performance.now();
          const t = await claimTask(m);
          if (!t) return;
          lat.push(performance.now() - t0);
          await finishTask(m, t, { status: 'succeeded', result: null });
        }
      }),
    );
    const s = summarize(lat);
    return { p50: round(s.median), p99: round(s.p99), n: s.n };
  } finally {
    for (const m of joined) await m.leave().catch(() => {});
    for (const p of pools) await p.end().catch(() => {});
  }
}

/**
 * From an operator's answer committed on one connection to the asking member's waiter woken on
 * its listening connection (NOTIFY), with the listener's poll off so only the notice can wake it.
 */
async function approvalDelivery(url: string): Promise<{ p50: number; p99: number; n: number }> {
  const pool = await openPool(url);
  const asker = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'asker' }), { reclaimEveryMs: 0 });
  const listener = new ControlPlaneListener(url, { pollMs: 600_000 });
  const operator = await openPool(url);
  try {
    await listener.start();
    const lease = await createOwnedSession(asker, {}, undefined, 'bench');
    const lat: number[] = [];
    for (let i = 0; i < (quick ? 10 : 50); i++) {
      const row = await requestApproval(asker, lease, { principal: 'bench', tool: 'terminal', capability: 'terminal.exec', summary: `echo ${i}`, preview: '{}', ttlMs: 60_000 });
      const woken = listener.waitForChange(row.id, 30_000);
      const t0 = performance.now();
      await answerApproval(operator, 'bench', { id: row.id, approve: true, remember: false, decidedBy: 'bench' });
      await woken;
      lat.push(performance.now() - t0);
    }
    const s = summarize(lat);
    return { p50: round(s.median), p99: round(s.p99), n: s.n };
  } finally {
    await listener.close();
    await asker.leave().catch(() => {});
    await operator.end();
    await pool.end();
  }
}

async function reclaimTimes(url: string): Promise<{ fromKill: number[]; fromHeartbeat: number[] }> {
  const pool = await openPool(url);
  const sweeper = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'sweeper' }), { leaseMs: 2000, reclaimEveryMs: 100 });
  const fromKill: number[] = [];
  const fromHeartbeat: number[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'bench-cp-member-'));
  try {
    const session = await createSharedSession(pool);
    for (let round = 0; round < (quick ? 3 : 10); round++) {
      const task = await enqueueTask(pool, { sessionId: session, kind: 'work', input: { ms: 60_000 } });
      const child = spawn(process.execPath, [MEMBER, url, join(dir, `m${round}`), `victim-${round}`, '2000'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      child.stdout!.on('data', (b: Buffer) => (out += b.toString('utf8')));
      while (!out.includes(`"event":"tree"`)) await sleep(20);
      const treePid = Number(/"treePid":(\d+)/.exec(out)![1]);
      child.kill('SIGKILL');
      const killed = performance.now();
      await new Promise((r) => child.once('exit', r));
      for (;;) {
        const r = await pool.query<{ status: string; ms: number }>(
          `SELECT ta.status, (extract(epoch FROM (ta.ended_at - m.heartbeat_at)) * 1000)::float8 AS ms
             FROM task_attempts ta JOIN members m ON m.id = ta.member_id WHERE ta.task_id = $1 ORDER BY ta.attempt LIMIT 1`,
          [task],
        );
        if (r.rows[0]?.status === 'interrupted') {
          fromKill.push(performance.now() - killed);
          fromHeartbeat.push(r.rows[0].ms);
          break;
        }
        await sleep(20);
      }
      // The killed member's tree is its host's next supervisor start's to kill; here, ours.
      try {
        if (/(^|\/)sleep\0/.test(readFileSync(`/proc/${treePid}/cmdline`, 'latin1'))) process.kill(treePid, 'SIGKILL');
      } catch {
        /* gone */
      }
      // The task went back to the queue: take it out so the next victim gets the next one.
      await pool.query("UPDATE tasks SET status = 'failed', reason = 'bench' WHERE id = $1", [task]);
      progress(`reclaim round ${round + 1}: ${Math.round(fromKill.at(-1)!)} ms after SIGKILL`);
    }
    return { fromKill, fromHeartbeat };
  } finally {
    await sweeper.leave().catch(() => {});
    await pool.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * From a local commit to its copy on the control plane, per commit: `commit(i)` commits one row
 * (returning its seq) every 10 ms while a poller reads the newest copied seq every 5 ms.
 */
async function copyLag(copied: () => Promise<number>, commit: (i: number) => number): Promise<number[]> {
  const committedAt = new Map<number, number>();
  const lag: number[] = [];
  let polling = true;
  const poller = (async () => {
    let seen = 0;
    while (polling || seen < Math.max(...committedAt.keys())) {
      const top = await copied();
      const now = performance.now();
      for (let seq = seen + 1; seq <= top; seq++) if (committedAt.has(seq)) lag.push(now - committedAt.get(seq)!);
      seen = Math.max(seen, top);
      await sleep(5);
    }
  })();
  for (let i = 0; i < (quick ? 40 : 200); i++) {
    committedAt.set(commit(i), performance.now());
    await sleep(10);
  }
  polling = false;
  await poller;
  return lag;
}

/**
 * The copy's lag and rate: a local session's chain, its ChainShipper (the 250 ms interval a run
 * uses) to an owned session on the control plane, and a poller on the copy every 5 ms.
 */
async function anchorLag(url: string): Promise<{ p50: number; p99: number; n: number; burstPerSecond: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-anchor-'));
  const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
  const pool = await openPool(url);
  const member = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'anchor' }), { reclaimEveryMs: 0 });
  const local = new SessionStore(db).createSession({ principal: 'bench' }, { coreDir: '/bench', coreRevision: 'r', runtime: 'local' });
  const lease = await createOwnedSession(member, {}, `${local.id}@${member.id}`, 'bench');
  const shipper = new ChainShipper({ member, lease, localSession: local.id, read: (afterSeq, limit) => readEventRows(db, local.id, { afterSeq, limit }), onLost: (why) => progress(`anchor: ${why}`) });
  const copied = async (): Promise<number> =>
    (await pool.query<{ n: number | null }>("SELECT max((payload::jsonb->>'local_seq')::int) AS n FROM runtime_events WHERE session_id = $1", [lease.id])).rows[0]!.n ?? 0;
  try {
    shipper.start();
    const lag = await copyLag(copied, (i) => appendEvent(db, local.id, 'effect.completed', { i, ok: true }).seq);
    const burst = Array.from({ length: 2000 }, (_, i) => ({ kind: 'effect.completed', payload: { i, burst: true } }));
    const t0 = performance.now();
    const last = appendEvents(db, local.id, burst).at(-1)!.seq;
    while ((await copied()) < last) await sleep(5);
    const burstMs = performance.now() - t0;
    const s = summarize(lag);
    return { p50: round(s.median), p99: round(s.p99), n: s.n, burstPerSecond: Math.round((burst.length / burstMs) * 1000) };
  } finally {
    await shipper.stop();
    await member.leave().catch(() => {});
    await pool.end();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Words drawn for the messages and the queries: a vocabulary big enough that a word is rare. */
const VOCABULARY = Array.from({ length: 5000 }, (_, i) => `w${(i * 7919) % 100003}`);
const sentence = (seed: number, words: number): string => Array.from({ length: words }, (_, k) => VOCABULARY[(seed * 31 + k * 17) % VOCABULARY.length]).join(' ');

/**
 * A run's messages copied: a local session's messages (their message.added events anchored first),
 * its ChainShipper at 250 ms, a poller on the copies every 5 ms; then a burst; then the same
 * queries on both engines over the same messages.
 */
async function transcriptCopy(url: string): Promise<{ p50: number; p99: number; n: number; burstPerSecond: number; searchSqliteP50: number; searchPostgresP50: number; queries: number; messages: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-transcript-'));
  const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
  const pool = await openPool(url);
  const member = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'transcript' }), { reclaimEveryMs: 0 });
  const scope = { principal: 'bench' };
  const sessions = new SessionStore(db);
  const local = sessions.createSession(scope, { coreDir: '/bench', coreRevision: 'r', runtime: 'local' });
  const turn = sessions.addTurn(scope, local.id);
  const lease = await createOwnedSession(member, {}, `${local.id}@${member.id}`, 'bench');
  const shipper = new ChainShipper({
    member,
    lease,
    localSession: local.id,
    read: (afterSeq, limit) => readEventRows(db, local.id, { afterSeq, limit }),
    readMessages: (afterSeq, throughSeq, limit) => readStoredMessages(db, local.id, { afterSeq, throughSeq, limit }),
    onLost: (why) => progress(`transcript: ${why}`),
  });
  const copied = async (): Promise<number> => (await pool.query<{ n: number | null }>('SELECT max(seq) AS n FROM session_messages WHERE session_id = $1', [lease.id])).rows[0]!.n ?? 0;
  const say = (i: number, words: number) => sessions.addMessage(scope, local.id, { turnId: turn.id, role: 'assistant', content: { role: 'assistant', content: sentence(i, words) } });
  try {
    shipper.start();
    const lag = await copyLag(copied, (i) => say(i, 40).seq);
    const t0 = performance.now();
    let last = 0;
    for (let i = 0; i < 500; i++) last = say(1000 + i, 600).seq;
    while ((await copied()) < last) await sleep(5);
    const burstMs = performance.now() - t0;
    // The same queries, one at a time, on the host's store and on the copies.
    const queries = Array.from({ length: quick ? 20 : 100 }, (_, i) => (i % 2 === 0 ? VOCABULARY[(i * 131) % VOCABULARY.length]! : `"${sentence(i, 2)}"`));
    const timed = async (ask: (q: string) => unknown): Promise<number> => {
      const each: number[] = [];
      for (const q of queries) {
        const t = performance.now();
        await ask(q);
        each.push(performance.now() - t);
      }
      return round(summarize(each).median);
    };
    const here = new SessionSearch(db);
    const searchSqliteP50 = await timed((q) => here.search(scope, { query: q, limit: 10 }));
    const searchPostgresP50 = await timed((q) => searchCopiedMessages(pool, scope, { query: q, limit: 10 }));
    const s = summarize(lag);
    return { p50: round(s.median), p99: round(s.p99), n: s.n, burstPerSecond: Math.round((500 / burstMs) * 1000), searchSqliteP50, searchPostgresP50, queries: queries.length, messages: last };
  } finally {
    await shipper.stop();
    await member.leave().catch(() => {});
    await pool.end();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const cluster = await startPgCluster();
try {
  const url = await cluster.createDatabase('bench');
  const setup = await openPool(url);
  await migrateControlPlane(setup);
  await setup.end();
  progress('effects: SQLite');
  const sqlite = sqliteEffectsPerSecond();
  progress('effects: PostgreSQL, 1 member');
  const pg1 = await pgEffectsPerSecond(url, 1);
  progress('effects: PostgreSQL, 3 members');
  const pg3 = await pgEffectsPerSecond(url, 3);
  progress('claim latency, 3 members');
  const claims = await claimLatency(url);
  progress('approval delivery (answer committed -> waiter woken by NOTIFY)');
  const approvals = await approvalDelivery(url);
  progress('reclaim after SIGKILL');
  const reclaim = await reclaimTimes(url);
  progress("a run's chain copied (local commit -> its copy on the control plane)");
  const anchor = await anchorLag(url);
  progress("a run's messages copied, and session_search over the copies");
  const transcript = await transcriptCopy(url);
  const result = {
    effectsPerSecond: { sqlite: Math.round(sqlite), postgres1Member: Math.round(pg1), postgres3Members: Math.round(pg3), loopsPerMember: LOOPS_PER_MEMBER },
    claimLatencyMs: claims,
    approvalDeliveryMs: approvals,
    reclaimMs: {
      leaseMs: 2000,
      fromKillP50: round(summarize(reclaim.fromKill).median),
      fromHeartbeatP50: round(summarize(reclaim.fromHeartbeat).median),
      fromHeartbeatMax: round(summarize(reclaim.fromHeartbeat).max),
      n: reclaim.fromKill.length,
    },
    chainCopy: { intervalMs: 250, lagP50Ms: anchor.p50, lagP99Ms: anchor.p99, n: anchor.n, burstEventsPerSecond: anchor.burstPerSecond },
    transcriptCopy: {
      lagP50Ms: transcript.p50,
      lagP99Ms: transcript.p99,
      n: transcript.n,
      burstMessagesPerSecond: transcript.burstPerSecond,
      searchP50Ms: { sqlite: transcript.searchSqliteP50, postgres: transcript.searchPostgresP50, queries: transcript.queries, messages: transcript.messages },
    },
  };
  if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      [
        `durable no-op effects/s: SQLite ${result.effectsPerSecond.sqlite}; PostgreSQL 1 member ${result.effectsPerSecond.postgres1Member}, 3 members ${result.effectsPerSecond.postgres3Members} (${LOOPS_PER_MEMBER} sessions per member)`,
        `task claim latency, 3 members: p50 ${claims.p50} ms, p99 ${claims.p99} ms (n ${claims.n})`,
        `approval delivery, answer committed -> waiter woken (NOTIFY, poll off): p50 ${approvals.p50} ms, p99 ${approvals.p99} ms (n ${approvals.n})`,
        `reclaim after SIGKILL (lease 2000 ms): p50 ${result.reclaimMs.fromKillP50} ms from the kill, p50 ${result.reclaimMs.fromHeartbeatP50} ms (max ${result.reclaimMs.fromHeartbeatMax}) from the last heartbeat (n ${result.reclaimMs.n})`,
        `a run's chain copied (interval 250 ms): local commit -> copy p50 ${anchor.p50} ms, p99 ${anchor.p99} ms (n ${anchor.n}); a burst of 2,000 events copied at ${anchor.burstPerSecond}/s`,
        `a run's messages copied with their search parts: local commit -> copy p50 ${transcript.p50} ms, p99 ${transcript.p99} ms (n ${transcript.n}); a burst of 500 ~4 KiB messages at ${transcript.burstPerSecond}/s`,
        `session_search over ${transcript.messages} messages, p50 per query (n ${transcript.queries}): SQLite ${transcript.searchSqliteP50} ms, PostgreSQL copies ${transcript.searchPostgresP50} ms`,
      ].join('\n') + '\n',
    );
  }
} finally {
  await cluster.stop();
}
