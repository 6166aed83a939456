// Input schemas are untrusted: compiled at load (a bad one is a load error at its line), and their
// patterns run on a linear-time engine, so no argument can hold the supervisor's event loop.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NonInteractiveApprover } from '../../src/policy/index.js';
import { runtimeSuite } from '../effects/runtime-fixture.js';
import { stallReport, withLoopLag } from '../helpers/loop-lag.js';
import { hasIssue, loadFails, makeCore, toolFiles } from './temp-core.js';

const schemaWith = (pattern: string) => `{ type: object, properties: { q: { type: string, pattern: ${JSON.stringify(pattern)} } } }`;

describe('input schemas of authored tools', () => {
  const suite = runtimeSuite();

  test("pattern '^(a+)+$' against 40 a's and '!' is rejected in milliseconds through the real validation path; the event loop keeps ticking", async () => {
    const s = await suite.runtime({
      files: { 'agent.yaml': 'name: t\ngrants: ["tool.call:redos"]\n', ...toolFiles('redos', { input_schema: schemaWith('^(a+)+$') }) },
      approver: new NonInteractiveApprover(),
      principal: 'local:test',
    });
    const good = await s.runtime.execute(s.runtime.request('redos', { q: 'a'.repeat(10) })!, s.ctx);
    assert.notEqual(!good.ok && good.code, 'ARGS_INVALID', 'a matching value passes the schema');
    const lag = await withLoopLag(() => s.runtime.execute(s.runtime.request('redos', { q: `${'a'.repeat(40)}!` })!, s.ctx));
    const out = lag.value;
    assert.equal(!out.ok && out.code, 'ARGS_INVALID', JSON.stringify(out));
    assert.match(!out.ok ? out.message : '', /must match pattern/);
    assert.ok(lag.cpuMs < 200, stallReport(lag));
  });

  test("pattern '(' is a load error naming the manifest, the field and its line", async () => {
    const err = await loadFails(makeCore(toolFiles('bad', { input_schema: schemaWith('(') })));
    const issue = hasIssue(err, 'agent/tools/bad/tool.yaml', 'input_schema.properties.q.pattern', 'missing closing )', 'RE2', 'rewrite it');
    assert.equal(issue.line, 3, 'the line of input_schema in the manifest');
  });

  test('lookahead, lookbehind and backreferences are load errors (the linear-time engine cannot run them)', async () => {
    for (const p of ['^(?=a)a$', '(?<=a)b', '(a)\\1']) {
      const err = await loadFails(makeCore(toolFiles('look', { input_schema: schemaWith(p) })));
      hasIssue(err, 'agent/tools/look/tool.yaml', 'input_schema.properties.q.pattern', 'linear-time engine');
    }
  });

  test('a patternProperties key RE2 rejects and a schema ajv rejects are load errors', async () => {
    const pp = await loadFails(makeCore(toolFiles('pp', { input_schema: '{ type: object, patternProperties: { "(?!x)": { type: string } } }' })));
    hasIssue(pp, 'agent/tools/pp/tool.yaml', 'input_schema.patternProperties["(?!x)"]', 'linear-time engine');
    const bad = await loadFails(makeCore(toolFiles('badtype', { input_schema: '{ type: object, properties: { q: { type: strin } } }' })));
    hasIssue(bad, 'agent/tools/badtype/tool.yaml', 'input_schema', 'is not a valid JSON Schema');
  });
});
