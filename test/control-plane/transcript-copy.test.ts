// A run's transcript and its tasks' logs on a real PostgreSQL control plane (issue 21, decision 127).
// A `supervisor run --store` on one "machine" (its own state dir) runs a background task; an
// operator on another reads the task's log with `logs --store --follow` while it runs, and after
// the run every message and log chunk on the control plane equals the host's own, byte for byte.
// `audit verify --store` checks each copied message against the content hash its chain event
// recorded. The attacker's side: someone with write access to the control plane's tables (or a
// host that ships a doctored copy) edits a message, forges one, or swaps its id: verify names the
// seq and exits 1. Another principal reads nothing; a writer whose lease moved, or that names a
// task of another session, writes nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import SqliteDatabase from 'better-sqlite3';
import { canonicalJson } from '../../src/store/canonical-json.js';
import { eventHash, genesisHash } from '../../src/store/event-chain.js';
import { ControlPlaneMember, OwnershipLostError, resumableCopy, copyTaskLogs, createOwnedSession, holdRunTask, openPool, readCopiedMessages, readCopiedTaskLogs, type ControlPlanePool } from '../../src/control-plane/index.js';
import { ownProcessIdentity } from '../../src/process/own-identity.js';
import { localPrincipal } from '../../src/cli/principal.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { runMain } from '../helpers/cli.js';
import { pidsWithCmdline, tempDirs, waitFor, waitForAsync } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { script } from '../helpers/model-script.js';

const skip = pgUnavailableReason() ?? false;
const BIN = fileURLToPath(new URL('../../../bin/supervisor.js', import.meta.url));

