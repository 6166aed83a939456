// The operator's commands against a live run, as separate processes: tasks, logs and cancel from
// "another terminal" while `supervisor run` waits on a background task; and after a run is killed
// with SIGKILL, reconcile kills its background tree and marks the task interrupted.
// The commands under test (cancel, reconcile, approvals approve/deny) are real processes; the
// polling for the state a test waits for (tasks, logs, approvals lists) runs in-process through
// `main(argv, io)` every 250 ms: it was a CLI start every 20 ms, about 0.25 CPU-seconds each, which
// on a loaded 2-core machine also slowed the run being waited for (issue 17).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { CLI, markedPids, tempDir, waitFor, waitForAsync } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
const AGENT = 'name: t\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n';

function core(second: string): string {
  return makeCore({
    'agent.yaml': AGENT,
    'script.yaml': `turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: "echo started; sleep 300", background: true } }\n  - tool_calls:\n      - ${second}\n  - text: done\n`,
  });
}

// How long a test waits for a run to reach the state it checks, and how long the run's own waits
// (a background task, yield_until, a foreground command, --await-approval) last so that it is still
// in that state when found. A bound on a wait, not a measurement: with three test files at once at
// load 20-30, a run took more than the former 20 s to start its task (issue 17), so the runs now
// wait up to 110 s (under the 120 s default effect deadline); each test ends them itself (cancel,
// SIGKILL and reconcile, an answer).
const REACH_MS = 90_000;

/** How often the in-process polls look (a bound on how late a state is seen, not a measurement). */
const POLL_MS = 250;

async function tasksOf(dir: string): Promise<{ id: string; status: string; spawnId: string | null; reason: string | null }[]> {
  const r = await runMain('tasks', '--json', '--state-dir', dir);
  if (r.status !== 0) return [];
  return (JSON.parse(r.stdout) as { tasks: { id: string; status: string; spawnId: string | null; reason: string | null }[] }).tasks;
}

describe('operator commands', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const dirs: { remove(): void }[] = [];
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('while a run waits on a background task: tasks lists it, logs shows it, cancel stops it and the run goes on', async () => {
    const state = tempDir('operator-');
    dirs.push(state);
    const run = spawn(process.execPath, [CLI, 'run', core('{ name: yield_until, arguments: { timeout_seconds: 110 } }'), '--approve', 'terminal', '--json', '--state-dir', state.path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => run.once('close', r));
    try {
      const task = await waitForAsync('a running task', async () => (await tasksOf(state.path)).find((t) => t.status === 'running' && t.spawnId), REACH_MS, POLL_MS);
      await waitForAsync('its first log line', async () => (await runMain('logs', task.id, '--state-dir', state.path)).stdout.includes('started') || null, 10_000, POLL_MS);
      const t0 = Date.now();
      const c = cli('cancel', task.id, '--json', '--state-dir', state.path);
      assert.equal(c.status, 0, c.stdout + c.stderr);
      assert.equal(JSON.parse(c.stdout).status, 'cancelled');
      assert.equal(await exited, 0, out);
      assert.ok(Date.now() - t0 < 15_000, 'the run stopped waiting once the task ended');
      assert.deepEqual(markedPids(task.spawnId!), []);
      const ev = out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; tool?: string; view?: { output?: string } });
      const waited = ev.find((e) => e.type === 'tool_result' && e.tool === 'yield_until');
      assert.match(waited?.view?.output ?? '', /"status": "cancelled"/);
      const missing = cli('cancel', 'tk_00000000000000000000', '--state-dir', state.path);
      assert.equal(missing.status, 2);
    } finally {
      run.kill('SIGKILL');
    }
  });

  test('a run killed with SIGKILL leaves its background tree to reconcile, which kills it and marks the task interrupted', async () => {
    const state = tempDir('operator-crash-');
    dirs.push(state);
    const run = spawn(process.execPath, [CLI, 'run', core('{ name: terminal, arguments: { command: "sleep 110" } }'), '--approve', 'terminal', '--json', '--state-dir', state.path], { stdio: 'ignore' });
    const exited = new Promise((r) => run.once('close', r));
    let spawnId = '';
    try {
      const task = await waitForAsync('a running task', async () => (await tasksOf(state.path)).find((t) => t.status === 'running' && t.spawnId), REACH_MS, POLL_MS);
      spawnId = task.spawnId!;
      await waitFor('the background tree', () => markedPids(spawnId).length > 0 || null);
      run.kill('SIGKILL');
      await exited;
      assert.ok(markedPids(spawnId).length > 0, 'the background tree outlives a SIGKILLed run (its own session)');
      const r = cli('reconcile', '--json', '--state-dir', state.path);
      assert.equal(r.status, 0, r.stderr);
      assert.ok((JSON.parse(r.stdout) as { tasksInterrupted: number }).tasksInterrupted >= 1, r.stdout);
      await waitFor('the tree to be gone', () => markedPids(spawnId).length === 0 || null);
      const after = (await tasksOf(state.path)).find((t) => t.id === task.id);
      assert.equal(after?.status, 'interrupted');
    } finally {
      run.kill('SIGKILL');
    }
  });
});

