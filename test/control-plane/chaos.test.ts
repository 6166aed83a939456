// Chaos on one real cluster with real member processes (issue 21): three members with separate
// state dirs run claimed work; one is SIGKILLed mid-task and its work is reclaimed within 10 s of
// its last heartbeat, marked interrupted with an audit event; one is SIGSTOPped past its lease and
// cannot write when it wakes (it fences itself, and its stale epoch is refused by the database);
// a poison task that kills every runner fails after its rescues; nothing completes twice; every
// chain verifies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  OwnershipLostError,
  controlPlaneSessionIds,
  createSharedSession,
  enqueueTask,
  fencedUpdate,
  inTransaction,
  migrateControlPlane,
  openPool,
  verifyControlPlaneChain,
  type ControlPlanePool,
} from '../../src/control-plane/index.js';
import { ProcessSupervisor } from '../../src/process/index.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { alive } from '../helpers/procs.js';

const skip = pgUnavailableReason() ?? false;
const MEMBER = fileURLToPath(new URL('../helpers/control-plane-member.js', import.meta.url));
// Half a lease without a renewal fences a member: 3 s leases fenced a member on a machine busy with
// four test files and a compile (a renewal starved for 1.5 s), before the test had stopped anyone.
// 5 s keeps the reclaim well inside the 10 s bound (lease + one sweep) with room for such load.
const LEASE_MS = 5000;

interface Line {
  event: string;
  name: string;
  pid: number;
  [k: string]: unknown;
}

