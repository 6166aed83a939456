// agent/agents/<name>.yaml: child agent definitions are read and validated like every core file;
// each problem names the file, the field and the fix.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadCore } from '../../src/core/index.js';
import { hasIssue, loadFails, makeCore, removeTempCores } from './temp-core.js';

const SCRIPTED = 'name: parent\nmodel:\n  provider: scripted\n  script: script.yaml\n';
const SCRIPT = 'turns:\n  - text: done\n';

describe('agent/agents/<name>.yaml', () => {
  after(() => removeTempCores());

  it('loads a definition with its defaults and its scripted model, sorted by name; the revision covers it', async () => {
    const dir = makeCore({
      'agent.yaml': SCRIPTED,
      'script.yaml': SCRIPT,
      'agent/agents/zeta.yaml': 'description: z\nmodel: { provider: scripted, script: child.yaml }\n',
      'agent/agents/alpha.yaml': 'description: counts\ninstructions: count\ntools: [word_count]\ngrants: [tool.call:word_count]\nlimits: { max_iterations: 3, max_tool_calls: 2, timeout_seconds: 30, max_cost_usd: 0.5 }\nmodel: { provider: scripted, script: child.yaml }\n',
      'child.yaml': SCRIPT,
    });
    const core = await loadCore(dir);
    assert.deepEqual(core.agents?.map((a) => a.name), ['alpha', 'zeta']);
    const alpha = core.agents![0]!;
    assert.deepEqual(alpha.limits, { max_iterations: 3, max_tool_calls: 2, timeout_seconds: 30, max_cost_usd: 0.5 });
    assert.deepEqual(alpha.toolsets, []);
    assert.equal(alpha.modelScript?.turns.length, 1);
    assert.equal(alpha.source.file, 'agent/agents/alpha.yaml');
    assert.ok(core.files.some((f) => f.path === 'child.yaml'), 'the child script is part of the revision');
    assert.equal(core.agents![1]!.instructions, '');
  });

  it('a core without agent/agents keeps its snapshot shape (no agents key)', async () => {
    const core = await loadCore(makeCore({}));
    assert.equal('agents' in core, false);
  });

  it('names the file, the field and the fix for each problem', async () => {
    const err = await loadFails(
      makeCore({
        'agent.yaml': SCRIPTED,
        'script.yaml': SCRIPT,
        'agent/agents/bad.yaml': 'description: b\nlimits: { max_depth: 9, max_iterations: 0 }\ngrants: ["*"]\nmodel: { provider: scripted, script: child.yaml }\n',
        'agent/agents/noscript.yaml': 'description: n\nmodel: { provider: scripted, script: missing.yaml }\n',
        'agent/agents/nomodel.yaml': 'description: n\n',
        'agent/agents/Upper.yaml': 'description: u\n',
        'agent/agents/other.yml': 'description: o\n',
        'child.yaml': SCRIPT,
      }),
    );
    hasIssue(err, 'agent/agents/bad.yaml', 'limits.max_depth', 'unknown key', 'remove it');
    hasIssue(err, 'agent/agents/bad.yaml', 'limits.max_iterations');
    hasIssue(err, 'agent/agents/bad.yaml', 'grants[0]');
    hasIssue(err, 'agent/agents/noscript.yaml', 'model.script', 'does not exist');
    hasIssue(err, 'agent/agents/nomodel.yaml', 'model', "agent.yaml's model is scripted");
    hasIssue(err, 'agent/agents/Upper.yaml', '', 'rename the file');
    hasIssue(err, 'agent/agents/other.yml', '', 'rename it to other.yaml');
  });
});
