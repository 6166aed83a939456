import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CoreLoadError, parseScriptedModelScript } from '../../src/core/index.js';
import { hasIssue, loadFails, makeCore, removeTempCores } from './temp-core.js';

after(removeTempCores);

function refuse(text: string): CoreLoadError {
  try {
    parseScriptedModelScript(text, 'script.yaml');
  } catch (err) {
    assert.ok(err instanceof CoreLoadError);
    return err;
  }
  assert.fail('expected the script to be refused');
}

describe('ScriptedModelScript', () => {
  it('parses text turns and tool-call turns', () => {
    const s = parseScriptedModelScript(
      'turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: ls } }\n  - text: done\n',
      'script.yaml',
    );
    assert.deepEqual(s, { turns: [{ tool_calls: [{ name: 'terminal', arguments: { command: 'ls' } }] }, { text: 'done' }] });
  });

  it('keeps a hostile tool name, since the catalog must be the one to refuse it', () => {
    const s = parseScriptedModelScript("turns:\n  - tool_calls: [{ name: 'Rm -rf' }]\n  - text: x\n", 'script.yaml');
    assert.equal(s.turns[0]!.tool_calls![0]!.name, 'Rm -rf');
    assert.deepEqual(s.turns[0]!.tool_calls![0]!.arguments, {});
  });

  it('refuses a script that ends in tool calls', () => {
    const err = refuse('turns:\n  - tool_calls: [{ name: terminal, arguments: { command: ls } }]\n');
    hasIssue(err, 'script.yaml', 'turns[0]', 'would never end', "add a final turn with only text");
  });

  it('refuses an empty turn, an unknown key, non-mapping arguments and a repeated id', () => {
    const err = refuse(
      'turns:\n  - {}\n  - tool_calls: [{ id: c1, name: t, argument: {} }]\n  - tool_calls: [{ id: c1, name: t, arguments: ls }]\n  - { id: c2, name: t }\n  - text: end\n',
    );
    hasIssue(err, 'script.yaml', 'turns[0]', 'needs text, tool_calls or both');
    hasIssue(err, 'script.yaml', 'turns[1].tool_calls[0].argument', "unknown key 'argument'", "did you mean 'arguments'?");
    hasIssue(err, 'script.yaml', 'turns[2].tool_calls[0].arguments', 'must be a mapping, got a string');
    hasIssue(err, 'script.yaml', 'turns[3].id', "unknown key 'id'");
  });

  it('refuses duplicate call ids', () => {
    const err = refuse('turns:\n  - tool_calls: [{ id: c1, name: t }, { id: c1, name: t }]\n  - text: end\n');
    hasIssue(err, 'script.yaml', 'turns[0].tool_calls[1].id', "'c1' is already used at turns[0].tool_calls[0]");
  });

  it("is checked when a core loads, with issues naming the script's file", async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nmodel: { provider: scripted, script: s/run.yaml }\n', 's/run.yaml': 'turns: []\n' }));
    hasIssue(err, 's/run.yaml', 'turns', 'at least 1 item');
  });
});
