// A supervisor killed with SIGKILL leaves nothing stuck: the next start (any command that opens the
// supervisor) or `supervisor reconcile` marks its sessions, turns, tasks and pending approvals
// interrupted with the reason, appends session.interrupted to each chain, kills the trees it left,
// and the session can be resumed. Real `supervisor run` processes, real SQLite files.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { alive, CLI, markedPids, tempDir, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

// audit verify runs in-process through `main(argv, io)` (issue 17); runs, reconcile, exec and the
// operator's views of the interrupted session are real processes.
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

type Row = Record<string, unknown>;
const require = createRequire(import.meta.url);
const Sqlite = require('better-sqlite3') as new (f: string, o: { readonly: boolean }) => { prepare(s: string): { all(...a: unknown[]): Row[]; get(...a: unknown[]): Row | undefined }; close(): void };

/** Rows of a read-only query; none while the store (or its schema) does not exist yet. */
function query(state: string, sql: string, ...args: unknown[]): Row[] {
  let db;
  try {
    db = new Sqlite(`${state}/supervisor.db`, { readonly: true });
    return db.prepare(sql).all(...args);
  } catch {
    return [];
  } finally {
    db?.close();
  }
}

/** A run whose first turn starts `sleep 60` as a background task and then waits for it. */
const waitingCore = () =>
  makeCore({
    'agent.yaml': 'name: t\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n',
    'script.yaml':
      'turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: "sleep 60", background: true } }\n' +
      '  - tool_calls:\n      - { name: yield_until, arguments: { timeout_seconds: 60 } }\n  - text: done\n',
  });

/** A run waiting for an operator's answer to a terminal command. */
const pendingCore = () =>
  makeCore({
    'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
    'script.yaml': 'turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: "touch marker" } }\n  - text: done\n',
  });

function start(args: string[]): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'ignore'] });
}

async function killHard(run: ChildProcess): Promise<void> {
  const gone = new Promise((r) => run.once('exit', r));
  run.kill('SIGKILL');
  await gone;
}

