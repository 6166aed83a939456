// limits.max_cost_usd on the local runtime (issue 18: "cost ... reserved from the parent's
// remainder"): the supervisor meters each model request from the usage the provider reports and the
// prices the core declares (model.pricing), stops a session whose pool is spent before its next
// request, stops a child whose share is spent with budget_exhausted, and refuses a cost limit it
// cannot meter (a remote model without prices) before any request leaves. The model is scripted
// (offline); the sessions, store and tool calls are real.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSession, type RuntimeEvent } from '../../src/index.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { tempDir } from '../helpers/procs.js';

const yaml = (v: unknown): string => JSON.stringify(v);
/** $1 per million input tokens, $5 per million output tokens. */
const PRICING = { input_usd_per_mtok: 1, output_usd_per_mtok: 5 };
/** 10,000 in and 1,000 out: 0.01 + 0.005 = 0.015 USD at PRICING. */
const COSTLY = { input_tokens: 10_000, output_tokens: 1_000 };

describe('limits.max_cost_usd, metered by the supervisor', () => {
  const states: { remove(): void }[] = [];
  after(() => {
    for (const s of states) s.remove();
    removeTempCores();
  });
  const stateDir = (): string => {
    const t = tempDir('cost-');
    states.push(t);
    return t.path;
  };

  async function run(core: string, dir = stateDir()) {
    const events: RuntimeEvent[] = [];
    const s = await openSession({ core, stateDir: dir });
    try {
      const r = await s.runSession({ onEvent: (e) => void events.push(e) });
      return { r, events, dir };
    } finally {
      await s.close();
    }
  }

  test('the session stops before the request that would start over its limit: limit_hit (cost), the rest of the script never asked', async () => {
    const core = makeCore({
      'agent.yaml': yaml({ name: 'spender', limits: { max_cost_usd: 0.02 }, model: { provider: 'scripted', script: 'script.yaml', pricing: PRICING } }),
      // 0.015 + 0.015 = 0.03: the second request is made (0.005 left), the third is not.
      'script.yaml': yaml({ turns: [{ tool_calls: [{ name: 'tools_list', arguments: {} }], usage: COSTLY }, { tool_calls: [{ name: 'tools_list', arguments: {} }], usage: COSTLY }, { text: 'never reached' }] }),
    });
    const { r, events } = await run(core);
    assert.equal(r.outcome, 'limit_hit');
    const hit = events.find((e) => e.type === 'limit_hit') as { which?: string } | undefined;
    assert.equal(hit?.which, 'cost');
    const costs = events.filter((e) => e.type === 'assistant').map((e) => (e as { costUsd?: number }).costUsd);
    assert.deepEqual(costs.map((c) => Number(c!.toFixed(6))), [0.015, 0.015], 'two requests, each metered');
    assert.ok(!events.some((e) => e.type === 'final'), 'the third turn was never asked for');
  });

  test('under the limit the session completes, each request metered', async () => {
    const core = makeCore({
      'agent.yaml': yaml({ name: 'thrifty', limits: { max_cost_usd: 1 }, model: { provider: 'scripted', script: 'script.yaml', pricing: PRICING } }),
      'script.yaml': yaml({ turns: [{ tool_calls: [{ name: 'tools_list', arguments: {} }], usage: COSTLY }, { text: 'done', usage: COSTLY }] }),
    });
    const { r, events } = await run(core);
    assert.equal(r.outcome, 'completed');
    assert.equal(events.filter((e) => e.type === 'assistant' && (e as { costUsd?: number }).costUsd !== undefined).length, 2);
  });

  test('a remote model without model.pricing and a cost limit: refused before any request (COST_UNMETERED), naming the fix', async () => {
    let connections = 0;
    const listener = createServer((sock) => {
      connections++;
      sock.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as { port: number }).port;
    try {
      const core = makeCore({
        'agent.yaml': yaml({ name: 'remote', limits: { max_cost_usd: 0.5 }, network: { allow_cidrs: ['127.0.0.1/32'] }, model: { provider: 'anthropic', model: 'claude-test', base_url: `http://127.0.0.1:${port}` } }),
      });
      const s = await openSession({ core, stateDir: stateDir() });
      try {
        await assert.rejects(s.runSession({ prompt: 'hi' }), (err: Error & { code?: string }) => {
          assert.equal(err.code, 'COST_UNMETERED');
          assert.match(err.message, /model\.pricing: \{ input_usd_per_mtok/);
          return true;
        });
      } finally {
        await s.close();
      }
      assert.equal(connections, 0, 'nothing was sent to the model');
    } finally {
      listener.close();
    }
  });

  test("a child whose cost share is spent ends budget_exhausted; what it spent is the parent's, so the parent stops too", async () => {
    const core = makeCore({
      'agent.yaml': yaml({ name: 'parent', toolsets: ['agents'], grants: ['agent.spawn'], approval: { default: 'auto' }, limits: { max_cost_usd: 0.02 }, model: { provider: 'scripted', script: 'script.yaml', pricing: PRICING } }),
      'script.yaml': yaml({ turns: [{ tool_calls: [{ name: 'delegate_task', arguments: { agent: 'spender', task: 'spend' } }] }, { text: 'parent done' }] }),
      'agent/agents/spender.yaml': yaml({ description: 'spends', model: { provider: 'scripted', script: 'spender.yaml', pricing: PRICING } }),
      // One 0.015 request fits the 0.02 share, the second (0.015 more) is made with 0.005 left, the third is not.
      'spender.yaml': yaml({ turns: [{ tool_calls: [{ name: 'tools_list', arguments: {} }], usage: COSTLY }, { tool_calls: [{ name: 'tools_list', arguments: {} }], usage: COSTLY }, { text: 'never' }] }),
    });
    const { r, events, dir } = await run(core);
    // The child's 0.03 is drawn from the parent's 0.02 pool: the parent makes no request after it.
    assert.equal(r.outcome, 'limit_hit');
    assert.equal((events.find((e) => e.type === 'limit_hit') as { which?: string } | undefined)?.which, 'cost');
    assert.ok(!events.some((e) => e.type === 'final'), "the parent's 'parent done' turn was never asked for");
    const db = new Database(join(dir, 'supervisor.db'), { readonly: true });
    try {
      const task = db.prepare("SELECT metadata, reason FROM tasks WHERE kind = 'agent.spawn'").get() as { metadata: string; reason: string };
      const meta = JSON.parse(task.metadata) as { status: string; budget: { reserved: { costUsd: number }; used: { costUsd: number } } };
      assert.equal(meta.status, 'budget_exhausted');
      assert.match(task.reason, /0\.02 USD were used up/);
      assert.equal(meta.budget.reserved.costUsd, 0.02, 'the whole remainder was its share');
      assert.equal(Number(meta.budget.used.costUsd.toFixed(6)), 0.03);
    } finally {
      db.close();
    }
  });
});
