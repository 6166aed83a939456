// ctx.agents.spawn (issue 18): an authored tool asks the supervisor for a child agent. Real tool
// hosts (process tier in bubblewrap, and the trusted thread tier), a real store, the scripted
// model. What the tool got, and what the store shows, when it holds every gate and when it lacks
// one: the manifest's `capabilities: [agent.spawn]` (checked in the host), the session's agent.spawn
// grant and delegate_task in its catalog (checked by the supervisor, as delegate_task's own
// effect with the same approval and audit), and the depth limit (the child's catalog has no
// delegate_task at the limit, so a tool in the child cannot go deeper).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSession, type RuntimeEvent } from '../../src/index.js';
import { sandboxAvailability } from '../../src/process/index.js';
import { SPAWNS_PER_CALL } from '../../src/ipc/index.js';
import { answerSpawn } from '../../src/adapters/authored/tool-host-worker.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { tempDir } from '../helpers/procs.js';
import { script } from '../helpers/model-script.js';

const yaml = (v: unknown): string => JSON.stringify(v);

/** The authored tool: spawns the child it is told to, returns what it got or the error's code. */
const SPAWNER_CODE = `export async function handler(input, ctx) {
  try {
    const child = await ctx.agents.spawn({ agent: input.agent, task: input.task });
    return { ok: true, status: child.status, answer: child.answer };
  } catch (err) {
    return { ok: false, code: err.code ?? null, message: String(err.message) };
  }
}
`;

function spawnerFiles(capabilities: string[], tier: 'process' | 'thread'): Record<string, string> {
  return {
    'agent/tools/spawner/tool.yaml': yaml({
      name: 'spawner',
      description: 'Starts a child agent from code.',
      input_schema: { type: 'object', properties: { agent: { type: 'string' }, task: { type: 'string' } }, required: ['agent', 'task'] },
      capability: 'tool.call:spawner',
      approval: 'auto',
      capabilities,
      isolation: { tier },
      entry: 'index.mjs',
    }),
    'agent/tools/spawner/index.mjs': SPAWNER_CODE,
  };
}

interface CoreSpec {
  capabilities?: string[];
  tier?: 'process' | 'thread';
  grants?: string[];
  toolsets?: string[];
  limits?: Record<string, unknown>;
  /** The child definition's own tools and script. */
  child?: { def?: Record<string, unknown>; script?: string };
}

function coreOf(o: CoreSpec): string {
  const tier = o.tier ?? 'process';
  return makeCore({
    'agent.yaml': yaml({
      name: 'parent',
      toolsets: o.toolsets ?? ['agents'],
      grants: o.grants ?? ['agent.spawn', 'tool.call:spawner'],
      approval: { default: 'auto' },
      model: { provider: 'scripted', script: 'script.yaml' },
      ...(tier === 'thread' ? { tool_hosts: { trusted: ['spawner'] } } : {}),
      ...(o.limits ? { limits: o.limits } : {}),
    }),
    'script.yaml': script({ tools: [{ name: 'spawner', arguments: { agent: 'helper', task: 'say the word' } }] }, { text: 'parent done' }),
    'agent/agents/helper.yaml': yaml({ description: 'the helper child', model: { provider: 'scripted', script: 'helper-script.yaml' }, ...o.child?.def }),
    'helper-script.yaml': o.child?.script ?? script({ text: 'helper says bonjour' }),
    ...spawnerFiles(o.capabilities ?? ['agent.spawn'], tier),
  });
}

const sandboxed = sandboxAvailability().usable;

