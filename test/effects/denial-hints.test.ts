// A denial without a terminal says what would allow the call, and only what would: a builtin's
// prompt cannot be relaxed by configuration (the terminal's read-only commands can be auto-approved),
// an authored tool's can, in its own tool.yaml. Nothing runs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { authoredToolHosts } from '../../src/adapters/authored/index.js';
import { NonInteractiveApprover } from '../../src/policy/index.js';
import { runtimeSuite } from './runtime-fixture.js';

const TOOL = `name: deploy
description: Would deploy.
input_schema:
  type: object
  properties: {}
capability: tool.call:deploy
approval: prompt
risk: high
entry: index.mjs
`;

describe('denial hints', () => {
  const suite = runtimeSuite();

  test('a builtin: configuration cannot relax it, the terminal points at auto_approve', async () => {
    const s = await suite.runtime({ files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n' }, approver: new NonInteractiveApprover(), principal: 'p' });
    const out = await s.runtime.execute(s.runtime.request('terminal', { command: 'touch marker' })!, s.ctx);
    assert.equal(out.ok, false);
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    const msg = !out.ok ? out.message : '';
    assert.match(msg, /--approve terminal/);
    assert.match(msg, /terminal is a builtin: configuration can make its approval stricter, never looser/);
    assert.match(msg, /approval\.auto_approve: \[read-only\]/);
    assert.doesNotMatch(msg, /set approval: auto/);
  });

  test('an authored tool: set approval: auto in the manifest that declares it', async (t) => {
    const s = await suite.runtime({
      files: { 'agent.yaml': 'name: t\ngrants: [tool.call:deploy]\n', 'agent/tools/deploy/tool.yaml': TOOL, 'agent/tools/deploy/index.mjs': 'export async function handler() { return 1; }\n' },
      approver: new NonInteractiveApprover(),
      principal: 'p',
    });
    const hosts = authoredToolHosts(suite.supervisor(), s.core);
    t.after(() => hosts.close());
    const out = await s.runtime.execute(s.runtime.request('deploy', {})!, s.ctx);
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    const msg = !out.ok ? out.message : '';
    assert.match(msg, /--approve deploy/);
    assert.match(msg, /set approval: auto where it is declared \(authored tool agent\/tools\/deploy\/tool\.yaml\)/);
    assert.doesNotMatch(msg, /builtin/);
    assert.equal(hosts.pools().length, 0, 'no tool host was started for a denied call');
  });
  test('an authored tool declared auto under approval.default: prompt: the denial names that setting, not the declaration (it is auto already)', async (t) => {
    const s = await suite.runtime({
      files: {
        'agent.yaml': 'name: t\ngrants: [tool.call:deploy]\napproval:\n  default: prompt\n',
        'agent/tools/deploy/tool.yaml': TOOL.replace('approval: prompt', 'approval: auto'),
        'agent/tools/deploy/index.mjs': 'export async function handler() { return 1; }\n',
      },
      approver: new NonInteractiveApprover(),
      principal: 'p',
    });
    const hosts = authoredToolHosts(suite.supervisor(), s.core);
    t.after(() => hosts.close());
    const entry = s.catalog.entryForCall('deploy')!;
    assert.deepEqual([entry.declaredApproval, entry.approval, entry.approvalFloor], ['auto', 'prompt', 'approval.default: prompt']);
    const out = await s.runtime.execute(s.runtime.request('deploy', {})!, s.ctx);
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    const msg = !out.ok ? out.message : '';
    assert.match(msg, /deploy is declared auto \(authored tool agent\/tools\/deploy\/tool\.yaml\); agent\.yaml's approval\.default: prompt makes it prompt: change that setting/);
    assert.doesNotMatch(msg, /set approval: auto where it is declared/);
  });

  test('a per-capability rule is named as the floor when it is the setting that tightened the entry', async () => {
    const s = await suite.runtime({
      files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  rules:\n    "terminal.*": deny\n' },
      approver: new NonInteractiveApprover(),
      principal: 'p',
    });
    const entry = s.catalog.entryForCall('terminal')!;
    assert.deepEqual([entry.approval, entry.approvalFloor], ['deny', 'approval.rules["terminal.*"]: deny']);
  });
});
