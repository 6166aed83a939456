// `supervisor plan`: the runtime target per session and the effect bound, computed by every
// registered runtime and compared; a change of target is a substrate change, never authority.
// The first plan is the real binary; the others run in-process through `main(argv, io)` (plan only
// reads cores: issue 17, a plan start is about 1.5 CPU-seconds), with the same environment.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
const plan = (...args: string[]) => spawnSync(process.execPath, [CLI, 'plan', ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SUPERVISOR_CLAUDE_BIN: '' } });
const planInProcess = (...args: string[]) => runMain('plan', ...args);

describe('supervisor plan', () => {
  // The environment the spawned plan gets, for the in-process ones; restored after the file's tests.
  const saved = process.env.SUPERVISOR_CLAUDE_BIN;
  before(() => {
    process.env.SUPERVISOR_CLAUDE_BIN = '';
  });
  after(() => {
    if (saved === undefined) delete process.env.SUPERVISOR_CLAUDE_BIN;
    else process.env.SUPERVISOR_CLAUDE_BIN = saved;
    removeTempCores();
  });

  test('examples/demo: the bound is the same digest on local and claude-code; --runtime shows a substrate change only', async () => {
    const r = plan(DEMO, '--json');
    assert.equal(r.status, 0, r.stderr);
    const [p] = JSON.parse(r.stdout).sessions;
    assert.deepEqual([p.runtime.target, p.runtime.source, p.runtime.substrate, p.change], ['local', 'agent.yaml', 'in-process', null]);
    assert.deepEqual(p.runtimes.map((x: { name: string }) => x.name), ['local', 'claude-code']);
    assert.ok(p.runtimes.every((x: { digest: string }) => x.digest === p.digest));
    assert.deepEqual(p.effect_bound.builtins, []);
    assert.ok(p.effect_bound.operations.some((o: { name: string; capability: string }) => o.name === 'terminal' && o.capability === 'terminal.exec'), 'the shell is an explicit grant, visible');
    const ext = JSON.parse((await planInProcess(DEMO, '--json', '--runtime', 'claude-code')).stdout).sessions[0];
    assert.equal(ext.digest, p.digest, 'the same authority whichever runtime runs');
    assert.deepEqual(ext.change, { kind: 'runtime_target_change', from: 'local', to: 'claude-code', effect: 'execution substrate only', authority: 'unchanged' });
    assert.equal(ext.runtime.budgets.maxTurns, 8);
    const text = await planInProcess(DEMO, '--runtime', 'claude-code');
    assert.equal(text.status, 0);
    assert.match(text.stdout, /runtime_target_change: local → claude-code: execution substrate only; authority unchanged/);
    assert.match(text.stdout, new RegExp(`effect bound digest ${p.digest}`));
    assert.match(text.stdout, /built-in tools: none/);
  });

  test('one session per core; a wider grant is a different digest; ceilings clamp what a core asks', async () => {
    const narrow = makeCore({ 'agent.yaml': 'name: a\ntoolsets: [terminal]\n' });
    const wide = makeCore({ 'agent.yaml': 'name: b\nruntime: claude-code\ntoolsets: [terminal]\ngrants: [terminal.exec]\nlimits:\n  max_iterations: 500\n' });
    const r = await planInProcess(narrow, wide, '--json');
    assert.equal(r.status, 0, r.stderr);
    const [a, b] = JSON.parse(r.stdout).sessions;
    assert.notEqual(a.digest, b.digest, 'granting terminal.exec changes the bound');
    assert.deepEqual(a.effect_bound.operations.find((o: { name: string }) => o.name === 'terminal').granted, false);
    assert.equal(b.runtime.target, 'claude-code');
    assert.equal(b.runtime.budgets.maxTurns, 32);
    assert.match(b.runtime.budgets.clamped[0], /clamped to the supervisor's ceiling 32/);
    assert.equal((await planInProcess(narrow, '--runtime', 'codex')).status, 2);
  });
});
