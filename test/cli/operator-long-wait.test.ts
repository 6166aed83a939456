// Issue 16, reported once and not reproduced: operator commands hanging on the SQLite lock while a
// run sat in a long `yield_until`. Here, against real `supervisor run` children sharing one state
// dir: run A has a background task printing ten lines a second and waits for it in a 60 s
// `yield_until`; run B waits for an operator's answer to an approval request. While both are live,
// `sessions`, `tasks`, `approvals`, `logs <task>` and `cancel <task>` each run as their own process
// and must answer within 2 s of wall time (cancel: the request recorded). The cancel ends the wait,
// so the test takes seconds. The setup's polls (is the task running, the request pending, the
// first log line written?) run in-process through `main(argv, io)`: they are not what is timed, and
// a CLI start every 100-200 ms competed with the two runs starting (issue 17).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, markedPids, tempDir, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const BOUND_MS = 2_000;

/** One CLI process; resolves with its exit status, output and wall time (spawn to 'close'). */
function timed(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string; ms: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  // A hang must fail the test, not stall it: the child is killed well after the bound.
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ status: code, stdout, stderr, ms: Math.round(performance.now() - t0) });
    }),
  );
}

function events(out: string): { type: string; tool?: string; name?: string; ok?: boolean; view?: { output?: string } }[] {
  return out
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

describe('operator commands during a long yield_until', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const dirs: { remove(): void }[] = [];
  const runs: ChildProcess[] = [];
  after(() => {
    for (const r of runs.splice(0)) if (r.exitCode === null && r.signalCode === null) r.kill('SIGKILL');
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('sessions, tasks, approvals, logs and cancel each answer within 2 s while a run waits 60 s, an approval is pending and a task writes logs', async () => {
    const state = tempDir('operator-wait-');
    dirs.push(state);
    const waiting = makeCore({
      'agent.yaml': 'name: waits\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\nlimits:\n  timeout_seconds: 300\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml':
        'turns:\n' +
        '  - tool_calls:\n      - { name: terminal, arguments: { command: "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.1; done", background: true } }\n' +
        '  - tool_calls:\n      - { name: yield_until, arguments: { timeout_seconds: 60 } }\n' +
        '  - text: done\n',
    });
    const asking = makeCore({
      'agent.yaml': 'name: asks\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': 'turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: "touch never-approved" } }\n  - text: done\n',
    });

    const start = (args: string[]) => {
      const child = spawn(process.execPath, [CLI, 'run', ...args, '--json', '--state-dir', state.path], { stdio: ['ignore', 'pipe', 'pipe'] });
      runs.push(child);
      const io = { out: '', err: '' };
      child.stdout!.on('data', (d) => (io.out += d));
      child.stderr!.on('data', (d) => (io.err += d));
      const closed = new Promise<number | null>((r) => child.once('close', r));
      return { child, io, closed };
    };
    const a = start([waiting, '--approve', 'terminal']);
    const b = start([asking, '--await-approval', '90']);

    // Everything in place: the task is running and printing, run A is inside yield_until, run B's request is pending.
    const list = async (args: string[]) => {
      const r = await runMain(...args, '--json', '--state-dir', state.path);
      return r.status === 0 ? JSON.parse(r.stdout) : null;
    };
    let running: { id: string; spawnId: string } | undefined;
    const deadline = Date.now() + 30_000;
    while (!running && Date.now() < deadline) {
      running = ((await list(['tasks']))?.tasks ?? []).find((t: { status: string; spawnId: string | null }) => t.status === 'running' && t.spawnId);
      if (!running) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(running, `no running task within 30 s: ${a.io.err}`);
    await waitFor('run A inside yield_until', () => events(a.io.out).some((e) => e.type === 'tool_call' && e.name === 'yield_until') || null, 20_000);
    let pending: { id: string } | undefined;
    while (!pending && Date.now() < deadline) {
      pending = ((await list(['approvals']))?.pending ?? [])[0];
      if (!pending) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pending, `no pending approval within 30 s: ${b.io.err}`);
    const ticks = (s: string) => Math.max(0, ...[...s.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
    // The task has written something: on a loaded machine its first line can take seconds to land.
    let firstLog = await runMain('logs', running.id, '--state-dir', state.path);
    while (ticks(firstLog.stdout) === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      firstLog = await runMain('logs', running.id, '--state-dir', state.path);
    }
    assert.ok(ticks(firstLog.stdout) > 0, `the task wrote no line by the setup deadline (30 s from the start): ${firstLog.stdout}${firstLog.stderr}`);

    // The checks: each command in its own process, one after another, each timed. A command stuck
    // behind the run's lock waits out busy_timeout (5 s) on every attempt; a cold start that a
    // loaded machine descheduled past the bound does not repeat: a read-only view gets three
    // attempts and must answer within the bound in one of them (every attempt's time is printed).
    const timings: Record<string, number[]> = {};
    const check = async (name: string, args: string[], attempts = 1, okStatus: readonly number[] = [0]) => {
      for (let i = 1; ; i++) {
        const r = await timed([...args, '--state-dir', state.path]);
        (timings[name] ??= []).push(r.ms);
        assert.ok(okStatus.includes(r.status ?? -1), `${name}: exit ${r.status}\n${r.stdout}${r.stderr}`);
        if (r.ms < BOUND_MS) return r;
        assert.ok(i < attempts, `${name} took ${timings[name]!.join(', ')} ms (bound ${BOUND_MS} ms)`);
      }
    };
    const sessions = await check('sessions', ['sessions', '--json'], 3);
    assert.ok((JSON.parse(sessions.stdout).sessions as { status: string }[]).filter((s) => s.status === 'running').length >= 2, sessions.stdout);
    const tasks = await check('tasks', ['tasks', '--json'], 3);
    assert.ok((JSON.parse(tasks.stdout).tasks as { id: string; status: string }[]).some((t) => t.id === running!.id && t.status === 'running'));
    const approvals = await check('approvals', ['approvals', '--json'], 3);
    assert.ok((JSON.parse(approvals.stdout).pending as { id: string }[]).some((p) => p.id === pending!.id));
    const logs = await check('logs', ['logs', running.id], 3);
    assert.ok(ticks(logs.stdout) > ticks(firstLog.stdout), `the task kept writing: ${ticks(firstLog.stdout)} then ${ticks(logs.stdout)} ticks`);
    // Still inside the wait (no result yet), the approval still pending: the checks ran during both.
    assert.ok(!events(a.io.out).some((e) => e.type === 'tool_result' && e.tool === 'yield_until'), 'yield_until was still waiting');
    assert.ok(!events(b.io.out).some((e) => e.type === 'tool_result'), 'the approval was still pending');
    // The cancel answers once the request is recorded (--wait 0: exit 1 while the tree is still
    // being stopped, 0 once it is cancelled); asking again is the same request, so it gets the
    // attempts a read does. The stop itself is the run's work, timed apart below.
    const cancel = await check('cancel', ['cancel', running.id, '--json', '--wait', '0'], 3, [0, 1]);
    assert.ok(['running', 'cancelled'].includes(JSON.parse(cancel.stdout).status), cancel.stdout);
    console.log(`operator command wall times during the wait (bound ${BOUND_MS} ms): ${JSON.stringify(timings)}`);
    const stopped = await timed(['cancel', running.id, '--json', '--wait', '30', '--state-dir', state.path]);
    assert.equal(stopped.status, 0, stopped.stdout + stopped.stderr);
    assert.equal(JSON.parse(stopped.stdout).status, 'cancelled');

    // The cancel ended the wait: run A finishes long before its 60 s; its tree is gone.
    assert.equal(await a.closed, 0, a.io.out + a.io.err);
    const waited = events(a.io.out).find((e) => e.type === 'tool_result' && e.tool === 'yield_until');
    assert.match(waited?.view?.output ?? '', /"status": "cancelled"/);
    assert.deepEqual(markedPids(running.spawnId), []);
    // Run B: the operator denies; it ends normally.
    const deny = await timed(['approvals', 'deny', pending.id, '--state-dir', state.path]);
    assert.equal(deny.status, 0, deny.stderr);
    assert.equal(await b.closed, 0, b.io.out + b.io.err);
  });
});
