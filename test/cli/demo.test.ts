// examples/demo, as a newcomer runs it: one offline session that uses a builtin, a background task,
// an authored tool and an MCP server from npm; the audit chain holds and the task's log is kept.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CLI, tempDir } from '../helpers/procs.js';

const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 90_000 });

describe('examples/demo', { skip: process.platform !== 'linux' && 'the demo script runs POSIX commands' }, () => {
  const state = tempDir('demo-');
  after(() => state.remove());

  test('runs offline: terminal, a background task, word_count out of process, the memory MCP server; the audit chain holds', () => {
    const r = cli('run', DEMO, '--json', '--state-dir', state.path);
    assert.equal(r.status, 0, r.stderr);
    const ev = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
    const results = ev.filter((e) => e.type === "tool_result") as Record<string, any>[] & { length: 5 };
    assert.deepEqual(
      results.map((e) => [e.tool, e.ok]),
      [['terminal', true], ['yield_until', true], ['task_list', true], ['word_count', true], ['memory_read_graph', true]],
    );
    const tasks = JSON.parse(results[2]!.view.output).tasks as { id: string; status: string; exit_code: number }[];
    assert.deepEqual(tasks.map((t) => [t.status, t.exit_code]), [['completed', 0]]);
    assert.deepEqual(JSON.parse(results[3]!.view.output), { words: 6, lines: 1, characters: 40 });
    assert.equal(results[3]!.view.detail.tier, 'process');
    assert.match(results[4]!.view.output, /"entities"/);
    const end = ev.at(-1)!;
    assert.deepEqual([end.type, end.outcome, end.turns], ['end', 'completed', 4]);
    const logs = cli('logs', tasks[0]!.id, '--state-dir', state.path);
    assert.match(logs.stdout, /checking the workspace[\s\S]*check finished/);
    const v = cli('audit', 'verify', '--session', ev[0]!.session, '--state-dir', state.path);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });
});