describe('ctx.agents.spawn from an authored tool', { skip: process.platform !== 'linux' && 'the process tier runs in bubblewrap' }, () => {
  const states: { remove(): void }[] = [];
  after(() => {
    for (const s of states) s.remove();
    removeTempCores();
  });

  /** One user turn; the tool's own result and the store's tasks and events. */
  async function run(core: string) {
    const st = tempDir('spawn-');
    states.push(st);
    const s = await openSession({ core, stateDir: st.path });
    const results: Extract<RuntimeEvent, { type: 'tool_result' }>['outcome'][] = [];
    try {
      await s.runTurn('go', { onEvent: (e) => void (e.type === 'tool_result' && results.push(e.outcome)) });
    } finally {
      await s.close();
    }
    const db = new Database(join(st.path, 'supervisor.db'), { readonly: true });
    try {
      const tasks = db.prepare("SELECT * FROM tasks WHERE kind = 'agent.spawn' ORDER BY created_at, rowid").all() as Record<string, any>[];
      const events = (session: string) => db.prepare('SELECT kind, payload FROM runtime_events WHERE session_id = ? ORDER BY seq').all(session).map((e: any) => ({ kind: e.kind as string, payload: JSON.parse(e.payload) }));
      const toolMessages = (session: string) => (db.prepare("SELECT content FROM messages WHERE session_id = ? AND role = 'tool' ORDER BY rowid").all(session) as { content: string }[]).map((m) => m.content);
      const spawner = results.find((r) => r.tool === 'spawner');
      assert.ok(spawner?.ok, JSON.stringify(spawner));
      const got = JSON.parse(spawner.views.model.content) as { ok: boolean; status?: string; answer?: string; code?: string; message?: string };
      const childTools = tasks.map((t) => toolMessages(t.child_session_id as string));
      const childEvents = tasks.map((t) => events(t.child_session_id as string));
      return { session: s.id, got, tasks, parentEvents: events(s.id), childEvents, childTools };
    } finally {
      // better-sqlite3 reads eagerly: every row above is already in memory.
      db.close();
    }
  }

  for (const tier of ['process', 'thread'] as const) {
    test(`${tier} tier: with agent.spawn in the manifest and the session, the child runs as delegate_task's own audited effect and its answer is the tool's`, { skip: tier === 'process' && !sandboxed && 'bubblewrap is not available' }, async () => {
      const r = await run(coreOf({ tier }));
      assert.deepEqual([r.got.ok, r.got.status], [true, 'completed'], JSON.stringify(r.got));
      assert.match(r.got.answer!, /helper says bonjour/);
      assert.equal(r.tasks.length, 1, 'one agent.spawn task');
      const task = r.tasks[0]!;
      assert.equal(task.status, 'completed');
      // The nested effect is in the parent's chain like a model's call: delegate_task, agent.spawn, approved by policy.
      const nested = r.parentEvents.filter((e) => e.kind === 'effect.completed' && e.payload.tool === 'delegate_task');
      assert.equal(nested.length, 1, JSON.stringify(r.parentEvents.map((e) => e.kind)));
      assert.equal(nested[0]!.payload.capability, 'agent.spawn');
      const child = r.childEvents[0]!;
      assert.ok(child.some((e) => e.kind === 'delegation.started'), 'the child is its own session with its own chain');
    });
  }

  test('the manifest does not list agent.spawn: the host refuses, no task, no child', async () => {
    const r = await run(coreOf({ capabilities: [] }));
    assert.deepEqual([r.got.ok, r.got.code], [false, 'TOOL_CAPABILITY_DENIED'], JSON.stringify(r.got));
    assert.equal(r.tasks.length, 0);
    assert.ok(!r.parentEvents.some((e) => e.payload?.tool === 'delegate_task'), 'nothing reached the supervisor');
  });

  test('the manifest lists it, the session lacks the agent.spawn grant: refused by the supervisor, no task', async () => {
    const r = await run(coreOf({ grants: ['tool.call:spawner'] }));
    assert.deepEqual([r.got.ok, r.got.code], [false, 'CAPABILITY_DENIED'], JSON.stringify(r.got));
    assert.equal(r.tasks.length, 0);
  });

  test('the manifest lists it, the core has no agents toolset: refused by the supervisor, no task', async () => {
    const r = await run(coreOf({ toolsets: [] }));
    assert.deepEqual([r.got.ok, r.got.code], [false, 'CAPABILITY_DENIED'], JSON.stringify(r.got));
    assert.match(r.got.message!, /not in this session's catalog/);
    assert.equal(r.tasks.length, 0);
  });

  test('depth: a tool in a child at the depth limit cannot spawn a grandchild (the child has no delegate_task)', async () => {
    // max depth 1: the parent's child is at the limit. The child calls the same spawner tool.
    const r = await run(
      coreOf({
        limits: { max_delegation_depth: 1 },
        child: {
          def: { tools: ['spawner'], grants: ['tool.call:spawner', 'agent.spawn'] },
          script: script({ tools: [{ name: 'spawner', arguments: { agent: 'helper', task: 'go deeper' } }] }, { text: 'child done' }),
        },
      }),
    );
    assert.deepEqual([r.got.ok, r.got.status], [true, 'completed'], JSON.stringify(r.got));
    assert.equal(r.tasks.length, 1, 'only the first child: no grandchild task');
    const child = r.childEvents[0]!;
    assert.ok(child.some((e) => e.kind === 'effect.completed' && e.payload.tool === 'spawner'), 'the child\'s spawner ran');
    // What the child's spawner returned (its stored tool message): the supervisor's refusal.
    const inner = r.childTools[0]!.map((c) => JSON.parse((JSON.parse(c) as { content: string }).content) as { ok: boolean; code?: string; message?: string });
    assert.deepEqual(inner.map((x) => [x.ok, x.code]), [[false, 'CAPABILITY_DENIED']], JSON.stringify(r.childTools));
    assert.match(inner[0]!.message!, /not in this session's catalog/);
  });
});

describe('answerSpawn: the supervisor side of one spawn frame', () => {
  test('past SPAWNS_PER_CALL a frame is a protocol breach: no hook call, no answer', async () => {
    let asked = 0;
    const sent: unknown[] = [];
    const hooks = { onSpawn: async () => (asked++, { ok: true, status: 'completed', text: 'hi' }) };
    const frame = { type: 'spawn' as const, id: 'c1', seq: 1, request: { agent: 'a', task: 't' } };
    assert.equal(answerSpawn(hooks, frame, SPAWNS_PER_CALL, () => true, (m) => sent.push(m)), true);
    assert.equal(answerSpawn(hooks, frame, SPAWNS_PER_CALL + 1, () => true, (m) => sent.push(m)), false);
    await new Promise((r) => setImmediate(r));
    assert.equal(asked, 1);
    assert.deepEqual(sent, [{ type: 'spawned', id: 'c1', seq: 1, ok: true, status: 'completed', text: 'hi' }]);
  });

  test('a hook that throws is an answer (AGENT_SPAWN_FAILED); a call already over gets none', async () => {
    const sent: unknown[] = [];
    const frame = { type: 'spawn' as const, id: 'c2', seq: 2, request: { agent: 'a', task: 't' } };
    answerSpawn({ onSpawn: async () => Promise.reject(new Error('boom')) }, frame, 1, () => true, (m) => sent.push(m));
    answerSpawn({ onSpawn: async () => ({ ok: true, status: 'completed', text: 'late' }) }, frame, 2, () => false, (m) => sent.push(m));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(sent, [{ type: 'spawned', id: 'c2', seq: 2, ok: false, status: 'AGENT_SPAWN_FAILED', text: 'boom' }]);
  });
});
