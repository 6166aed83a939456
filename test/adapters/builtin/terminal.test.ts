// The terminal builtin against real shells: workspace-bound cwd, allowlisted environment,
// whole-tree timeout, redaction.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessSupervisor } from '../../../src/process/index.js';
import { runTerminal, preflightTerminal } from '../../../src/adapters/builtin/terminal.js';
import { WorkspacePathError } from '../../../src/adapters/builtin/workspace-path.js';
import { markedPids, tempDir } from '../../helpers/procs.js';

describe('terminal builtin', { skip: process.platform !== 'linux' && 'the shell fixtures are POSIX; Linux CI runs them' }, () => {
  const state = tempDir();
  const ws = tempDir('supervisor-ws-');
  let sup: ProcessSupervisor;
  const ctx = () => ({ supervisor: sup, workspace: ws.path, deadlineMs: 10_000, signal: new AbortController().signal, redact: [] as string[] });

  before(() => {
    sup = ProcessSupervisor.open({ stateDir: state.path });
    mkdirSync(join(ws.path, 'sub'));
    symlinkSync('/etc', join(ws.path, 'escape'));
  });
  after(async () => {
    await sup.close();
    state.remove();
    ws.remove();
  });

  test('runs in the workspace and reports the audit view', async () => {
    const r = await runTerminal({ command: 'pwd; echo hi >&2' }, ctx());
    assert.equal(r.outcome.exitCode, 0);
    assert.equal(r.outcome.stdout.tail.trim(), r.audit.cwd);
    assert.equal(r.outcome.stderr.tail, 'hi\n');
    assert.equal(r.audit.shell, '/bin/sh');
    assert.ok(r.audit.envKeys.includes('PATH'));
    const sub = await runTerminal({ command: 'pwd', cwd: 'sub' }, ctx());
    assert.match(sub.outcome.stdout.tail, /\/sub\n$/);
  });

  test('a cwd outside the workspace is refused before anything runs', () => {
    for (const cwd of ['..', '/etc', 'escape', 'sub/../..', 'missing-dir']) {
      assert.throws(() => preflightTerminal({ command: 'true', cwd }, ws.path), (e: unknown) => e instanceof WorkspacePathError && /cwd/.test(e.message), cwd);
    }
  });

  test('the supervisor’s own environment does not reach the command', async () => {
    process.env.SUPERVISOR_TEST_API_TOKEN = 'tok_should_not_leak_123';
    try {
      const r = await runTerminal({ command: 'env' }, ctx());
      assert.doesNotMatch(r.outcome.stdout.tail, /tok_should_not_leak_123|SUPERVISOR_TEST_API_TOKEN/);
      assert.match(r.outcome.stdout.tail, /^SUPERVISOR_SPAWN_ID=sp_/m);
      assert.ok(!r.audit.envKeys.includes('SUPERVISOR_TEST_API_TOKEN'));
    } finally {
      delete process.env.SUPERVISOR_TEST_API_TOKEN;
    }
  });

  test('the timeout stops the whole tree, escapee included', async () => {
    const r = await runTerminal({ command: 'setsid sleep 60 & sleep 60', timeout: 0.5 }, { ...ctx(), graceMs: 200 });
    assert.equal(r.outcome.reason, 'timeout');
    assert.equal(r.outcome.killed.escapees, 1);
    assert.deepEqual(markedPids(r.outcome.spawnId), []);
  });

  test('the effect deadline clamps a longer requested timeout', async () => {
    const r = await runTerminal({ command: 'sleep 60', timeout: 60 }, { ...ctx(), deadlineMs: 300, graceMs: 100 });
    assert.equal(r.outcome.reason, 'timeout');
    assert.ok(r.outcome.durationMs < 5_000);
  });
});
