// Operator commands across members on a real PostgreSQL (issue 21). `sessions --store` lists a
// run of another machine with its host and pid, `tasks --store` the work queued in it; `cancel
// --store` stops it there, its tree too. `audit verify --store` checks the run's chain copied to the
// control plane, and catches the host's chain rewritten (every hash recomputed) after the copy.
// Approvals: a `supervisor run --store` waits on
// the control plane and an operator answers with `supervisor approvals --store` from another
// process (another state dir: nothing local is shared); the answer arrives by NOTIFY, and after
// pg_terminate_backend on the run's listening connection the next answer still arrives (the
// listener reconnects and reads again). The listener itself: a notification wakes its waiter with
// polling off, a lost one is made up by the reconnect. Compare-and-swap: a second answer loses and
// is told who decided. Hostile: a wrong scheme, a refused connection: exit 2, nothing written.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { eventHash, genesisHash } from '../../src/store/event-chain.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ControlPlaneListener,
  ControlPlaneMember,
  LISTENER_APPLICATION_NAME,
  answerApproval,
  createOwnedSession,
  createSharedSession,
  enqueueTask,
  migrateControlPlane,
  openPool,
  requestApproval,
  requestSessionCancel,
  type ControlPlanePool,
} from '../../src/control-plane/index.js';
import { ownProcessIdentity } from '../../src/process/own-identity.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { runMain } from '../helpers/cli.js';
import { pidsWithCmdline, tempDir, waitFor, waitForAsync } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { script } from '../helpers/model-script.js';

const skip = pgUnavailableReason() ?? false;
const BIN = fileURLToPath(new URL('../../../bin/supervisor.js', import.meta.url));


/** Pending request ids on the control plane, as an operator on another machine lists them. */
async function pendingIds(url: string): Promise<string[]> {
  const r = await runMain('approvals', '--store', url, '--json');
  assert.equal(r.status, 0, r.stderr);
  return (JSON.parse(r.stdout) as { pending: { id: string }[] }).pending.map((p) => p.id);
}