describe('a killed supervisor leaves nothing stuck', () => {
  const dirs: { remove(): void }[] = [];
  const strays: number[] = [];
  after(() => {
    for (const pid of strays) if (alive(pid)) process.kill(pid, 'SIGKILL');
    for (const d of dirs) d.remove();
    removeTempCores();
  });

  /** Kills `supervisor run` while its background task sleeps; returns the session, task and the task's pid. */
  async function killedMidTask(state: string, core: string): Promise<{ session: string; task: string; pid: number }> {
    const run = start(['run', core, '--approve', 'terminal', '--state-dir', state]);
    const task = await waitFor('a running background task', () => query(state, "SELECT id, session_id, spawn_id FROM tasks WHERE status = 'running' AND spawn_id IS NOT NULL")[0], 30_000);
    const pid = await waitFor('the task’s sleep', () => markedPids(task.spawn_id as string)[0], 10_000);
    strays.push(pid);
    // The run is inside yield_until now, or about to be: either way mid-session.
    await waitFor('the turn loop waiting', () => query(state, "SELECT 1 FROM runtime_events WHERE kind = 'effect.completed' AND session_id = ?", task.session_id)[0], 10_000);
    await killHard(run);
    assert.equal(query(state, 'SELECT status FROM sessions WHERE id = ?', task.session_id)[0]?.status, 'running', 'nothing ended it yet');
    return { session: task.session_id as string, task: task.id as string, pid };
  }

  test('reconcile interrupts the session, its turn and task with the reason; the chain verifies; resume continues', async () => {
    const state = tempDir('crash-');
    dirs.push(state);
    const core = waitingCore();
    const { session, task, pid } = await killedMidTask(state.path, core);

    const r = cli('reconcile', '--json', '--state-dir', state.path);
    assert.equal(r.status, 0, r.stderr);
    const report = JSON.parse(r.stdout) as { sessions: { sessionId: string; tasks: string[]; turns: string[]; reason: string }[] };
    const mine = report.sessions.find((s) => s.sessionId === session);
    assert.ok(mine, r.stdout);
    assert.deepEqual(mine.tasks, [task]);
    assert.equal(mine.turns.length, 1);
    assert.match(mine.reason, /stopped without ending it/);
    assert.equal(alive(pid), false, 'the task’s tree was killed');

    const s = query(state.path, 'SELECT status, end_reason FROM sessions WHERE id = ?', session)[0]!;
    assert.equal(s.status, 'interrupted');
    assert.match(String(s.end_reason), /its supervisor \(pid \d+\) stopped/);
    assert.deepEqual(query(state.path, 'SELECT status FROM turns WHERE session_id = ?', session).map((t) => t.status), ['interrupted']);
    const t = query(state.path, 'SELECT status, reason FROM tasks WHERE id = ?', task)[0]!;
    assert.equal(t.status, 'interrupted');
    assert.match(String(t.reason), /stopped without ending it/);
    const kinds = query(state.path, 'SELECT kind FROM runtime_events WHERE session_id = ? ORDER BY seq', session).map((e) => e.kind);
    assert.equal(kinds.at(-1), 'session.interrupted');

    const listed = cli('sessions', '--state-dir', state.path);
    assert.match(listed.stdout, new RegExp(`${session}\\s+interrupted .*stopped without ending it`));
    const tasks = cli('tasks', '--state-dir', state.path);
    assert.match(tasks.stdout, new RegExp(`${task}\\s+interrupted .*stopped without ending it`));
    const v = await runMain('audit', 'verify', '--session', session, '--state-dir', state.path);
    assert.equal(v.status, 0, v.stdout + v.stderr);

    // Reconciling again changes nothing.
    const again = JSON.parse(cli('reconcile', '--json', '--state-dir', state.path).stdout) as { sessions: unknown[] };
    assert.deepEqual(again.sessions, []);

    // The same core, its script edited to answer at once: a resume may run a newer revision.
    writeFileSync(join(core, 'script.yaml'), 'turns:\n  - text: resumed\n');
    const resumed = spawnSync(process.execPath, [CLI, 'run', core, '--resume', session, '--prompt', 'go on', '--json', '--state-dir', state.path], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal(query(state.path, 'SELECT status FROM sessions WHERE id = ?', session)[0]?.status, 'completed');
    assert.equal((await runMain('audit', 'verify', '--session', session, '--state-dir', state.path)).status, 0);
  });

  test('any next start (exec) marks them too, and resume works without reconcile', async () => {
    const state = tempDir('crash-exec-');
    dirs.push(state);
    const core = waitingCore();
    const { session, task, pid } = await killedMidTask(state.path, core);
    const e = cli('exec', '--state-dir', state.path, '--', 'true');
    assert.equal(e.status, 0, e.stderr);
    assert.equal(alive(pid), false);
    assert.equal(query(state.path, 'SELECT status FROM sessions WHERE id = ?', session)[0]?.status, 'interrupted');
    assert.equal(query(state.path, 'SELECT status FROM tasks WHERE id = ?', task)[0]?.status, 'interrupted');
  });

  test('a run killed while it waits for an approval: the request is interrupted, and nothing runs', async () => {
    const state = tempDir('crash-pending-');
    dirs.push(state);
    const core = pendingCore();
    const run = start(['run', core, '--await-approval', '60', '--state-dir', state.path]);
    const req = await waitFor('a waiting request', () => query(state.path, "SELECT id, session_id FROM pending_approvals WHERE status = 'pending'")[0], 30_000);
    await killHard(run);
    const r = cli('reconcile', '--json', '--state-dir', state.path);
    assert.equal(r.status, 0, r.stderr);
    const mine = (JSON.parse(r.stdout) as { sessions: { sessionId: string; pendingApprovals: string[] }[] }).sessions.find((s) => s.sessionId === req.session_id);
    assert.deepEqual(mine?.pendingApprovals, [req.id]);
    assert.equal(query(state.path, 'SELECT status FROM pending_approvals WHERE id = ?', req.id)[0]?.status, 'interrupted');
    const answer = cli('approvals', 'approve', String(req.id), '--state-dir', state.path);
    assert.equal(answer.status, 2, 'an interrupted request cannot be approved');
    assert.equal(spawnSync('test', ['-e', `${core}/marker`]).status, 1, 'the command never ran');
  });

  test('a live run is left alone by another start', async () => {
    const state = tempDir('crash-live-');
    dirs.push(state);
    const run = start(['run', pendingCore(), '--await-approval', '60', '--state-dir', state.path]);
    try {
      const req = await waitFor('a waiting request', () => query(state.path, "SELECT id, session_id FROM pending_approvals WHERE status = 'pending'")[0], 30_000);
      const r = JSON.parse(cli('reconcile', '--json', '--state-dir', state.path).stdout) as { sessions: unknown[] };
      assert.deepEqual(r.sessions, []);
      assert.equal(query(state.path, 'SELECT status FROM sessions WHERE id = ?', req.session_id)[0]?.status, 'running');
      assert.equal(query(state.path, 'SELECT status FROM pending_approvals WHERE id = ?', req.id)[0]?.status, 'pending');
    } finally {
      await killHard(run);
    }
  });
});
