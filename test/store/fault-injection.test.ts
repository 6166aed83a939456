// The test-only crash hook (SUPERVISOR_FAULT_AT, decision 57): its grammar, that it kills only the
// process that reads it, and that no child inherits it.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { parseFaultPlan } from '../../src/store/fault-injection.js';
import { CLI, tempDir } from '../helpers/procs.js';

describe('SUPERVISOR_FAULT_AT', () => {
  const state = tempDir('fault-hook-');
  after(() => state.remove());
  const exec = (value: string, ...cmd: string[]) =>
    spawnSync(process.execPath, [CLI, 'exec', '--state-dir', state.path, '--', ...cmd], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SUPERVISOR_FAULT_AT: value } });

  test('the grammar: <point>:<n>, commit|mid-commit:<kind|*>:<n>; anything else is refused with the reason', () => {
    assert.deepEqual(parseFaultPlan('spawn:2'), { point: 'spawn', kind: null, n: 2 });
    assert.deepEqual(parseFaultPlan('commit:effect.completed:1'), { point: 'commit', kind: 'effect.completed', n: 1 });
    assert.deepEqual(parseFaultPlan('mid-commit:*:40'), { point: 'mid-commit', kind: '*', n: 40 });
    for (const bad of ['spawn', 'spawn:0', 'spawn:x', 'commit:1', 'kill:1', 'commit:Bad Kind:1', 'task-running:1:2']) {
      assert.equal(typeof parseFaultPlan(bad), 'string', bad);
    }
  });

  test('the supervisor that reads it dies at the point; its children never see the variable', () => {
    const child = exec('spawn:2', 'sh', '-c', 'printf %s "${SUPERVISOR_FAULT_AT-unset}"');
    assert.equal(child.status, 0, child.stderr);
    assert.equal(child.stdout, 'unset');
    const killed = exec('spawn:1', 'true');
    assert.equal(killed.signal, 'SIGKILL');
  });

  test('a value that does not parse is ignored with one line on stderr', () => {
    const r = exec('spawn', 'true');
    assert.equal(r.status, 0);
    assert.match(r.stderr, /SUPERVISOR_FAULT_AT="spawn" ignored: /);
  });
});
