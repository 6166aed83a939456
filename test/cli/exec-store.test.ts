// How `exec` uses the store (decision 65): a one-command supervisor writes a handful of rows, so it
// starts no checkpoint thread (which cost it about a third of its start-up); its spawn record is
// still committed before the command can act, and a crash still leaves it for reconcile.
// In-process, in a file of its own: runExec makes this test process a child subreaper.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { runExec } from '../../src/cli/exec.js';
import { checkpointerDue, checkpointerRunning } from '../../src/store/checkpointer.js';
import { ProcessSupervisor } from '../../src/process/index.js';
import { tempDir } from '../helpers/procs.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});
function state(): string {
  const d = tempDir();
  dirs.push(d);
  return d.path;
}

test('exec starts no checkpoint thread for its store', async () => {
  const dir = state();
  const file = join(dir, 'supervisor.db');
  const seen: boolean[] = [];
  const poll = setInterval(() => seen.push(checkpointerRunning(file)), 10);
  let code: number;
  try {
    code = await runExec(['--no-artifacts', '--state-dir', dir, '--', 'sleep', '0.3']);
  } finally {
    clearInterval(poll);
  }
  assert.equal(code, 0);
  assert.ok(seen.length >= 5, `polled ${seen.length} times during the run`);
  assert.deepEqual([...new Set(seen)], [false]);
  assert.equal(checkpointerDue(file), false);
});

test('a supervisor opened with checkpointer: false has none; the default still has one', async () => {
  const dir = state();
  const file = join(dir, 'supervisor.db');
  const quiet = ProcessSupervisor.open({ stateDir: dir, checkpointer: false });
  try {
    assert.equal(checkpointerRunning(file), false);
  } finally {
    await quiet.close();
  }
  const usual = ProcessSupervisor.open({ stateDir: dir });
  try {
    assert.equal(checkpointerDue(file) || checkpointerRunning(file), true);
  } finally {
    await usual.close();
  }
});

test('the library exec() (the same one-tree supervisor) starts no checkpoint thread either', async () => {
  const { exec } = await import('../../src/session/exec.js');
  const dir = state();
  const file = join(dir, 'supervisor.db');
  const seen: boolean[] = [];
  const poll = setInterval(() => seen.push(checkpointerRunning(file)), 10);
  try {
    const out = await exec({ command: 'sleep', args: ['0.3'], stateDir: dir, artifacts: false });
    assert.equal(out.reason, 'exited');
    assert.equal(out.exitCode, 0);
  } finally {
    clearInterval(poll);
  }
  assert.ok(seen.length >= 5, `polled ${seen.length} times during the run`);
  assert.deepEqual([...new Set(seen)], [false]);
});
