// Fault injection (issue 16): the demo core is run and its supervisor SIGKILLed at 25 points spread
// over the whole run — after a spawn record, a task start, a task's log, a pending approval, the
// commit of an audit event of each kind, and in the middle of a transaction — chosen with the
// test-only SUPERVISOR_FAULT_AT hook (docs/decisions/0057-fault-injection-in-the-store.md), so
// each crash lands exactly where it is meant to, every time. After each crash: what was committed before it is there and what was not
// is not; `supervisor reconcile` leaves no process of the run alive; `audit verify` finds every
// chain intact; the session, its turns, tasks and pending approvals are interrupted with the
// reason; and `run --resume` continues the session to its end.
// The run and its resume are real `supervisor` processes (the crash is a SIGKILL of the run's
// process). Reconcile, which kills what the dead run left (real processes, found through the
// store's spawn records and the OS), and the read-only views checked after it (audit verify,
// sessions, tasks) run in-process through `main(argv, io)`: the same code on the same store,
// without four node starts per point (issue 17). test/cli/crash-reconcile.test.ts runs the
// `supervisor reconcile` binary.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { query, type Row } from '../helpers/store-query.js';
import { CLI, killMarked, markedPids, tempDir, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';

const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));


interface Ran {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI as a child, without blocking this process (the points run concurrently). */
function cli(args: string[], opts: { env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 90_000);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    });
  });
}

type Mode = 'deny' | 'approve' | 'await';
interface Point {
  /** SUPERVISOR_FAULT_AT */
  at: string;
  /** How the run answers session_search: refused at once (no terminal), approved by a rule, or waiting for an operator. */
  mode?: Mode;
  what: string;
  /** The session is expected to have ended (completed) before the crash. */
  ended?: boolean;
  /** No session exists: the crash rolled back its creation. */
  noSession?: boolean;
  /** `run --resume` continues the session to its end (a full replay of the demo, so not at every point). */
  resume?: boolean;
}

// In the order they happen in a run of the demo (the session_search points in each mode's run).
const POINTS: Point[] = [
  { at: 'mid-commit:session.created:1', what: 'inside the transaction creating the session', noSession: true },
  { at: 'commit:session.created:1', what: 'the session committed, before MCP discovery', resume: true },
  { at: 'spawn:1', what: 'the memory MCP server’s tree recorded', resume: true },
  { at: 'commit:turn.started:1', what: 'the first turn started' },
  { at: 'mid-commit:message.added:1', what: 'inside the group commit of the first user message' },
  { at: 'spawn:2', what: 'the background task’s tree recorded, its task row not yet naming it', resume: true },
  { at: 'task-running:1', what: 'the background task running', resume: true },
  { at: 'commit:effect.completed:1', what: 'the terminal call that started the task committed' },
  { at: 'task-log:1', what: 'the first chunk of the task’s log committed', resume: true },
  { at: 'mid-commit:task.completed:1', what: 'inside the commit of the task’s end', resume: true },
  { at: 'commit:task.completed:1', what: 'the task’s end committed' },
  { at: 'commit:effect.completed:2', what: 'yield_until’s result committed' },
  { at: 'mid-commit:turn.ended:1', what: 'inside the commit ending the first turn' },
  { at: 'commit:turn.ended:1', what: 'the first turn ended' },
  { at: 'spawn:3', what: 'word_count’s tool host recorded', resume: true },
  { at: 'mid-commit:effect.completed:4', what: 'inside the commit of word_count’s result' },
  { at: 'commit:effect.completed:5', what: 'the MCP call’s result committed' },
  { at: 'approval-pending:1', mode: 'await', what: 'session_search waiting for an operator', resume: true },
  { at: 'commit:approval.recorded:1', mode: 'approve', what: 'session_search approved by a rule, before it ran' },
  { at: 'mid-commit:effect.failed:1', what: 'inside the commit of session_search’s refusal' },
  { at: 'commit:effect.completed:6', mode: 'approve', what: 'session_search’s results committed', resume: true },
  { at: 'commit:turn.started:5', what: 'the fifth turn started' },
  { at: 'commit:*:40', what: 'the 40th event of the run committed, in the fifth turn' },
  // The last turn delegates: the child's session ends (session.ended:1) before the demo's (:2).
  { at: 'mid-commit:session.ended:2', what: 'inside the commit ending the session', resume: true },
  { at: 'commit:session.ended:2', what: 'the session ended, its servers and tool host not yet stopped', ended: true, resume: true },
];

