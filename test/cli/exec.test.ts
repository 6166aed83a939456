// `supervisor exec` as a user runs it: a real CLI process, real trees, real signals.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { CLI, alive, killMarked, markedPids, tempDir, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';

const require = createRequire(import.meta.url);
const dirs: { remove(): void }[] = [];
const spawnIds = new Set<string>();

afterEach(() => {
  const leaked = killMarked(spawnIds);
  spawnIds.clear();
  for (const d of dirs.splice(0)) d.remove();
  assert.equal(leaked, 0, `${leaked} supervised process(es) outlived their test`);
});

function state(): string {
  const d = tempDir();
  dirs.push(d);
  return d.path;
}

function execJson(args: string[], stateDir: string): { status: number | null; out: any; stderr: string; ms: number } {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [CLI, 'exec', '--json', '--state-dir', stateDir, ...args], { encoding: 'utf8', timeout: 120_000 });
  const out = r.stdout.trim() ? JSON.parse(r.stdout.trim()) : null;
  if (out?.spawnId) spawnIds.add(out.spawnId);
  return { status: r.status, out, stderr: r.stderr, ms: Date.now() - t0 };
}

function runningRecords(stateDir: string): any[] {
  const Sqlite = require('better-sqlite3');
  const db = new Sqlite(join(stateDir, 'supervisor.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare("SELECT * FROM spawns WHERE status = 'running'").all();
  } finally {
    db.close();
  }
}

// The waits and spawn timeouts in this file only stop a hang: the serial baseline of issue 17 at
// load 20-50 took more than 10 s for the CLI to start its tree, and more than 30 s for one exec.
/** Waits until the CLI's store shows one running tree with at least `min` live marked processes. */
function waitForRunningTree(dir: string, min: number): Promise<any> {
  return waitFor(`a running record with ${min} marked processes`, () => {
    try {
      const rows = runningRecords(dir);
      return rows.length === 1 && markedPids(rows[0].spawn_id).length >= min ? rows[0] : null;
    } catch {
      return null; // the store does not exist yet
    }
  }, 60_000);
}

test('exec --timeout 2 kills a tree with a setsid escapee and returns 124 after about 2 s', () => {
  const r = execJson(['--timeout', '2', '--', 'sh', '-c', 'setsid sleep 60 & sleep 60'], state());
  assert.equal(r.status, 124);
  assert.equal(r.out.reason, 'timeout');
  // Printed, so a run's margin to the bound is on record (the serial group's files run together).
  console.log(`exec --timeout 2: the supervisor measured ${r.out.durationMs} ms (bound 1900-4500 ms)`);
  assert.ok(r.out.durationMs >= 1900 && r.out.durationMs < 4500, `duration ${r.out.durationMs}`);
  assert.equal(r.out.killed.escapees, 1);
  assert.equal(r.out.killed.survivors, 0);
  assert.deepEqual(markedPids(r.out.spawnId), []);
  for (const key of ['spawnId', 'pid', 'exitCode', 'signal', 'reason', 'durationMs', 'stdout', 'stderr', 'artifacts', 'killed']) {
    assert.ok(key in r.out, `--json has ${key}`);
  }
  assert.deepEqual(Object.keys(r.out.stdout).sort(), ['bytes', 'chars', 'tail', 'truncated']);
});

test('exec follows the exit status of the command', () => {
  const dir = state();
  assert.equal(execJson(['--', 'sh', '-c', 'exit 7'], dir).status, 7);
  const k = execJson(['--', 'sh', '-c', 'kill -KILL $$'], dir);
  assert.equal(k.status, 137);
  assert.equal(k.out.signal, 'SIGKILL');
  const nf = execJson(['--', 'no-such-command-for-supervisor'], dir);
  assert.equal(nf.status, 127);
  assert.equal(nf.out.error.code, 'COMMAND_NOT_FOUND');
});

test('exec redacts an environment secret from passthrough output and artifacts', () => {
  const dir = state();
  const secret = 'tok_5f1d2c3b4a596877';
  const r = spawnSync(process.execPath, [CLI, 'exec', '--redact-env', 'MY_TOKEN', '--state-dir', dir, '--', 'sh', '-c', 'printf "%s\\n" "$MY_TOKEN"'], {
    encoding: 'utf8',
    env: { ...process.env, MY_TOKEN: secret },
  });
  assert.equal(r.status, 0);
  assert.equal(r.stdout, '[REDACTED]\n');
});

// In-process (main(argv, io)): the arguments are refused before anything starts.
test('exec passes its own stdin to the command', () => {
  const r = spawnSync(process.execPath, [CLI, 'exec', '--state-dir', state(), '--', 'cat'], { input: 'through the supervisor\n', encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, 'through the supervisor\n');
});

test('bad usage names the flag and exits 2', async () => {
  const r = await runMain('exec', '--timeout', 'soon', '--', 'true');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--timeout "soon" is not a duration/);
  const u = await runMain('exec', '--frobnicate', '--', 'true');
  assert.equal(u.status, 2);
  assert.match(u.stderr, /unknown option --frobnicate/);
});

test('Ctrl-C (SIGINT) cancels the whole tree; exit 130', async () => {
  const dir = state();
  const cli = spawn(process.execPath, [CLI, 'exec', '--json', '--grace', '0.3', '--state-dir', dir, '--', 'sh', '-c', 'setsid sleep 60 & trap "" TERM; sleep 60'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  cli.stdout.on('data', (c) => (stdout += c));
  const rec = await waitForRunningTree(dir, 2);
  spawnIds.add(rec.spawn_id);
  cli.kill('SIGINT');
  // 'close', not 'exit': stdout is parsed below and may still hold unread data at 'exit'.
  const code = await new Promise<number | null>((r) => cli.on('close', (c) => r(c)));
  assert.equal(code, 130);
  const out = JSON.parse(stdout.trim());
  assert.equal(out.reason, 'cancelled');
  assert.deepEqual(markedPids(rec.spawn_id), []);
});

test('a second Ctrl-C does not wait for the grace: the tree is killed at once', async () => {
  const dir = state();
  const cli = spawn(process.execPath, [CLI, 'exec', '--grace', '60', '--state-dir', dir, '--', 'sh', '-c', 'trap "" TERM; echo ready; setsid sh -c "trap \\"\\" TERM; sleep 300" & sleep 300'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  cli.stderr.on('data', (c) => (stderr += c));
  const rec = await waitForRunningTree(dir, 3);
  spawnIds.add(rec.spawn_id);
  const t0 = Date.now();
  cli.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(markedPids(rec.spawn_id).length >= 2, 'the first Ctrl-C is graceful: TERM-ignorers wait for the 60 s grace');
  cli.kill('SIGINT');
  const code = await new Promise<number | null>((r) => cli.on('close', (c) => r(c)));
  assert.equal(code, 130);
  console.log(`exec: the second Ctrl-C ended the run ${Date.now() - t0} ms after the first (bound 10000 ms)`);
  assert.ok(Date.now() - t0 < 10_000, 'the second Ctrl-C forced the kill');
  assert.match(stderr, /killing every supervised process now/);
  await waitFor('the tree to be gone', () => markedPids(rec.spawn_id).length === 0, 5_000);
  assert.deepEqual(runningRecords(dir), [], 'the forced kill finalized the record');
});

test('the supervisor killed with SIGKILL mid-run: the next start reconciles and kills the leftovers', async () => {
  const dir = state();
  const cli = spawn(process.execPath, [CLI, 'exec', '--state-dir', dir, '--', 'sh', '-c', 'setsid sleep 300 & sleep 300 & wait'], {
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const rec = await waitForRunningTree(dir, 3);
  spawnIds.add(rec.spawn_id);
  const leftovers = markedPids(rec.spawn_id);
  cli.kill('SIGKILL');
  await new Promise((r) => cli.on('exit', r));
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(leftovers.filter(alive).length, 3, 'SIGKILL gives the supervisor no chance: the tree is still there');

  const r = spawnSync(process.execPath, [CLI, 'reconcile', '--json', '--state-dir', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  assert.equal(report.interrupted.length, 1);
  assert.equal(report.interrupted[0].spawnId, rec.spawn_id);
  assert.equal(report.interrupted[0].leaderMatched, true);
  assert.equal(report.interrupted[0].killed, 3);
  await waitFor('the leftovers to die', () => leftovers.every((p) => !alive(p)), 5_000);
  assert.deepEqual(runningRecords(dir), []);
});

test('an artifact write failure (ENOSPC) fails the execution, and the tree is still killed and reaped', (t) => {
  const probe = spawnSync('unshare', ['-m', 'true']);
  if (probe.status !== 0) return assert.fail(`unshare -m is not usable here: ${probe.stderr}`);
  const dir = state();
  // A 1 MiB tmpfs over the artifact root, in a private mount namespace: a real ENOSPC, nothing faked.
  const script = `mkdir -p "$1/artifacts" && mount -t tmpfs -o size=1m,mode=0700 tmpfs "$1/artifacts" && exec "$2" "$3" exec --json --state-dir "$1" -- sh -c 'head -c 4000000 /dev/zero; sleep 60'`;
  const r = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', dir, process.execPath, CLI], { encoding: 'utf8', timeout: 120_000 });
  t.diagnostic(r.stderr);
  const out = JSON.parse(r.stdout.trim());
  spawnIds.add(out.spawnId);
  assert.equal(r.status, 125);
  assert.equal(out.reason, 'failed');
  assert.equal(out.error.code, 'ARTIFACT_WRITE_FAILED');
  assert.ok(out.stdout.bytes > 1024 * 1024, `draining went on past the full disk (${out.stdout.bytes} bytes read)`);
  assert.ok(out.durationMs < 10_000, 'the sleeping tree was killed, not waited for');
  assert.deepEqual(markedPids(out.spawnId), []);
});
