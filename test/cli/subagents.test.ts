// `supervisor subagents`: the delegation tree from the store, owner-scoped. Another principal's
// session id reads exactly like a missing one, and its delegations never show.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession } from '../../src/index.js';
import { runMain } from '../helpers/cli.js';
import { tempDir } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const CORE = {
  'agent.yaml': JSON.stringify({ name: 'p', toolsets: ['tasks', 'agents'], grants: ['task.read', 'agent.spawn'], approval: { default: 'auto' }, model: { provider: 'scripted', script: 'script.yaml' } }),
  'script.yaml': JSON.stringify({ turns: [{ tool_calls: [{ name: 'delegate_task', arguments: { agent: 'kid', task: 'list' } }] }, { text: 'done' }] }),
  'agent/agents/kid.yaml': JSON.stringify({ description: 'k', toolsets: ['tasks'], grants: ['task.read'], limits: { max_tool_calls: 1 }, model: { provider: 'scripted', script: 'kid.yaml' } }),
  'kid.yaml': JSON.stringify({ turns: [{ tool_calls: [{ name: 'task_list', arguments: {} }] }, { tool_calls: [{ name: 'task_list', arguments: {} }] }, { text: 'never' }] }),
};

describe('supervisor subagents', () => {
  const state = tempDir('subagents-');
  after(() => {
    state.remove();
    removeTempCores();
  });

  async function delegateAs(principal?: string): Promise<string> {
    const s = await openSession({ core: makeCore(CORE), stateDir: state.path, ...(principal ? { principal } : {}) });
    try {
      await s.runTurn('go');
      return s.id;
    } finally {
      await s.close();
    }
  }

  test("shows the tree with status, scope and budget; another principal's session reads as missing", async () => {
    const mine = await delegateAs();
    const theirs = await delegateAs('other:mallory');
    const all = await runMain('subagents', '--json', '--state-dir', state.path);
    assert.equal(all.status, 0, all.stderr);
    const roots = JSON.parse(all.stdout).subagents as Record<string, any>[];
    assert.deepEqual(roots.map((n) => [n.parent_session, n.agent, n.status, n.depth]), [[mine, 'kid', 'budget_exhausted', 1]]);
    assert.deepEqual(roots[0]!.scope.grants, ['task.read']);
    // The resolved tool selection is the child's catalog: its toolsets, no delegate_task (not asked for).
    assert.deepEqual(roots[0]!.scope.tools, ['tools_list', 'task_list', 'task_status', 'task_control', 'yield_until']);
    assert.deepEqual(roots[0]!.budget.used.toolCalls, 1);
    const one = await runMain('subagents', '--session', mine, '--state-dir', state.path);
    assert.equal(one.status, 0);
    assert.match(one.stdout, /kid\s+budget_exhausted\s+depth 1/);
    const other = await runMain('subagents', '--session', theirs, '--state-dir', state.path);
    const missing = await runMain('subagents', '--session', 'se_000000000000000000000000', '--state-dir', state.path);
    assert.equal(other.status, 2);
    assert.equal(other.stderr.replace(theirs, 'ID'), missing.stderr.replace('se_000000000000000000000000', 'ID'), 'the same answer as a missing id');
    assert.equal(other.stdout, '');
  });

  test('--help says what it shows', async () => {
    const r = await runMain('subagents', '--help');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /Usage: supervisor subagents \[--session ID\] \[--json\]/);
  });
});
