// examples/demo, as a newcomer runs it (the README's main job): one offline session that uses a
// builtin, a background task, an authored tool, an MCP server from npm, a delegated child agent and session_search; the
// audit chain holds and the task's log is kept. Without a terminal session_search is refused; with
// --approve session_search it answers from the stored history.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI, tempDir } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';

const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
// audit verify runs in-process through `main(argv, io)` (issue 17); the runs and logs are real processes.
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 90_000 });

describe('examples/demo', { skip: process.platform !== 'linux' && 'the demo script runs POSIX commands' }, () => {
  const state = tempDir('demo-');
  after(() => state.remove());

  test('runs offline: terminal, a background task, word_count out of process, the memory MCP server; the audit chain holds', async () => {
    const r = cli('run', DEMO, '--json', '--state-dir', state.path);
    assert.equal(r.status, 0, r.stderr);
    const ev = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const results = ev.filter((e) => e.type === "tool_result") as Record<string, any>[] & { length: 7 };
    assert.deepEqual(
      results.map((e) => [e.tool, e.ok]),
      [['terminal', true], ['yield_until', true], ['task_list', true], ['word_count', true], ['memory_read_graph', true], ['session_search', false], ['delegate_task', true]],
    );
    // Nobody to ask: refused before any history was read, with the way to allow it.
    assert.match(JSON.stringify(results[5]), /APPROVAL_DENIED[\s\S]*--approve session_search/);
    // The child agent counted with word_count in its own session; its answer is the tool result.
    assert.equal(results[6]!.view.output, '8');
    assert.equal(results[6]!.view.detail.status, 'completed');
    assert.match(results[6]!.view.detail.child_session, /^se_/);
    const tasks = JSON.parse(results[2]!.view.output).tasks as { id: string; status: string; exit_code: number }[];
    assert.deepEqual(tasks.map((t) => [t.status, t.exit_code]), [['completed', 0]]);
    assert.deepEqual(JSON.parse(results[3]!.view.output), { words: 6, lines: 1, characters: 40 });
    assert.equal(results[3]!.view.detail.tier, 'process');
    assert.match(results[4]!.view.output, /"entities"/);
    const end = ev.at(-1)!;
    assert.deepEqual([end.type, end.outcome, end.turns], ['end', 'completed', 6]);
    const logs = cli('logs', tasks[0]!.id, '--state-dir', state.path);
    assert.match(logs.stdout, /checking the workspace[\s\S]*check finished/);
    const v = await runMain('audit', 'verify', '--session', ev[0]!.session, '--state-dir', state.path);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  test('with --approve session_search, the search answers with snippets of this session only', () => {
    const r = cli('run', DEMO, '--json', '--approve', 'session_search', '--state-dir', state.path);
    assert.equal(r.status, 0, r.stderr);
    const ev = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const search = ev.find((e) => e.type === 'tool_result' && e.tool === 'session_search')!;
    assert.equal(search.ok, true, JSON.stringify(search));
    const body = JSON.parse(search.view.output) as { scope: string; count: number; results: { session_id: string; snippet: string }[] };
    assert.equal(body.scope, 'session');
    assert.ok(body.count >= 3, search.view.output);
    // The first test's session holds the same words: this one sees only its own.
    assert.deepEqual([...new Set(body.results.map((h) => h.session_id))], [ev[0]!.session]);
    assert.ok(body.results.some((h) => /\[checking\] the workspace/.test(h.snippet)), search.view.output);
  });
});
