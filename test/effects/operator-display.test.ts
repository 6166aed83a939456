// What the operator sees of a call: the approval prompt's preview and action line pass the
// redactor (a model can put a known secret's value into its arguments, and a pending request is
// stored), and a long call reports "still running" beats until it ends.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadCore } from '../../src/core/index.js';
import { buildCatalog } from '../../src/catalog/index.js';
import { EffectRuntime } from '../../src/effects/index.js';
import { approvalDecision, ApprovalBroker, ApprovalRules, RuleApprover, type Approver, type ApprovalRequest } from '../../src/policy/index.js';
import { SessionStore } from '../../src/store/index.js';
import { SecretStore } from '../../src/secrets/index.js';
import { makeCore } from '../core/temp-core.js';
import { runtimeSuite } from './runtime-fixture.js';

const SRC = 'SV_OPERATOR_DISPLAY_SECRET';

describe("the operator's view of a call", { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const suite = runtimeSuite();

  async function runtime(o: { approver: Approver; onProgress?: (p: { tool: string; progress: number; message?: string }) => void; heartbeatMs?: number }) {
    const dir = makeCore({ 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nsecrets:\n  GH_TOKEN: { env: ${SRC} }\n` });
    const core = await loadCore(dir);
    const catalog = buildCatalog({ core, principal: 'p' });
    const secrets = SecretStore.fromCore(core);
    const rt = new EffectRuntime({
      catalog,
      broker: new ApprovalBroker({ approver: o.approver }),
      supervisor: suite.supervisor(),
      db: suite.db(),
      secrets,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(o.heartbeatMs ? { heartbeatMs: o.heartbeatMs } : {}),
    });
    const session = new SessionStore(suite.db()).createSession({ principal: 'p' }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
    const call = (args: Record<string, unknown>) => rt.execute(rt.request('terminal', args)!, { principal: 'p', sessionId: session.id });
    return { secrets, call };
  }

  test('a known secret value in the arguments is redacted in the preview and the action line', async () => {
    const value = `sv-${randomBytes(12).toString('hex')}`;
    process.env[SRC] = value;
    const asked: ApprovalRequest[] = [];
    const s = await runtime({ approver: { decide: async (r) => (asked.push(r), approvalDecision(false, 'operator', 'no')) } });
    (await s.secrets.resolve('GH_TOKEN')).wipe?.();
    const out = await s.call({ command: `curl -H 'x: ${value}' example.invalid`, env: { NOTE: value } });
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
    assert.equal(asked.length, 1);
    const shown = JSON.stringify([asked[0]!.actionSummary, asked[0]!.preview]);
    assert.ok(!shown.includes(value), shown);
    assert.match(asked[0]!.actionSummary, /\[REDACTED\]/);
    assert.match(asked[0]!.preview.text, /\[REDACTED\]/);
    JSON.parse(asked[0]!.preview.text); // still valid JSON
  });

  test('a long call reports "still running" beats to the operator, and none after it ends', async () => {
    const beats: { tool: string; progress: number; message?: string }[] = [];
    const s = await runtime({ approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), onProgress: (p) => beats.push(p), heartbeatMs: 100 });
    const t0 = performance.now();
    const out = await s.call({ command: 'sleep 0.55' });
    const took = performance.now() - t0;
    assert.equal(out.ok, true, JSON.stringify(!out.ok && out.message));
    const n = beats.length;
    // One beat per 100 ms of the call's real length: a loaded machine stretches the call, not the rule.
    assert.ok(n >= 3 && n <= Math.ceil(took / 100) + 1, `${n} beats in ${Math.round(took)} ms`);
    assert.deepEqual([beats[0]!.tool, beats[0]!.message], ['terminal', 's, still running']);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(beats.length, n);
  });
});