class MemberProcess {
  readonly lines: Line[] = [];
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  private waiters: (() => void)[] = [];
  constructor(readonly name: string, url: string, stateDir: string) {
    this.child = spawn(process.execPath, [MEMBER, url, stateDir, name, String(LEASE_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buf = '';
    this.child.stdout!.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        this.lines.push(JSON.parse(buf.slice(0, i)) as Line);
        buf = buf.slice(i + 1);
        for (const w of this.waiters.splice(0)) w();
      }
    });
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
  }
  get pid(): number {
    return this.child.pid!;
  }
  /** The first line (after `from` lines) matching; waits up to `ms`. */
  async next(pred: (l: Line) => boolean, ms = 15_000, from = 0): Promise<Line> {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = this.lines.slice(from).find(pred);
      if (hit) return hit;
      if (Date.now() > deadline) throw new Error(`${this.name}: no matching line in ${ms} ms; saw ${JSON.stringify(this.lines.slice(-5))}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
  }
}

describe('control plane chaos: three member processes on one cluster', { skip, timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let pool: ControlPlanePool;
  let url: string;
  const procs: MemberProcess[] = [];
  const dirs: string[] = [];
  const stateDirs = new Map<MemberProcess, string>();

  before(async () => {
    cluster = await startPgCluster();
    url = await cluster.createDatabase('chaos');
    pool = await openPool(url, { max: 4 });
    await migrateControlPlane(pool);
  });
  after(async () => {
    for (const p of procs) {
      if (p.child.exitCode === null && p.child.signalCode === null) {
        p.child.kill('SIGCONT');
        p.child.kill('SIGKILL');
        await p.exited;
      }
      // Trees of a SIGKILLed member are the next supervisor start's job on that host; here, ours.
      for (const l of p.lines) {
        const pid = l.treePid as number | undefined;
        if (pid && alive(pid) && /(^|\/)sleep\0/.test(readFileSync(`/proc/${pid}/cmdline`, 'latin1'))) process.kill(pid, 'SIGKILL');
      }
    }
    await pool?.end();
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /**
   * SIGSTOPs `p` while it holds a running task: waits for a tree line, freezes the process, and
   * keeps it frozen only if the task's attempt is still running in the database (a task that
   * finished just before the stop does not count: it is resumed and the next one is tried).
   */
  async function freezeMidTask(p: MemberProcess, memberId: string): Promise<Line> {
    let from = p.lines.length;
    for (;;) {
      const tree = await p.next((l) => l.event === 'tree', 15_000, from);
      from = p.lines.indexOf(tree) + 1;
      p.child.kill('SIGSTOP');
      await sleep(100); // a write sent just before the stop lands meanwhile
      const r = await pool.query<{ status: string }>('SELECT status FROM task_attempts WHERE task_id = $1 AND member_id = $2', [tree.task, memberId]);
      if (r.rows[0]?.status === 'running') return tree;
      p.child.kill('SIGCONT');
    }
  }

  function start(name: string): MemberProcess {
    const dir = mkdtempSync(join(tmpdir(), `cp-member-${name}-`));
    dirs.push(dir);
    const p = new MemberProcess(name, url, join(dir, 'state'));
    stateDirs.set(p, join(dir, 'state'));
    procs.push(p);
    return p;
  }

  it('reclaims a killed member within 10 s, fences a paused one, stops a poison task after its rescues, and completes nothing twice', async () => {
    const queue = await createSharedSession(pool, { purpose: 'chaos' });
    const work: string[] = [];
    for (let i = 0; i < 18; i++) work.push(await enqueueTask(pool, { sessionId: queue, kind: 'work', input: { ms: 250 }, maxRescues: 3 }));
    const [a, b, c] = [start('a'), start('b'), start('c')];
    const joined = await Promise.all([a, b, c].map((p) => p.next((l) => l.event === 'joined')));
    const memberId = (p: MemberProcess) => joined[[a, b, c].indexOf(p)]!.member as string;

    // 1. SIGKILL a mid-task.
    const aTask = await freezeMidTask(a, memberId(a));
    a.child.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    let reclaimed: { attempt_status: string; ms: number; member_status: string } | undefined;
    while (Date.now() - killedAt < 15_000) {
      reclaimed = (
        await pool.query<{ attempt_status: string; ms: number; member_status: string }>(
          `SELECT ta.status AS attempt_status, m.status AS member_status, (extract(epoch FROM (ta.ended_at - m.heartbeat_at)) * 1000)::float8 AS ms
             FROM task_attempts ta JOIN members m ON m.id = ta.member_id WHERE ta.task_id = $1 AND ta.member_id = $2`,
          [aTask.task, memberId(a)],
        )
      ).rows[0];
      if (reclaimed?.attempt_status === 'interrupted') break;
      await sleep(100);
    }
    assert.equal(reclaimed?.attempt_status, 'interrupted', 'the killed member’s attempt was marked interrupted');
    assert.equal(reclaimed?.member_status, 'dead');
    assert.ok(reclaimed!.ms < 10_000, `reclaimed ${Math.round(reclaimed!.ms)} ms after its last heartbeat`);
    console.log(`# SIGKILLed member reclaimed ${Math.round(reclaimed!.ms)} ms after its last heartbeat (lease ${LEASE_MS} ms)`);
    const aSession = joined[0]!.session as string;
    const aEvents = (await pool.query<{ kind: string }>('SELECT kind FROM runtime_events WHERE session_id = $1 ORDER BY seq', [aSession])).rows.map((r) => r.kind);
    assert.equal(aEvents.at(-1), 'session.interrupted', 'its own session was interrupted with an audit event');
    // Its tree is left to its host's next supervisor start, as on one machine today: that start
    // (on a's state dir) finds the spawn record and kills the tree. No other member signalled it.
    assert.equal(alive(aTask.treePid as number), true, 'no other member signals the dead member’s tree');
    const next = ProcessSupervisor.open({ stateDir: stateDirs.get(a)! });
    try {
      assert.equal(next.lastReconcile?.interrupted.length, 1, JSON.stringify(next.lastReconcile));
      assert.equal(alive(aTask.treePid as number), false, 'the next start on that host killed the tree');
    } finally {
      await next.close();
    }
    const interruptedEvent = await pool.query("SELECT 1 FROM runtime_events WHERE session_id = $1 AND kind = 'task.interrupted' AND payload LIKE $2", [queue, `%${aTask.task as string}%`]);
    assert.equal(interruptedEvent.rowCount, 1, 'task.interrupted was appended to the task’s session chain');

    // 2. SIGSTOP b mid-task past its lease; when it wakes it must not write. (The first batch may
    // be done by now: queue longer work so b is surely holding a task when it stops.)
    const bFrom = b.lines.length;
    for (let i = 0; i < 6; i++) work.push(await enqueueTask(pool, { sessionId: queue, kind: 'work', input: { ms: 1500 }, maxRescues: 3 }));
    const bTree = await freezeMidTask(b, memberId(b));
    const bClaim = b.lines.find((l) => l.event === 'claimed' && l.task === bTree.task)!;
    const stoppedAt = Date.now();
    while (Date.now() - stoppedAt < 15_000) {
      const s = (await pool.query<{ status: string }>('SELECT status FROM members WHERE id = $1', [memberId(b)])).rows[0];
      if (s?.status === 'dead') break;
      await sleep(100);
    }
    assert.equal((await pool.query<{ status: string }>('SELECT status FROM members WHERE id = $1', [memberId(b)])).rows[0]!.status, 'dead');
    // Its lease, straight at the database: the epoch moved on, so nothing is written.
    await assert.rejects(
      inTransaction(pool, (cl) => fencedUpdate(cl, { table: 'tasks', id: bClaim.task as string, epoch: bClaim.epoch as number, memberId: memberId(b) }, "status = 'succeeded'")),
      OwnershipLostError,
    );
    b.child.kill('SIGCONT');
    const bCode = await b.exited;
    assert.equal(bCode, 3, 'the woken member fenced itself and exited');
    assert.ok(b.lines.some((l) => l.event === 'fenced'));
    assert.ok(!b.lines.slice(bFrom).some((l) => l.event === 'finished' && l.task === bTree.task), 'the woken member did not finish the task it held');
    const late = await pool.query(
      "SELECT ta.task_id FROM task_attempts ta JOIN members m ON m.id = ta.member_id WHERE ta.member_id = $1 AND ta.status = 'succeeded' AND ta.ended_at > m.ended_at",
      [memberId(b)],
    );
    assert.equal(late.rowCount, 0, 'nothing the woken member did landed after it was declared dead');
    assert.equal(alive(bTree.treePid as number), false, 'the fenced member killed its own tree');

    // 3. Fresh members, then a poison task that kills every runner: it fails after 1 rescue.
    const [d, e] = [start('d'), start('e')];
    await Promise.all([d, e].map((p) => p.next((l) => l.event === 'joined')));
    const poison = await enqueueTask(pool, { sessionId: queue, kind: 'poison', input: {}, maxRescues: 1 });
    const poisonDeadline = Date.now() + 40_000;
    let poisonRow: { status: string; rescues: number; reason: string | null } | undefined;
    while (Date.now() < poisonDeadline) {
      poisonRow = (await pool.query<{ status: string; rescues: number; reason: string | null }>('SELECT status, rescues, reason FROM tasks WHERE id = $1', [poison])).rows[0];
      if (poisonRow?.status === 'failed') break;
      await sleep(200);
    }
    assert.equal(poisonRow?.status, 'failed');
    assert.equal(poisonRow?.rescues, 2);
    assert.match(poisonRow!.reason!, /lost 2 time\(s\), more than max_rescues 1/);
    const killedByPoison = [c, d, e].filter((p) => p.child.signalCode === 'SIGKILL');
    assert.equal(killedByPoison.length, 2, 'the poison task killed exactly two runners, then nobody ran it again');

    // 4. The survivor finishes the rest; every work task succeeded exactly once.
    const waitAll = Date.now() + 40_000;
    for (;;) {
      const left = await pool.query("SELECT 1 FROM tasks WHERE kind = 'work' AND status <> 'succeeded'");
      if (!left.rowCount) break;
      if (Date.now() > waitAll) assert.fail(`${left.rowCount} work task(s) never finished`);
      await sleep(200);
    }
    const succeeded = await pool.query<{ task_id: string; n: number }>("SELECT task_id, count(*)::int AS n FROM task_attempts WHERE status = 'succeeded' GROUP BY task_id");
    assert.equal(succeeded.rowCount, work.length);
    assert.ok(succeeded.rows.every((r) => r.n === 1), 'no task completed twice');
    // No surviving member ever wrote under a stale epoch.
    for (const p of procs) assert.ok(!p.lines.some((l) => l.event === 'ownership_lost'), `${p.name} met no lost ownership`);

    const survivors = procs.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
    assert.equal(survivors.length, 1);
    survivors[0]!.child.kill('SIGTERM');
    assert.equal(await survivors[0]!.exited, 0);
    for (const id of await controlPlaneSessionIds(pool)) {
      const v = await verifyControlPlaneChain(pool, id);
      assert.ok(v.ok, JSON.stringify(v));
    }
  });
});