/** `supervisor run` as another machine would start it: its output collected, its exit awaited. */
function startRun(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'run', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const seen = { out: '', err: '' };
  child.stdout.on('data', (b: Buffer) => (seen.out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (seen.err += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  /** Ends the run if a failed test left it going, and waits for it. */
  const reap = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  };
  return { child, seen, exited, reap };
}

describe('operator commands across members on the control plane', { skip, timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let url: string;
  const pools: ControlPlanePool[] = [];
  const dirs: { remove(): void }[] = [];
  const dir = (prefix: string): string => {
    const d = tempDir(prefix);
    dirs.push(d);
    return d.path;
  };
  before(async () => {
    cluster = await startPgCluster();
    url = await cluster.createDatabase('cp_approvals');
  });
  after(async () => {
    // Bounded, then the cluster goes: a failed test must be reported, not leave this waiting.
    for (const p of pools) await Promise.race([p.end().catch(() => undefined), new Promise((r) => setTimeout(r, 5000))]);
    await cluster?.stop();
    for (const d of dirs) d.remove();
    removeTempCores();
  });

  it('the listener: a NOTIFY wakes its waiter with polling off; after pg_terminate_backend it reconnects and a lost notice is made up', async () => {
    const pool = await openPool(url);
    pools.push(pool);
    await migrateControlPlane(pool);
    const member = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'listener-test' }), { reclaimEveryMs: 0 });
    const listener = new ControlPlaneListener(url, { pollMs: 600_000 });
    try {
      await listener.start();
      const lease = await createOwnedSession(member, {}, undefined, 'p');
      const ask = () => requestApproval(member, lease, { principal: 'p', tool: 'terminal', capability: 'terminal.exec', summary: 'echo hi', preview: '{}', ttlMs: 60_000 });

      const first = await ask();
      const woken = listener.waitForChange(first.id, 60_000);
      const answered = await answerApproval(pool, 'p', { id: first.id, approve: true, remember: false, decidedBy: 'test' });
      assert.equal(answered.answered, true);
      const t0 = Date.now();
      await woken;
      const byNotice = Date.now() - t0;
      assert.ok(byNotice < 30_000, 'woken by the notification, not by the 60 s timeout or the 600 s poll');

      // The listening connection is ended by the server; an answer given meanwhile notifies nobody.
      const second = await ask();
      const waiting = listener.waitForChange(second.id, 60_000);
      const killed = await pool.query<{ n: number }>('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1', [LISTENER_APPLICATION_NAME]);
      assert.equal(killed.rows[0]!.n, 1);
      await answerApproval(pool, 'p', { id: second.id, approve: false, remember: false, decidedBy: 'test' });
      const t1 = Date.now();
      await waiting;
      const byReconnect = Date.now() - t1;
      assert.ok(byReconnect < 30_000, 'woken by the reconnect (or a notice on the new connection)');
      console.log(`control plane: answer -> waiter woken: ${byNotice} ms by NOTIFY; ${byReconnect} ms with the listener's connection terminated first`);
      await waitFor('the listener to reconnect', () => listener.connects >= 2, 10_000);

      // Compare-and-swap: the second answer loses and is told who decided.
      const lost = await answerApproval(pool, 'p', { id: second.id, approve: true, remember: false, decidedBy: 'late' });
      assert.equal(lost.answered, false);
      assert.equal(lost.record?.status, 'denied');
      assert.equal(lost.record?.decidedBy, 'test');
      // Another principal's request reads as missing.
      const foreign = await answerApproval(pool, 'q', { id: first.id, approve: true, remember: false, decidedBy: 'q' });
      assert.equal(foreign.record, undefined);
      // An answer bound to what the operator was shown (--expect) lands only on that request: a
      // mismatch answers nothing, and the request still waits; another principal cannot cancel it.
      const third = await ask();
      const wrong = await answerApproval(pool, 'p', { id: third.id, approve: true, remember: false, decidedBy: 'test', matches: () => false });
      assert.deepEqual([wrong.answered, wrong.mismatch, wrong.record?.status], [false, true, 'pending']);
      assert.equal((await pool.query<{ status: string }>('SELECT status FROM approvals WHERE id = $1', [third.id])).rows[0]!.status, 'pending');
      assert.equal(await requestSessionCancel(pool, 'q', lease.id, 'q'), 'missing', 'a session of p reads as missing to q');
      assert.equal((await pool.query<{ c: Date | null }>('SELECT cancel_requested_at AS c FROM sessions WHERE id = $1', [lease.id])).rows[0]!.c, null, 'and nothing was flagged');
      assert.equal(await requestSessionCancel(pool, 'p', lease.id, 'p'), 'requested', 'the control: its own principal can');
    } finally {
      await listener.close();
      await member.leave();
    }
  });

  it('a run on one machine waits for approvals; an operator on another answers both, with the run\'s listener killed between them', async () => {
    const core = makeCore({
      'agent.yaml': 'name: asker\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': script({ tools: [{ name: 'terminal', arguments: { command: 'echo first-ran' } }] }, { tools: [{ name: 'terminal', arguments: { command: 'echo second-ran' } }] }, { text: 'done' }),
    });
    const hostA = dir('cp-host-a-');
    const run = startRun([core, '--json', '--store', url, '--await-approval', '90', '--state-dir', hostA]);
    try {
      const first = await waitForAsync('the first request on the control plane', async () => (await pendingIds(url))[0], 30_000);
      const yes = await runMain('approvals', 'approve', first, '--store', url);
      assert.equal(yes.status, 0, yes.stderr);
      assert.match(yes.stdout, new RegExp(`^${first} approved: terminal echo first-ran`));
      // Nothing of the operator's side is local: a second answer from "another machine" loses.
      const again = await runMain('approvals', 'deny', first, '--store', url);
      assert.equal(again.status, 2);
      assert.match(again.stderr, /it was approved already by supervisor approvals on /);

      const second = await waitForAsync('the second request', async () => (await pendingIds(url)).find((id) => id !== first), 30_000);
      const pool = await openPool(url);
      pools.push(pool);
      const killed = await pool.query<{ n: number }>('SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1', [LISTENER_APPLICATION_NAME]);
      assert.equal(killed.rows[0]!.n, 1, 'the run\'s listening connection was ended');
      assert.equal((await runMain('approvals', 'approve', second, '--store', url)).status, 0);
      assert.equal(await run.exited, 0, run.seen.err);
    } finally {
      await run.reap();
    }
    const lines = run.seen.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const results = lines.filter((l) => l.type === 'tool_result');
    assert.equal(results.length, 2);
    for (const r of results) {
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.view.approval.source, 'operator');
      assert.match(r.view.approval.reason, /approved by the operator \(supervisor approvals on .* \(pid \d+\)\) \(supervisor approvals ap_[0-9a-f]+ on the control plane\)/);
    }
    assert.equal(lines.at(-1)!.outcome, 'completed');
    // The run left: its control-plane session ended, its membership too.
    const pool = pools.at(-1)!;
    const sessions = await pool.query<{ status: string }>("SELECT status FROM sessions WHERE id LIKE '%@%'");
    assert.deepEqual(sessions.rows.map((r) => r.status), ['ended']);

    // Its audit chain is anchored there: every local event, its end included, copied in order
    // with its local seq and hash, and verified from any member.
    const localSession = lines[0]!.session as string;
    const audit = async (stateDir: string) => {
      const r = await runMain('audit', 'verify', '--store', url, '--session', localSession, '--state-dir', stateDir, '--json');
      return { status: r.status, stderr: r.stderr, out: r.stdout ? (JSON.parse(r.stdout) as { ok: boolean; differing: number; sessions: { ok: boolean; anchors: { where: string; anchors: number; matched: number; differsAt: number | null } }[] }) : null };
    };
    const local = new SqliteDatabase(join(hostA, 'supervisor.db'));
    const localEvents = local.prepare('SELECT seq, kind, at, payload, hash FROM runtime_events WHERE session_id = ? ORDER BY seq').all(localSession) as { seq: number; kind: string; at: number; payload: string; hash: string }[];
    assert.equal(localEvents.at(-1)!.kind, 'session.ended');
    const here = await audit(hostA);
    assert.equal(here.status, 0, here.stderr);
    assert.equal(here.out!.sessions.length, 1);
    assert.deepEqual(here.out!.sessions[0]!.anchors, { where: 'here', localSession, anchors: localEvents.length, matched: localEvents.length, differsAt: null });
    const elsewhere = await audit(dir('cp-other-host-'));
    assert.equal(elsewhere.status, 0, elsewhere.stderr);
    assert.equal(elsewhere.out!.sessions[0]!.anchors.where, 'elsewhere', 'another machine verifies the copy, and says it cannot compare');

    // Someone with the host cuts the chain's end (the run's end and what came before it) and sets
    // the head to the new last event: the local check passes, the copy catches the cut; then the
    // rows are put back as they were.
    const cut = localEvents.slice(-2);
    const keep = localEvents.at(-3)!;
    local.transaction(() => {
      local.prepare('DELETE FROM runtime_events WHERE session_id = ? AND seq >= ?').run(localSession, cut[0]!.seq);
      local.prepare('UPDATE chain_heads SET seq = ?, hash = ? WHERE session_id = ?').run(keep.seq, keep.hash, localSession);
    })();
    assert.equal((await runMain('audit', 'verify', '--session', localSession, '--state-dir', hostA)).status, 0, 'the cut is consistent: the local chain alone cannot tell');
    const truncated = await audit(hostA);
    assert.equal(truncated.status, 1);
    assert.equal(truncated.out!.sessions[0]!.anchors.differsAt, cut[0]!.seq, 'the first cut event is named');
    local.transaction(() => {
      for (const e of cut) {
        const prevHash = e.seq === 1 ? genesisHash(localSession) : localEvents[e.seq - 2]!.hash;
        local.prepare('INSERT INTO runtime_events (session_id, seq, kind, at, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)').run(localSession, e.seq, e.kind, e.at, e.payload, prevHash, e.hash);
      }
      local.prepare('UPDATE chain_heads SET seq = ?, hash = ? WHERE session_id = ?').run(cut.at(-1)!.seq, cut.at(-1)!.hash, localSession);
    })();
    assert.equal((await audit(hostA)).status, 0, 'put back, the chain matches its copy again');

    // Someone with the host rewrites its chain consistently (every hash and the head recomputed):
    // the local check passes, the copy on the control plane catches it.
    const victim = localEvents.find((e) => e.payload.includes('second-ran'))!;
    let prev = victim.seq === 1 ? genesisHash(localSession) : localEvents[victim.seq - 2]!.hash;
    const rewrite = local.transaction(() => {
      for (const e of localEvents.filter((x) => x.seq >= victim.seq)) {
        const payload = e.seq === victim.seq ? e.payload.replaceAll('second-ran', 'nothing-ran') : e.payload;
        const hash = eventHash(prev, localSession, e.seq, e.kind, e.at, payload);
        local.prepare('UPDATE runtime_events SET payload = ?, prev_hash = ?, hash = ? WHERE session_id = ? AND seq = ?').run(payload, prev, hash, localSession, e.seq);
        prev = hash;
      }
      local.prepare('UPDATE chain_heads SET hash = ? WHERE session_id = ?').run(prev, localSession);
    });
    rewrite();
    local.close();
    const localCheck = await runMain('audit', 'verify', '--session', localSession, '--state-dir', hostA);
    assert.equal(localCheck.status, 0, 'the rewrite is consistent: the local chain alone cannot tell');
    const caught = await audit(hostA);
    assert.equal(caught.status, 1);
    assert.equal(caught.out!.differing, 1);
    assert.equal(caught.out!.sessions[0]!.anchors.differsAt, victim.seq);
  });

  it('sessions --store lists a run of another member with its host and pid; tasks --store its queued work, not another principal\'s; cancel --store stops it there, tree and all', async () => {
    const marker = `sleep ${30 + Math.floor(Math.random() * 1000) / 1000}`;
    const core = makeCore({
      'agent.yaml': 'name: sleeper\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': script({ tools: [{ name: 'terminal', arguments: { command: marker, timeout: 60 } }] }, { text: 'done' }),
    });
    const run = startRun([core, '--json', '--store', url, '--approve', 'terminal', '--state-dir', dir('cp-sleeper-')]);
    try {
      await waitFor('the sleep to start', () => pidsWithCmdline(marker).length > 0, 30_000);
      const listed = await runMain('sessions', '--store', url, '--json');
      assert.equal(listed.status, 0, listed.stderr);
      const rows = (JSON.parse(listed.stdout) as { sessions: { id: string; status: string; pid: number; host: string; created: { core: string } }[] }).sessions;
      const mine = rows.find((r) => r.status === 'running' && r.pid === run.child.pid);
      assert.ok(mine, `the run (pid ${run.child.pid}) is listed: ${listed.stdout}`);
      assert.equal(mine.created.core, core);

      // Work queued in that session on the control plane is listed from any member, with its
      // state there; a task of another principal's session is not.
      const pool = await openPool(url);
      pools.push(pool);
      const queued = await enqueueTask(pool, { sessionId: mine.id, kind: 'index', input: { path: 'src' } });
      const foreignSession = await createSharedSession(pool, {});
      await pool.query("UPDATE sessions SET principal = 'someone-else' WHERE id = $1", [foreignSession]);
      const foreign = await enqueueTask(pool, { sessionId: foreignSession, kind: 'index', input: {} });
      const tasks = await runMain('tasks', '--store', url, '--json');
      assert.equal(tasks.status, 0, tasks.stderr);
      const listedTasks = (JSON.parse(tasks.stdout) as { tasks: { id: string; status: string; sessionId: string; host: string | null; attempts: number }[] }).tasks;
      assert.deepEqual(listedTasks.map((t) => [t.id, t.status, t.sessionId, t.host, t.attempts]), [[queued, 'queued', mine.id, null, 0]]);
      assert.ok(!tasks.stdout.includes(foreign), "another principal's task is not listed");
      const bySession = await runMain('tasks', '--store', url, '--session', mine.id.split('@')[0]!);
      assert.match(bySession.stdout, new RegExp(`^${queued}  queued .* index  not claimed  attempt 0, rescued 0 of 3  ${mine.id}\n$`));

      const cancelled = await runMain('cancel', mine.id, '--store', url, '--wait', '20', '--json');
      assert.equal(cancelled.status, 0, cancelled.stderr);
      assert.deepEqual(JSON.parse(cancelled.stdout), { id: mine.id, cancel: 'requested', status: 'ended' });
      assert.equal(await run.exited, 130);
      assert.match(run.seen.err, /cancelled from the control plane by supervisor cancel on .* \(pid \d+\)/);
      assert.deepEqual(pidsWithCmdline(marker), [], 'the run\'s tree went with it');
      const again = await runMain('cancel', mine.id, '--store', url, '--json');
      assert.deepEqual(JSON.parse(again.stdout), { id: mine.id, cancel: 'ended', status: 'ended' });
      const missing = await runMain('cancel', 'se_nope@x', '--store', url);
      assert.equal(missing.status, 2);
      assert.match(missing.stderr, /no session or task se_nope@x of yours on the control plane/);
    } finally {
      await run.reap();
    }
  });

  it("a run's background task is listed from any member with what it runs and where; cancel --store stops its tree there and the run goes on", async () => {
    const marker = `sleep ${300 + Math.floor(Math.random() * 1000) / 1000}`;
    const core = makeCore({
      'agent.yaml': 'name: tasker\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': script({ tools: [{ name: 'terminal', arguments: { command: marker, background: true } }] }, { tools: [{ name: 'yield_until', arguments: { timeout_seconds: 110 } }] }, { text: 'done' }),
    });
    const hostDir = dir('cp-tasker-');
    const run = startRun([core, '--json', '--store', url, '--approve', 'terminal', '--state-dir', hostDir]);
    try {
      await waitFor('the task to start', () => pidsWithCmdline(marker).length > 0, 30_000);
      type Listed = { id: string; status: string; kind: string; summary: string | null; host: string | null; pid: number | null; reason: string | null };
      const listed = await waitForAsync('the task on the control plane', async () => {
        const r = await runMain('tasks', '--store', url, '--json');
        return (JSON.parse(r.stdout) as { tasks: Listed[] }).tasks.find((t) => t.summary?.includes(marker) && t.status === 'running');
      }, 30_000);
      assert.equal(listed.pid, run.child.pid, 'held by the run that runs it');

      const cancelled = await runMain('cancel', listed.id, '--store', url, '--wait', '20', '--json');
      assert.equal(cancelled.status, 0, cancelled.stderr);
      assert.deepEqual(JSON.parse(cancelled.stdout), { id: listed.id, task: true, cancel: 'requested', status: 'failed' });
      assert.deepEqual(pidsWithCmdline(marker), [], 'its tree was stopped on its host');
      assert.equal(await run.exited, 0, `the run went on and ended: ${run.seen.err}`);
      const local = await runMain('tasks', '--state-dir', hostDir, '--json');
      assert.deepEqual((JSON.parse(local.stdout) as { tasks: { id: string; status: string }[] }).tasks.map((t) => [t.id, t.status]), [[listed.id, 'cancelled']], 'the run cancelled it in its own store');
      const after = (JSON.parse((await runMain('tasks', '--store', url, '--json')).stdout) as { tasks: Listed[] }).tasks.find((t) => t.id === listed.id)!;
      assert.match(after.reason ?? '', /^cancelled/);
      const again = await runMain('cancel', listed.id, '--store', url, '--json');
      assert.deepEqual(JSON.parse(again.stdout), { id: listed.id, task: true, cancel: 'ended', status: 'failed' });
    } finally {
      await run.reap();
    }
  });

  it('the server goes away while a run waits for an approval: the run ends, saying why, nothing approved, its local session closed', async () => {
    const own = await startPgCluster();
    let stopped = false;
    try {
      const ownUrl = await own.createDatabase('cp_goes_away');
      const core = makeCore({
        'agent.yaml': 'name: asker\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
        'script.yaml': script({ tools: [{ name: 'terminal', arguments: { command: 'echo must-not-run' } }] }, { text: 'done' }),
      });
      const hostA = dir('cp-gone-');
      const run = startRun([core, '--json', '--store', ownUrl, '--await-approval', '90', '--state-dir', hostA]);
      try {
        await waitForAsync('the request on the control plane', async () => (await pendingIds(ownUrl))[0], 30_000);
        await own.stop();
        stopped = true;
        const code = await Promise.race([run.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 30_000))]);
        assert.notEqual(code, 'hung', `the run did not end after its control plane went away: ${run.seen.err}`);
        assert.equal(code, 3, 'a control plane gone is a failed dependency (exit 3)');
      } finally {
        await run.reap();
      }
      assert.doesNotMatch(run.seen.err, /\n\s+at |internal error/, 'no stack, no internal error');
      assert.match(run.seen.err, /supervisor run: this run lost the control plane \(the control plane could not carry an approval request \(connect ECONNREFUSED/);
      const results = run.seen.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.type === 'tool_result');
      assert.deepEqual(results.map((r) => [r.ok, r.code]), [[false, 'APPROVAL_DENIED']], 'nothing was approved, so nothing ran');
      const sessions = await runMain('sessions', '--state-dir', hostA, '--json');
      assert.equal(sessions.status, 0, sessions.stderr);
      const listed = JSON.parse(sessions.stdout) as { sessions: { status: string }[] };
      assert.equal(listed.sessions.length, 1);
      assert.notEqual(listed.sessions[0]!.status, 'running', 'the local session was closed');
    } finally {
      if (!stopped) await own.stop();
    }
  });

  it('a wrong scheme or a server that refuses: exit 2 naming the fix, no session started, no password shown', async () => {
    const state = dir('cp-hostile-');
    const core = makeCore({ 'agent.yaml': 'name: asker\n' });
    const scheme = await runMain('run', core, '--store', 'mysql://root:hunter2@db/x', '--state-dir', state);
    assert.equal(scheme.status, 2);
    assert.match(scheme.stderr, /--store takes a PostgreSQL URL, postgres:\/\/user@host:5432\/database .*got scheme mysql:/);
    // A command that acts on this machine only refuses --store, saying where to look instead.
    const ps = await runMain('ps', '--store', 'postgres://db/x');
    assert.equal(ps.status, 2);
    assert.match(ps.stderr, /ps does not take --store: process trees stay on the machine that runs them: run supervisor ps there/);
    const refused = await runMain('run', core, '--store', 'postgres://someone:hunter2@127.0.0.1:1/x', '--state-dir', state);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--store: cannot reach the control plane at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/);
    assert.doesNotMatch(scheme.stderr + refused.stderr, /hunter2|\n\s+at /, 'no password, no stack');
    assert.equal(existsSync(join(state, 'supervisor.db')), false, 'nothing was started locally');
    const env = { ...process.env };
    try {
      process.env.SUPERVISOR_STORE_URL = 'sqlite:/tmp/x';
      const fromEnv = await runMain('approvals');
      assert.equal(fromEnv.status, 2);
      assert.match(fromEnv.stderr, /SUPERVISOR_STORE_URL takes a PostgreSQL URL/);
      // A command that does not take --store says that the variable does not reach it.
      const local = await runMain('ps', '--state-dir', state);
      assert.match(local.stderr, /^supervisor ps: note: SUPERVISOR_STORE_URL is set, but ps reads this machine's store \(process trees stay on the machine that runs them: run supervisor ps there .*\); --store is for run, sessions, tasks, logs, approvals, cancel, audit verify, web and doctor\n/);
    } finally {
      process.env = env;
    }
  });
});