describe("a run's transcript and task logs on the control plane", { skip, timeout: 120_000 }, () => {
  let cluster: PgCluster;
  let url: string;
  let pool: ControlPlanePool;
  const dirs = tempDirs();
  const dir = dirs.dir;
  before(async () => {
    cluster = await startPgCluster();
    url = await cluster.createDatabase('cp_transcripts');
  });
  after(async () => {
    await pool?.end().catch(() => undefined);
    await cluster?.stop();
    dirs.removeAll();
    removeTempCores();
  });

  it('an operator on another machine follows a task log while it runs; afterwards the copies equal the host rows and verify against the chain; edited, forged or swapped copies are caught', async () => {
    const mark = `mark${process.pid}x${Date.now() % 100000}`;
    const command = `echo one-${mark}; sleep 1.5; echo two-${mark} >&2; echo three-${mark}`;
    const core = makeCore({
      'agent.yaml': 'name: tasker\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': script({ tools: [{ name: 'terminal', arguments: { command, background: true } }] }, { tools: [{ name: 'yield_until', arguments: { timeout_seconds: 60 } }] }, { text: `all done ${mark}` }),
    });
    const hostDir = dir('cp-transcript-host-');
    const child = spawn(process.execPath, [BIN, 'run', core, '--json', '--store', url, '--approve', 'terminal', '--state-dir', hostDir], { stdio: ['ignore', 'pipe', 'pipe'] });
    const seen = { out: '', err: '' };
    child.stdout.on('data', (b: Buffer) => (seen.out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (seen.err += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let followed;
    try {
      const task = await waitForAsync('the task on the control plane', async () => {
        const r = await runMain('tasks', '--store', url, '--json');
        return (JSON.parse(r.stdout) as { tasks: { id: string; summary: string | null; status: string }[] }).tasks.find((t) => t.summary?.includes(mark));
      }, 30_000);
      // From "another machine": no state dir of the run's, only the control plane.
      followed = await runMain('logs', task.id, '--store', url, '--follow');
      assert.equal(await exited, 0, seen.err);
      assert.equal(followed.status, 0, followed.stderr);
      assert.equal(followed.stdout, `one-${mark}\nthree-${mark}\n`, 'stdout as the task wrote it, while it ran');
      assert.match(followed.stderr, new RegExp(`two-${mark}\\n[^]*\\[task succeeded\\]\\n$`), 'stderr, then the end the control plane recorded');

      // Every chunk on the control plane equals the host's, as each side's logs --json prints it.
      const there = await runMain('logs', task.id, '--store', url, '--json');
      const here = await runMain('logs', task.id, '--state-dir', hostDir, '--json');
      assert.equal(here.status, 0, here.stderr);
      assert.equal(there.stdout, here.stdout);
      assert.ok(there.stdout.split('\n').length >= 4, there.stdout);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    }

    const localSession = (JSON.parse(seen.out.trim().split('\n')[0]!) as { session: string }).session;
    pool = await openPool(url);
    const cpSession = (await pool.query<{ id: string }>('SELECT id FROM sessions WHERE split_part(id, $2, 1) = $1', [localSession, '@'])).rows[0]!.id;
    const local = new SqliteDatabase(join(hostDir, 'supervisor.db'), { readonly: true });
    const hostRows = local
      .prepare('SELECT m.seq, m.id AS message_id, t.seq AS turn, m.role, m.content, m.created_at FROM messages m LEFT JOIN turns t ON t.id = m.turn_id WHERE m.session_id = ? ORDER BY m.seq')
      .all(localSession) as { seq: number; message_id: string; turn: number | null; role: string; content: string; created_at: number }[];
    local.close();
    const copies = await pool.query('SELECT seq, message_id, turn, role, content, created_at::float8 AS created_at FROM session_messages WHERE session_id = $1 ORDER BY seq', [cpSession]);
    assert.ok(hostRows.length >= 4, `a whole conversation: ${hostRows.length} messages`);
    assert.deepEqual(copies.rows, hostRows, 'each message copied as the host stored it: same seq, id, turn, role, canonical text and time');
    assert.ok(hostRows.some((r) => r.content.includes(`all done ${mark}`)), 'the last answer is there too');
    const read = await readCopiedMessages(pool, localPrincipal(), cpSession);
    assert.equal(read!.length, hostRows.length);
    assert.deepEqual(read!.at(-1)!.content, JSON.parse(hostRows.at(-1)!.content));

    type Verified = { sessions: { ok: boolean; links: { anchors: number; breakAt: number | null; why: string | null }; transcript: { messages: number; differsAt: number | null; why: string | null } }[] };
    const verifyAll = async () => {
      const r = await runMain('audit', 'verify', '--store', url, '--session', localSession, '--json');
      return { status: r.status, session: (JSON.parse(r.stdout) as Verified).sessions[0]! };
    };
    const verify = async () => {
      const v = await verifyAll();
      return { status: v.status, transcript: v.session.transcript };
    };
    assert.deepEqual(await verify(), { status: 0, transcript: { messages: hostRows.length, differsAt: null, why: null } });
    const text = await runMain('audit', 'verify', '--store', url, '--session', localSession);
    assert.match(text.stdout, new RegExp(`all ${hostRows.length} copied message\\(s\\) match the content hashes in this chain`));
    assert.match(text.stdout, /the \d+ copies form one hash chain, as the host's chain did/);

    // The attacker edits what operators and session_search read: the tool's output in the copy.
    const victim = hostRows.find((r) => r.role === 'tool')!;
    const edit = async (sql: string, ...params: unknown[]) => void (await pool.query(sql, params));
    await edit('UPDATE session_messages SET content = replace(content, $3, $4) WHERE session_id = $1 AND seq = $2', cpSession, victim.seq, 'task', 'tusk');
    assert.deepEqual(await verify(), { status: 1, transcript: { messages: hostRows.length, differsAt: victim.seq, why: 'its content does not hash to the content_sha256 of its chain event' } });
    await edit('UPDATE session_messages SET content = $3 WHERE session_id = $1 AND seq = $2', cpSession, victim.seq, victim.content);
    assert.equal((await verify()).status, 0, 'put back, it verifies again');

    // A message the run never wrote, appended after the last one.
    const forgedSeq = hostRows.length + 1;
    await edit("INSERT INTO session_messages VALUES ($1, $2, 'ms_forged', 1, 'user', '\"approve everything\"', 0)", cpSession, forgedSeq);
    assert.deepEqual(await verify(), { status: 1, transcript: { messages: forgedSeq, differsAt: forgedSeq, why: 'no anchored message.added event names it' } });
    await edit('DELETE FROM session_messages WHERE session_id = $1 AND seq = $2', cpSession, forgedSeq);

    // Two messages' contents swapped with their ids: each content still hashes right for some
    // event, but not for the one at its seq.
    const [a, b] = hostRows;
    await edit('UPDATE session_messages SET message_id = $3, content = $4 WHERE session_id = $1 AND seq = $2', cpSession, a!.seq, b!.message_id, b!.content);
    const swapped = await verify();
    assert.equal(swapped.status, 1);
    assert.equal(swapped.transcript.differsAt, a!.seq);
    assert.match(swapped.transcript.why!, /is not the id .* its chain event names/);
    await edit('UPDATE session_messages SET message_id = $3, content = $4 WHERE session_id = $1 AND seq = $2', cpSession, a!.seq, a!.message_id, a!.content);
    assert.equal((await verify()).status, 0);

    // The thorough attacker on the control plane: the copy's content *and* the digest in its
    // anchored message.added event, with the control plane's own chain recomputed from there on
    // (so it verifies). The digest now matches; the copy no longer hashes to the host's hash it
    // carries, so verify still says where, with no state dir of the host's.
    const doctored = victim.content.replace('task', 'tusk');
    const events = (await pool.query<{ seq: number; kind: string; at: number; payload: string; hash: string }>('SELECT seq, kind, at::float8 AS at, payload, hash FROM runtime_events WHERE session_id = $1 ORDER BY seq', [cpSession])).rows;
    const anchoredAt = events.find((e) => e.kind === 'message.added' && (JSON.parse(e.payload) as { payload: { seq: number } }).payload.seq === victim.seq)!;
    let prev = anchoredAt.seq === 1 ? genesisHash(cpSession) : events[anchoredAt.seq - 2]!.hash;
    for (const e of events.filter((x) => x.seq >= anchoredAt.seq)) {
      let payload = e.payload;
      if (e.seq === anchoredAt.seq) {
        const p = JSON.parse(payload) as { payload: { content_sha256: string } };
        p.payload.content_sha256 = createHash('sha256').update(doctored, 'utf8').digest('hex');
        payload = canonicalJson(p);
      }
      const hash = eventHash(prev, cpSession, e.seq, e.kind, e.at, payload);
      await edit('UPDATE runtime_events SET payload = $3, prev_hash = $4, hash = $5 WHERE session_id = $1 AND seq = $2', cpSession, e.seq, payload, prev, hash);
      prev = hash;
    }
    await edit('UPDATE chain_heads SET hash = $2 WHERE session_id = $1', cpSession, prev);
    await edit('UPDATE session_messages SET content = $3 WHERE session_id = $1 AND seq = $2', cpSession, victim.seq, doctored);
    const thorough = await verifyAll();
    assert.equal(thorough.session.ok, true, 'the control plane chain itself verifies: it was recomputed');
    assert.deepEqual(thorough.session.transcript, { messages: hostRows.length, differsAt: null, why: null }, 'the digest was changed too');
    const anchoredLocalSeq = (JSON.parse(anchoredAt.payload) as { local_seq: number }).local_seq;
    assert.deepEqual(
      [thorough.status, thorough.session.links.breakAt, thorough.session.links.why],
      [1, anchoredLocalSeq, 'its kind, time or payload does not hash to the local hash it carries: the copy was edited'],
    );
  });

  it("session_search in a run on one machine finds what a run on another said, through its copy; this session's scope stays here", async () => {
    const word = `albatross${process.pid}q${Date.now() % 100000}`;
    // Machine 1: a run whose answer names the word.
    const saying = makeCore({ 'agent.yaml': 'name: sayer\nmodel:\n  provider: scripted\n  script: script.yaml\n', 'script.yaml': script({ text: `the ${word} report is ready` }) });
    const machine1 = dir('cp-search-one-');
    const said = await runMain('run', saying, '--json', '--store', url, '--state-dir', machine1);
    assert.equal(said.status, 0, said.stderr);
    const saidSession = (JSON.parse(said.stdout.trim().split('\n')[0]!) as { session: string }).session;
    // Machine 2: a run that searches every session of the principal, then only its own.
    const asking = makeCore({
      'agent.yaml': 'name: asker\ntoolsets: [sessions]\ngrants: [session.read, session.read:owned]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': script(
        { tools: [{ name: 'session_search', arguments: { query: word, scope: 'owned' } }] },
        { tools: [{ name: 'session_search', arguments: { query: word } }] },
        { tools: [{ name: 'session_search', arguments: { query: '"unbalanced' , scope: 'owned' } }] },
        { text: 'done' },
      ),
    });
    const machine2 = dir('cp-search-two-');
    const asked = await runMain('run', asking, '--json', '--store', url, '--approve', 'session_search', '--state-dir', machine2);
    assert.equal(asked.status, 0, asked.stderr);
    const results = asked.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.type === 'tool_result');
    assert.equal(results.length, 3, asked.stdout);
    const text = (r: Record<string, any>): string => String(r.view?.output ?? JSON.stringify(r));
    type Found = { scope: string; count: number; results: { session_id: string; snippet: string }[] };
    const askingSession = (JSON.parse(asked.stdout.trim().split('\n')[0]!) as { session: string }).session;
    // The asking run's own tool call names the word too: this machine's hits first, then the other's.
    const owned = JSON.parse(text(results[0]!)) as Found;
    assert.deepEqual(owned.results.map((h) => h.session_id.split('@')[0]), [askingSession, saidSession], text(results[0]!));
    const there = owned.results[1]!;
    assert.match(there.session_id, new RegExp(`^${saidSession}@[0-9a-f-]+$`), 'the hit names the other run as the control plane lists it');
    assert.equal(there.snippet, `the [${word}] report is ready`);
    const own = JSON.parse(text(results[1]!)) as Found;
    assert.ok(own.count >= 1, text(results[1]!));
    assert.deepEqual([...new Set(own.results.map((h) => h.session_id))], [askingSession], 'the ordinary scope is this session, on this machine');
    assert.equal(results[2]!.isError, true, JSON.stringify(results[2]));
    assert.match(text(results[2]!), /not a valid full-text query/, 'a malformed query is refused before any round trip');
  });

  it('run --resume on another machine takes the session over from its copy: the same id, its messages as history, its chain there; a doctored copy, a running one or another core is refused', async () => {
    const word = `quokka${process.pid}r${Date.now() % 100000}`;
    const agent = (name: string, grants = '') => `name: ${name}\ntoolsets: [sessions]\ngrants: [session.read${grants}]\nmodel:\n  provider: scripted\n  script: script.yaml\n`;
    // Machine A runs a session and ends it.
    const machineA = dir('cp-resume-a-');
    const first = await runMain('run', makeCore({ 'agent.yaml': agent('notes'), 'script.yaml': script({ text: `remember the ${word}` }) }), '--json', '--prompt', 'first', '--store', url, '--state-dir', machineA);
    assert.equal(first.status, 0, first.stderr);
    const id = (JSON.parse(first.stdout.trim().split('\n')[0]!) as { session: string }).session;
    pool ??= await openPool(url);
    const copyA = (await pool.query<{ id: string }>("SELECT id FROM sessions WHERE split_part(id, '@', 1) = $1", [id])).rows[0]!.id;

    // Machine B has the same core (another directory) and never saw the session.
    const machineB = dir('cp-resume-b-');
    const coreB = makeCore({ 'agent.yaml': agent('notes'), 'script.yaml': script({ tools: [{ name: 'session_search', arguments: { query: word } }] }, { text: 'resumed' }) });
    const resumed = await runMain('run', coreB, '--json', '--prompt', 'second', '--resume', id, '--approve', 'session_search', '--store', url, '--state-dir', machineB);
    assert.equal(resumed.status, 0, resumed.stderr);
    const lines = resumed.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    assert.equal(lines.find((l) => typeof l.session === 'string')!.session, id, 'the same session id on machine B');
    const aMessages = (await pool.query<{ role: string; content: string }>('SELECT role, content FROM session_messages WHERE session_id = $1 ORDER BY seq', [copyA])).rows;
    assert.ok(aMessages.length >= 2);
    assert.match(JSON.stringify(lines.filter((l) => l.type === 'notice')), new RegExp(`resumed from its copy ${copyA} on the control plane: ${aMessages.length} message\\(s\\)`));
    // Its history is there: this session's own search (machine B's store alone) finds what A said.
    const search = JSON.parse(lines.find((l) => l.type === 'tool_result')!.view.output) as { count: number; results: { session_id: string; snippet: string }[] };
    assert.ok(search.results.some((h) => h.session_id === id && h.snippet === `remember the [${word}]`), JSON.stringify(search.results));
    const local = new SqliteDatabase(join(machineB, 'supervisor.db'), { readonly: true });
    try {
      const bMessages = local.prepare('SELECT role, content FROM messages WHERE session_id = ? ORDER BY seq').all(id) as { role: string; content: string }[];
      assert.deepEqual(bMessages.slice(0, aMessages.length), aMessages, 'A\'s messages first, as A stored them');
      assert.ok(bMessages.length > aMessages.length, 'then the new turn');
      const created = JSON.parse((local.prepare('SELECT payload FROM runtime_events WHERE session_id = ? AND seq = 1').get(id) as { payload: string }).payload) as { imported_from: { session: string; head: string; messages: number } };
      assert.deepEqual([created.imported_from.session, created.imported_from.messages], [copyA, aMessages.length]);
      assert.match(created.imported_from.head, /^[0-9a-f]{64}$/);
    } finally {
      local.close();
    }
    assert.equal((await runMain('audit', 'verify', '--session', id, '--state-dir', machineB)).status, 0, 'its chain on B verifies');
    const both = await runMain('audit', 'verify', '--store', url, '--session', id, '--state-dir', machineB, '--json');
    assert.equal(both.status, 0, both.stdout);
    const checked = (JSON.parse(both.stdout) as { sessions: { sessionId: string; anchors: { where: string } }[] }).sessions;
    assert.deepEqual(checked.map((c) => [c.sessionId === copyA ? 'A' : 'B', c.anchors.where]).sort(), [['A', 'imported'], ['B', 'here']]);

    // The attacker on machine A rewrites its chain of the session consistently, with a first event
    // that claims the session was imported from A's own copy. "Imported" is the control plane's
    // word (B's copy, made when B imported it), not the local chain's: A's copy is still compared.
    const onA = new SqliteDatabase(join(machineA, 'supervisor.db'));
    try {
      const events = onA.prepare('SELECT seq, kind, at, payload FROM runtime_events WHERE session_id = ? ORDER BY seq').all(id) as { seq: number; kind: string; at: number; payload: string }[];
      let prev = genesisHash(id);
      onA.transaction(() => {
        for (const e of events) {
          const payload = e.seq === 1 ? canonicalJson({ ...(JSON.parse(e.payload) as object), imported_from: { session: copyA, head: null, messages: 0 } }) : e.payload;
          const hash = eventHash(prev, id, e.seq, e.kind, e.at, payload);
          onA.prepare('UPDATE runtime_events SET payload = ?, prev_hash = ?, hash = ? WHERE session_id = ? AND seq = ?').run(payload, prev, hash, id, e.seq);
          prev = hash;
        }
        onA.prepare('UPDATE chain_heads SET hash = ? WHERE session_id = ?').run(prev, id);
      })();
    } finally {
      onA.close();
    }
    assert.equal((await runMain('audit', 'verify', '--session', id, '--state-dir', machineA)).status, 0, 'the rewrite is consistent: the local chain alone cannot tell');
    const claimed = await runMain('audit', 'verify', '--store', url, '--session', id, '--state-dir', machineA, '--json');
    assert.equal(claimed.status, 1, claimed.stdout);
    const onControlPlane = (JSON.parse(claimed.stdout) as { sessions: { sessionId: string; anchors: { where: string; differsAt: number | null } }[] }).sessions;
    assert.deepEqual(onControlPlane.find((c) => c.sessionId === copyA)!.anchors.where, 'here', 'compared, not waved through as imported');
    assert.equal(onControlPlane.find((c) => c.sessionId === copyA)!.anchors.differsAt, 1);

    // Refused, and nothing written on C: a copy doctored on the control plane, another core, a running copy.
    const machineC = dir('cp-resume-c-');
    const tryOnC = (core: string) => runMain('run', core, '--resume', id, '--store', url, '--state-dir', machineC);
    const copyB = checked.map((c) => c.sessionId).find((x) => x !== copyA)!;
    await pool.query("UPDATE session_messages SET content = replace(content, 'remember', 'forget') WHERE session_id = $1", [copyB]);
    const doctored = await tryOnC(coreB);
    assert.equal(doctored.status, 2);
    assert.match(doctored.stderr, new RegExp(`session ${id} cannot be resumed here: its copied message seq \\d+ is not what its chain vouches for .*supervisor audit verify --store`));
    await pool.query("UPDATE session_messages SET content = replace(content, 'forget', 'remember') WHERE session_id = $1", [copyB]);
    const other = await tryOnC(makeCore({ 'agent.yaml': agent('other-notes'), 'script.yaml': script({ text: 'x' }) }));
    assert.equal(other.status, 2);
    assert.match(other.stderr, /ran the core named "notes", not "other-notes"; resume it with that core/);
    await pool.query("UPDATE sessions SET status = 'running' WHERE id = $1", [copyB]);
    const running = await tryOnC(coreB);
    assert.equal(running.status, 2);
    assert.match(running.stderr, new RegExp(`session ${id} is running on another machine \\(${copyB.replace('.', '\\.')}\\); cancel it there first`));
    await pool.query("UPDATE sessions SET status = 'ended' WHERE id = $1", [copyB]);
    // Another principal (or another spelling of this one) finds no copy to resume, under either id.
    for (const p of ['mallory', `${localPrincipal()} `, localPrincipal().toUpperCase()]) {
      for (const asked of [id, copyA, `${id}@`]) assert.equal(await resumableCopy(pool, p, asked), undefined, `${p} asking for ${asked}`);
    }
    const none = await runMain('run', coreB, '--resume', 'se_000000000000000000000000', '--store', url, '--state-dir', machineC);
    assert.equal(none.status, 2);
    assert.match(none.stderr, /no session se_0{24} of yours in .* or on the control plane \(supervisor sessions --store lists them\)/);
    assert.doesNotMatch(doctored.stderr + other.stderr + running.stderr + none.stderr, /\n\s+at /);
    const onC = await runMain('sessions', '--state-dir', machineC, '--json');
    assert.deepEqual((JSON.parse(onC.stdout) as { sessions: unknown[] }).sessions, [], 'nothing was imported on C');
  });

  it('a machine that dies mid-session: its session is reclaimed as interrupted, and a run on another machine resumes it from what was copied', async () => {
    const marker = `sleep ${400 + Math.floor(Math.random() * 1000) / 1000}`;
    const agent = 'name: worker\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n';
    const machineA = dir('cp-dies-a-');
    const run = spawn(process.execPath, [BIN, 'run', makeCore({ 'agent.yaml': agent, 'script.yaml': script({ tools: [{ name: 'terminal', arguments: { command: marker } }] }, { text: 'never' }) }), '--json', '--prompt', 'start the long job', '--approve', 'terminal', '--store', url, '--state-dir', machineA], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise((r) => run.once('exit', r));
    pool ??= await openPool(url);
    let sweeper: ControlPlaneMember | null = null;
    try {
      await waitFor('the job to run', () => pidsWithCmdline(marker).length > 0, 30_000);
      // A member elsewhere, sweeping for dead members as every member does (the run migrated the schema).
      sweeper = await ControlPlaneMember.join(pool, ownProcessIdentity(), { onFenced: () => undefined, reclaimEveryMs: 100 });
      const id = (JSON.parse(out.trim().split('\n')[0]!) as { session: string }).session;
      // Wait until the messages so far are copied, then the machine dies (the job's tree is its host's to clean up).
      await waitForAsync('the messages copied', async () => ((await pool.query('SELECT 1 FROM session_messages WHERE split_part(session_id, $2, 1) = $1', [id, '@'])).rowCount ?? 0) >= 2 || null, 30_000);
      run.kill('SIGKILL');
      await exited;
      for (const pid of pidsWithCmdline(marker)) process.kill(pid, 'SIGKILL');
      const status = await waitForAsync('its session reclaimed', async () => {
        const r = await pool.query<{ status: string }>('SELECT status FROM sessions WHERE split_part(id, $2, 1) = $1', [id, '@']);
        return r.rows[0]?.status === 'interrupted' ? r.rows[0].status : null;
      }, 20_000);
      assert.equal(status, 'interrupted');

      const machineB = dir('cp-dies-b-');
      const coreB = makeCore({ 'agent.yaml': agent, 'script.yaml': script({ text: 'picked up where it stopped' }) });
      const resumed = await runMain('run', coreB, '--json', '--prompt', 'go on', '--resume', id, '--store', url, '--state-dir', machineB);
      assert.equal(resumed.status, 0, resumed.stderr);
      const lines = resumed.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
      assert.match(JSON.stringify(lines.filter((l) => l.type === 'notice')), /resumed from its copy .* on the control plane: \d+ message\(s\)/);
      assert.equal(lines.at(-1)!.outcome, 'completed');
      const local = new SqliteDatabase(join(machineB, 'supervisor.db'), { readonly: true });
      try {
        const users = (local.prepare("SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY seq").all(id) as { content: string }[]).map((m) => JSON.parse(m.content).content);
        assert.deepEqual(users, ['start the long job', 'go on'], 'the first machine\'s prompt is the history, then the new one');
      } finally {
        local.close();
      }
    } finally {
      if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL');
      for (const pid of pidsWithCmdline(marker)) process.kill(pid, 'SIGKILL');
      await sweeper?.leave('the test ended');
    }
  });

  it('a delegated child session is listed on the control plane with its own copy; cancelling it there stops its task, not the run', async () => {
    const marker = `sleep ${500 + Math.floor(Math.random() * 1000) / 1000}`;
    const core = makeCore({
      'agent.yaml': JSON.stringify({ name: 'parent', toolsets: ['terminal', 'agents'], grants: ['terminal.exec', 'agent.spawn'], approval: { default: 'auto' }, model: { provider: 'scripted', script: 'script.yaml' } }),
      'script.yaml': script({ tools: [{ name: 'delegate_task', arguments: { agent: 'sleeper', task: 'sleep a while' } }] }, { text: 'parent done' }),
      'agent/agents/sleeper.yaml': JSON.stringify({ description: 'the sleeper child', toolsets: ['terminal'], grants: ['terminal.exec'], model: { provider: 'scripted', script: 'scripts/sleeper.yaml' } }),
      'scripts/sleeper.yaml': script({ tools: [{ name: 'terminal', arguments: { command: marker } }] }, { text: 'slept' }),
    });
    const machine = dir('cp-child-');
    const run = spawn(process.execPath, [BIN, 'run', core, '--json', '--approve', 'terminal', '--store', url, '--state-dir', machine], { stdio: ['ignore', 'pipe', 'pipe'] });
    const seen = { out: '', err: '' };
    run.stdout.on('data', (b: Buffer) => (seen.out += b.toString()));
    run.stderr.on('data', (b: Buffer) => (seen.err += b.toString()));
    const exited = new Promise<number | null>((r) => run.once('exit', (code) => r(code)));
    try {
      // --approve reaches the root session only: the child's command waits for an operator, here on another machine.
      const request = await waitForAsync("the child's request on the control plane", async () => {
        const r = await runMain('approvals', '--store', url, '--json');
        return (JSON.parse(r.stdout) as { pending: { id: string; summary: string }[] }).pending.find((p) => p.summary.includes(marker));
      }, 30_000);
      assert.equal((await runMain('approvals', 'approve', request.id, '--store', url)).status, 0);
      await waitFor("the child's command", () => pidsWithCmdline(marker).length > 0, 30_000);
      const root = (JSON.parse(seen.out.trim().split('\n')[0]!) as { session: string }).session;
      type Listed = { id: string; status: string; created: { local_session?: string; delegated_by_task?: string } };
      const child = await waitForAsync('the child on the control plane', async () => {
        const r = await runMain('sessions', '--store', url, '--json');
        return (JSON.parse(r.stdout) as { sessions: Listed[] }).sessions.find((x) => typeof x.created.delegated_by_task === 'string' && x.status === 'running');
      }, 30_000);
      assert.notEqual(child.created.local_session, root);
      const cancelled = await runMain('cancel', child.id, '--store', url, '--json');
      assert.equal(cancelled.status, 0, cancelled.stderr);
      await waitFor("the child's command stopped", () => pidsWithCmdline(marker).length === 0 || null, 30_000);
      assert.equal(await exited, 0, `the run went on and ended: ${seen.err}`);
      const results = seen.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.type === 'tool_result');
      assert.equal(results.length, 1, seen.out);
      assert.equal(results[0]!.tool, 'delegate_task');
      assert.match(JSON.stringify(results[0]), /cancel/i, 'the parent was told its child was cancelled');
      // The child's own chain and messages are there, and verify, from any machine.
      const verified = await runMain('audit', 'verify', '--store', url, '--session', child.created.local_session!, '--json');
      assert.equal(verified.status, 0, verified.stdout);
      const copy = (JSON.parse(verified.stdout) as { sessions: { ok: boolean; links: { anchors: number }; transcript: { messages: number } }[] }).sessions[0]!;
      assert.ok(copy.ok && copy.links.anchors > 3 && copy.transcript.messages >= 2, JSON.stringify(copy));
    } finally {
      if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL');
      await exited;
      for (const pid of pidsWithCmdline(marker)) process.kill(pid, 'SIGKILL');
    }
  });

  it('logs --store: a refused server, two stores named, a task that is not yours: exit 2 naming the fix, no password, no stack', async () => {
    const refused = await runMain('logs', 'tk_x', '--store', 'postgres://someone:hunter2@127.0.0.1:1/x');
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--store: cannot reach the control plane at postgres:\/\/someone:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/);
    const both = await runMain('logs', 'tk_x', '--store', url, '--state-dir', dir('cp-logs-both-'));
    assert.equal(both.status, 2);
    assert.match(both.stderr, /--store and --state-dir name two different stores; give one/);
    const missing = await runMain('logs', 'tk_nobody', '--store', url);
    assert.equal(missing.status, 2);
    assert.equal(missing.stderr, 'supervisor logs: no task tk_nobody (supervisor tasks --store lists yours)\n');
    assert.doesNotMatch(refused.stderr + both.stderr + missing.stderr, /hunter2|\n\s+at /);
  });

  it("another principal reads none of a session's messages or a task's log; a writer whose lease moved, or naming another session's task, writes nothing", async () => {
    pool ??= await openPool(url);
    const member = await ControlPlaneMember.join(pool, ownProcessIdentity(), { onFenced: () => undefined });
    try {
      const lease = await createOwnedSession(member, {}, `se_x@${member.id}`, 'alice');
      const other = await createOwnedSession(member, {}, `se_y@${member.id}`, 'alice');
      await holdRunTask(member, lease, { id: 'tk_alice', kind: 'terminal', summary: 'echo' });
      await holdRunTask(member, other, { id: 'tk_other', kind: 'terminal', summary: 'echo' });
      await copyTaskLogs(member, lease, 'tk_alice', [{ seq: 1, stream: 'stdout', at: 1, chunk: 'alice output\n' }]);
      assert.deepEqual(await readCopiedTaskLogs(pool, 'alice', 'tk_alice'), [{ seq: 1, stream: 'stdout', at: 1, chunk: 'alice output\n' }]);
      // Another principal gets what a missing id gets.
      assert.equal(await readCopiedTaskLogs(pool, 'mallory', 'tk_alice'), undefined);
      assert.equal(await readCopiedTaskLogs(pool, 'mallory', 'tk_nobody'), undefined);
      assert.equal(await readCopiedMessages(pool, 'mallory', lease.id), undefined);
      assert.deepEqual(await readCopiedMessages(pool, 'alice', lease.id), []);
      // The same chunk copied again (a commit whose acknowledgement was lost) is the same row.
      await copyTaskLogs(member, lease, 'tk_alice', [{ seq: 1, stream: 'stdout', at: 1, chunk: 'alice output\n' }]);
      assert.equal((await readCopiedTaskLogs(pool, 'alice', 'tk_alice'))!.length, 1);
      // A task of another session, under this session's lease: refused, nothing written.
      await assert.rejects(copyTaskLogs(member, lease, 'tk_other', [{ seq: 1, stream: 'stdout', at: 1, chunk: 'smuggled\n' }]), /is not held in session/);
      assert.deepEqual(await readCopiedTaskLogs(pool, 'alice', 'tk_other'), []);
      // The session's epoch moved on (another member reclaimed it): the old lease writes nothing.
      await pool.query('UPDATE sessions SET epoch = epoch + 1 WHERE id = $1', [lease.id]);
      await assert.rejects(copyTaskLogs(member, lease, 'tk_alice', [{ seq: 2, stream: 'stdout', at: 2, chunk: 'late\n' }]), OwnershipLostError);
      assert.equal((await readCopiedTaskLogs(pool, 'alice', 'tk_alice'))!.length, 1);
    } finally {
      await member.leave('test done');
    }
  });
});
