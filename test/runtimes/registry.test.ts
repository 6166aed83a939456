// The runtime registry and the effect bound: one interface; every agent.yaml target is
// registered; the bound comparison really tells an external runtime that exposes a built-in apart.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildCatalog } from '../../src/catalog/index.js';
import { RUNTIME_TARGETS } from '../../src/core/agent-schema.js';
import { dirname } from 'node:path';
import { boundDigest, claudeCodeAdapter, externalCliRuntime, localRuntime, registeredRuntimes, resolveCliBinary, runtimeFor, RuntimeSetupError } from '../../src/runtimes/index.js';
import { fixture } from '../helpers/procs.js';
import { loadCore } from '../../src/core/index.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

describe('runtime registry', () => {
  test('every runtime agent.yaml may name is registered, and nothing else', () => {
    assert.deepEqual(registeredRuntimes().map((r) => r.name).sort(), [...RUNTIME_TARGETS].sort());
    assert.equal(runtimeFor('local'), localRuntime);
    assert.throws(() => runtimeFor('codex'), RuntimeSetupError);
  });

  test('the bound catches an adapter that would expose a built-in, and refuses one that drops --tools ""', async () => {
    const core = await loadCore(makeCore({ 'agent.yaml': 'name: r\ntoolsets: [terminal]\ngrants: [terminal.exec]\n' }));
    const catalog = buildCatalog({ core, principal: 'local:test' });
    const local = boundDigest(localRuntime.effectBound(catalog));
    assert.equal(boundDigest(runtimeFor('claude-code').effectBound(catalog)), local);
    // An adapter whose argv allows Bash but whose own check was skipped: the bound differs.
    const leaky = externalCliRuntime({
      ...claudeCodeAdapter,
      name: 'leaky',
      buildArgv: (i) => claudeCodeAdapter.buildArgv(i).map((a) => (a.startsWith('mcp__supervisor__') ? `${a},Bash` : a)),
      checkArgv: () => undefined,
    });
    const leakyBound = leaky.effectBound(catalog);
    assert.deepEqual(leakyBound.builtins, ['Bash']);
    assert.notEqual(boundDigest(leakyBound), local);
    // With the real check, the same argv is refused before any bound (or process) exists.
    const checked = externalCliRuntime({ ...claudeCodeAdapter, name: 'checked', buildArgv: (i) => claudeCodeAdapter.buildArgv(i).filter((a, k, all) => a !== '--tools' && all[k - 1] !== '--tools') });
    assert.throws(() => checked.effectBound(catalog), /--tools exactly once/);
    removeTempCores();
  });

  test('the CLI is found through its environment variable (absolute paths only) or by name on PATH', () => {
    const fake = fixture('fake-claude/claude');
    assert.equal(resolveCliBinary(claudeCodeAdapter, { SUPERVISOR_CLAUDE_BIN: fake }), fake);
    assert.equal(resolveCliBinary(claudeCodeAdapter, { PATH: `/nonexistent:${dirname(fake)}` }), fake);
    assert.throws(() => resolveCliBinary(claudeCodeAdapter, { SUPERVISOR_CLAUDE_BIN: 'test/fixtures/fake-claude/claude' }), /absolute path/);
    assert.throws(() => resolveCliBinary(claudeCodeAdapter, { PATH: '/nonexistent' }), /no claude on PATH; install it or set SUPERVISOR_CLAUDE_BIN/);
  });
});