const FLAGS: Record<Mode, string[]> = { deny: [], approve: ['--approve', 'session_search'], await: ['--await-approval', '60'] };

/**
 * How many events a point's own count covers: of its kind, or all of them for `*`, in every
 * session of the run (the counter is the process's: the demo's delegated child has a session too).
 */
function eventsOfPointKind(state: string, kind: string): number {
  const rows = kind === '*' ? query(state, 'SELECT COUNT(*) AS n FROM runtime_events') : query(state, 'SELECT COUNT(*) AS n FROM runtime_events WHERE kind = ?', kind);
  return Number(rows[0]!.n);
}

/** The demo's own sessions, not the children its delegate_task started. */
const ROOT_SESSIONS = 'SELECT id, status FROM sessions WHERE id NOT IN (SELECT child_session_id FROM tasks WHERE child_session_id IS NOT NULL)';

describe('fault injection: the demo core, its supervisor SIGKILLed at 25 points', { skip: process.platform !== 'linux' && 'the demo script and the marker sweep are Linux here', concurrency: 3 }, () => {
  const dirs: { remove(): void }[] = [];
  const spawnIds = new Set<string>();
  const started = Date.now();
  after(() => {
    killMarked(spawnIds);
    for (const d of dirs) d.remove();
    process.stdout.write(`# fault injection: ${POINTS.length} points in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  });

  for (const p of POINTS) {
    const mode = p.mode ?? 'deny';
    test(`${p.at}${mode === 'deny' ? '' : ` (${mode})`}: ${p.what}${p.resume ? '; resumed' : ''}`, async () => {
      const state = tempDir('fault-');
      dirs.push(state);
      const s = state.path;
      const run = await cli(['run', DEMO, '--json', ...FLAGS[mode], '--state-dir', s], { env: { SUPERVISOR_FAULT_AT: p.at } });
      assert.equal(run.signal, 'SIGKILL', `the run did not reach ${p.at}: exit ${run.status}\n${run.stderr}\n${run.stdout.slice(-2000)}`);
      const ids = query(s, 'SELECT spawn_id FROM spawns').map((r) => String(r.spawn_id));
      for (const id of ids) spawnIds.add(id);

      // What the crash kept, before anything repairs the store.
      const sessionsBefore = query(s, ROOT_SESSIONS);
      const allSessions = query(s, 'SELECT id FROM sessions').length;
      const [point, ...rest] = p.at.split(':');
      const n = Number(rest.at(-1));
      if (p.noSession) assert.deepEqual(sessionsBefore, [], 'the session’s creation was rolled back');
      else {
        assert.equal(sessionsBefore.length, 1);
        assert.equal(sessionsBefore[0]!.status, p.ended ? 'completed' : 'running');
      }
      const session = sessionsBefore[0]?.id as string | undefined;
      if (session !== undefined && (point === 'commit' || point === 'mid-commit')) {
        const kept = eventsOfPointKind(s, rest[0]!);
        if (point === 'commit') assert.ok(kept >= n, `the committed event is kept: ${kept} of ${rest[0]} (want >= ${n})`);
        else assert.equal(kept, n - 1, `the event inside the interrupted transaction is gone: ${kept} of ${rest[0]}`);
      }
      if (point === 'spawn') assert.equal(ids.length, n, 'the spawn record is kept');
      if (point === 'task-running') assert.equal(query(s, "SELECT 1 FROM tasks WHERE status = 'running' AND spawn_id IS NOT NULL").length, 1);
      if (point === 'task-log') assert.ok(query(s, 'SELECT 1 FROM task_logs').length >= 1);
      if (point === 'approval-pending') assert.equal(query(s, "SELECT 1 FROM pending_approvals WHERE status = 'pending'").length, 1);

      // Reconcile: no process of the run survives it, no record stays running.
      const r = await runMain('reconcile', '--json', '--state-dir', s);
      assert.equal(r.status, 0, r.stderr);
      for (const id of ids) assert.deepEqual(markedPids(id), [], `a process marked ${id} survived reconcile`);
      assert.deepEqual(query(s, "SELECT spawn_id FROM spawns WHERE status = 'running'"), []);

      // Three readers: the chains, and the operator's view of sessions and tasks.
      const v = await runMain('audit', 'verify', '--json', '--state-dir', s);
      const sessionsOut = await runMain('sessions', '--json', '--state-dir', s);
      const tasksOut = await runMain('tasks', '--json', '--state-dir', s);
      // The chains: intact (each append is one transaction), or the break named.
      const verdict = JSON.parse(v.stdout) as { ok: boolean; checked: number; sessions: unknown[] };
      assert.equal(v.status, 0, `audit verify: ${v.stdout}${v.stderr}`);
      assert.equal(verdict.checked, allSessions);

      // Nothing of the dead run is left running or pending; what was is interrupted, with the reason.
      assert.equal(sessionsOut.status, 0, sessionsOut.stderr);
      assert.equal(tasksOut.status, 0, tasksOut.stderr);
      const listed = JSON.parse(sessionsOut.stdout) as { sessions: { id: string; status: string; endReason: string | null }[] };
      const tasks = JSON.parse(tasksOut.stdout) as { tasks: { id: string; status: string; reason: string | null }[] };
      assert.deepEqual(query(s, "SELECT id FROM turns WHERE status = 'running'"), []);
      assert.deepEqual(query(s, "SELECT id FROM pending_approvals WHERE status = 'pending'"), []);
      for (const t of tasks.tasks) assert.notEqual(t.status, 'running', JSON.stringify(t));
      if (point === 'spawn' && n === 2) assert.deepEqual(tasks.tasks.map((t) => t.status), ['interrupted'], 'the task whose tree was just recorded');
      if (point === 'task-running') assert.match(String(tasks.tasks[0]?.reason), /its supervisor \(pid \d+\) stopped without ending it/);
      if (point === 'approval-pending') assert.deepEqual(query(s, 'SELECT status FROM pending_approvals').map((a) => a.status), ['interrupted']);
      if (session === undefined) {
        assert.deepEqual(listed.sessions, []);
        return;
      }
      const mine = listed.sessions.find((x) => x.id === session)!;
      if (p.ended) assert.equal(mine.status, 'completed');
      else {
        assert.equal(mine.status, 'interrupted');
        assert.match(String(mine.endReason), /its supervisor \(pid \d+\) stopped without ending it/);
        const kinds = query(s, 'SELECT kind FROM runtime_events WHERE session_id = ? ORDER BY seq', session).map((e) => e.kind);
        assert.equal(kinds.at(-1), 'session.interrupted');
      }

      if (!p.resume) return;
      // Resume: the same session continues and completes; its chain still verifies.
      const resumed = await cli(['run', DEMO, '--resume', session, '--json', '--approve', 'session_search', '--state-dir', s]);
      for (const x of query(s, 'SELECT spawn_id FROM spawns')) spawnIds.add(String(x.spawn_id));
      assert.equal(resumed.status, 0, resumed.stderr);
      const end = JSON.parse(resumed.stdout.trim().split('\n').at(-1)!) as { type: string; outcome: string; session: string };
      assert.deepEqual([end.type, end.outcome, end.session], ['end', 'completed', session]);
      assert.equal(query(s, 'SELECT status FROM sessions WHERE id = ?', session)[0]!.status, 'completed');
      const again = await runMain('audit', 'verify', '--session', session, '--state-dir', s);
      assert.equal(again.status, 0, again.stdout + again.stderr);
      const kinds = query(s, 'SELECT kind FROM runtime_events WHERE session_id = ? ORDER BY seq', session).map((e) => e.kind);
      assert.ok(kinds.indexOf('session.resumed') > kinds.indexOf(p.ended ? 'session.ended' : 'session.interrupted'), kinds.join(' '));
      assert.equal(kinds.at(-1), 'session.ended');
      const all = query(s, 'SELECT spawn_id FROM spawns').map((x) => String(x.spawn_id));
      await waitFor('the resumed run’s trees gone', () => all.every((id) => markedPids(id).length === 0), 10_000);
    });
  }
});