describe('approvals from another terminal', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const dirs: { remove(): void }[] = [];
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  async function pending(dir: string): Promise<{ id: string; tool: string; summary: string; preview: string }[]> {
    const r = await runMain('approvals', '--json', '--state-dir', dir);
    return r.status === 0 ? (JSON.parse(r.stdout) as { pending: { id: string; tool: string; summary: string; preview: string }[] }).pending : [];
  }

  for (const answer of ['approve', 'deny'] as const) {
    test(`a run without a terminal waits; the operator's ${answer} decides, and only an approval runs the command`, async () => {
      const state = tempDir('approvals-');
      dirs.push(state);
      const dir = makeCore({
        'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
        'script.yaml': 'turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: "touch marker" } }\n  - text: done\n',
      });
      const run = spawn(process.execPath, [CLI, 'run', dir, '--json', '--await-approval', '110', '--state-dir', state.path], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      let ended: number | null | undefined;
      run.stdout.on('data', (c) => (out += c));
      run.stderr.on('data', (c) => (err += c));
      // 'close', not 'exit': stdout is parsed below, and it may still hold data when the process exits.
      const exited = new Promise<number | null>((r) => run.once('close', r)).then((code) => (ended = code));
      try {
        // A run that ended before asking fails the test at once, with what it said.
        const req = await waitForAsync(
          'a waiting request',
          async () => {
            if (ended !== undefined) assert.fail(`the run ended (exit ${ended}) before asking:\n${err}\n${out.slice(-2000)}`);
            return (await pending(state.path))[0];
          },
          REACH_MS,
          POLL_MS,
        ).catch((e: Error) => assert.fail(`${e.message}; the run so far:\n${err}\n${out.slice(-2000)}`));
        assert.deepEqual([req.tool, req.summary], ['terminal', 'touch marker']);
        assert.equal(spawnSync('test', ['-e', `${dir}/marker`]).status, 1, 'nothing ran before the answer');
        const r = cli('approvals', answer, req.id, '--state-dir', state.path);
        assert.equal(r.status, 0, r.stderr);
        assert.equal(await exited, 0, out);
        const result = out.trim().split('\n').map((l) => JSON.parse(l) as { type: string; ok?: boolean; code?: string; view?: { approval?: { source: string } } }).find((e) => e.type === 'tool_result')!;
        if (answer === 'approve') {
          assert.equal(result.ok, true);
          assert.equal(result.view?.approval?.source, 'operator');
          assert.equal(spawnSync('test', ['-e', `${dir}/marker`]).status, 0);
        } else {
          assert.deepEqual([result.ok, result.code], [false, 'APPROVAL_DENIED']);
          assert.equal(spawnSync('test', ['-e', `${dir}/marker`]).status, 1);
        }
        assert.equal(cli('approvals', 'approve', req.id, '--state-dir', state.path).status, 2, 'an answered request cannot be answered again');
      } finally {
        run.kill('SIGKILL');
      }
    });
  }
});
