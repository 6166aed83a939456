// A supervisor SIGKILLed while a grandchild agent waits (issue 18): `supervisor reconcile` finds
// every session of the delegation tree, its tasks and its pending approval, marks them interrupted,
// and kills the MCP server tree the levels shared (each passed its own gate and joined the root's
// connection): no survivor. Real processes, real SQLite.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { alive, CLI, pidsWithCmdline, tempDir, waitFor } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { query as storeQuery, type Row } from '../helpers/store-query.js';
import { runMain } from '../helpers/cli.js';

/** The store as an outside observer reads it; nothing while it does not exist yet. */
function query(state: string, sql: string, ...args: unknown[]): Row[] {
  try {
    return storeQuery(state, sql, ...args);
  } catch {
    return [];
  }
}

const j = (v: unknown): string => JSON.stringify(v);

describe('delegation: a killed supervisor with grandchildren running', { skip: process.platform !== 'linux' && 'the marker sweep is Linux here' }, () => {
  const state = tempDir('deleg-crash-');
  const strays: number[] = [];
  after(() => {
    for (const pid of strays) if (alive(pid)) process.kill(pid, 'SIGKILL');
    state.remove();
    removeTempCores();
  });

  test('reconcile interrupts every session, task and pending approval of the tree; no server tree survives', async () => {
    const marker = `deleg-crash-${process.pid}-${Date.now()}`;
    const server = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
    const all = ['agent.spawn', 'terminal.exec', 'mcp.connect:memory', 'mcp.call:memory'];
    const def = (script: string) => j({ description: 'd', toolsets: ['agents', 'terminal'], grants: all, model: { provider: 'scripted', script } });
    const core = makeCore({
      'agent.yaml': j({ name: 'root', toolsets: ['agents', 'terminal'], grants: all, approval: { default: 'auto' }, model: { provider: 'scripted', script: 'script.yaml' } }),
      'script.yaml': j({ turns: [{ tool_calls: [{ name: 'delegate_task', arguments: { agent: 'middle', task: 'go on' } }] }, { text: 'done' }] }),
      'agent/agents/middle.yaml': def('middle.yaml'),
      'middle.yaml': j({ turns: [{ tool_calls: [{ name: 'delegate_task', arguments: { agent: 'leaf', task: 'wait' } }] }, { text: 'done' }] }),
      'agent/agents/leaf.yaml': def('leaf.yaml'),
      // The terminal asks; the run waits for an operator (--await-approval) while the tree is up.
      'leaf.yaml': j({ turns: [{ tool_calls: [{ name: 'terminal', arguments: { command: 'touch never' } }] }, { text: 'done' }] }),
      // Each level passes its own connect gate and joins the root's live connection; the marker in
      // the server's arguments finds every process of it.
      'agent/mcp/memory.yaml': j({ name: 'memory', transport: { type: 'stdio', command: process.execPath, args: [server, marker], cwd: '.' }, approval: { connect: 'auto', call: 'auto' } }),
    });
    const run = spawn(process.execPath, [CLI, 'run', core, '--await-approval', '60', '--state-dir', state.path], { stdio: ['ignore', 'ignore', 'ignore'] });
    await waitFor('the leaf waiting for its approval', () => query(state.path, "SELECT 1 FROM pending_approvals WHERE status = 'pending'")[0], 60_000);
    // The grandchild's request is where the operator looks, tagged with the whole chain (codex#23324:
    // a child's request nobody saw).
    const listed = await runMain('approvals', '--json', '--state-dir', state.path);
    const [req] = JSON.parse(listed.stdout).pending as { summary: string; chain: string[]; sessionId: string }[];
    assert.match(req!.summary, /^\[root → middle → leaf\] /);
    const sessions = query(state.path, 'SELECT id FROM sessions ORDER BY created_at, rowid').map((s) => s.id);
    assert.deepEqual(req!.chain, sessions, 'root, middle, leaf: the session ids from the root down');
    assert.equal(req!.chain.at(-1), req!.sessionId);
    const text = await runMain('approvals', '--state-dir', state.path);
    assert.match(text.stdout, new RegExp(`delegated: ${sessions.join(' → ')}`));
    const servers = await waitFor('the shared server', () => (pidsWithCmdline(marker).length >= 1 ? pidsWithCmdline(marker) : null), 20_000);
    assert.equal(servers.length, 1, 'one server for the three levels: the children joined the root\'s connection');
    strays.push(...servers);
    const gone = new Promise((r) => run.once('exit', r));
    run.kill('SIGKILL');
    await gone;
    assert.equal(query(state.path, "SELECT count(*) AS n FROM sessions WHERE status = 'running'")[0]?.n, 3, 'root, middle and leaf were running');

    const r = spawnSync(process.execPath, [CLI, 'reconcile', '--json', '--state-dir', state.path], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(servers.filter(alive), [], 'the shared server tree was killed');
    assert.deepEqual(query(state.path, 'SELECT DISTINCT status FROM sessions').map((s) => s.status), ['interrupted']);
    const tasks = query(state.path, "SELECT status FROM tasks WHERE kind = 'agent.spawn'");
    assert.deepEqual(tasks.map((t) => t.status), ['interrupted', 'interrupted']);
    assert.deepEqual(query(state.path, 'SELECT DISTINCT status FROM pending_approvals').map((p) => p.status), ['interrupted']);
    const tree = spawnSync(process.execPath, [CLI, 'subagents', '--json', '--state-dir', state.path], { encoding: 'utf8', timeout: 30_000 });
    const roots = JSON.parse(tree.stdout).subagents as { status: string; children: { status: string }[] }[];
    assert.deepEqual(roots.map((n) => [n.status, n.children.map((c) => c.status)]), [['interrupted', ['interrupted']]]);
  });
});
