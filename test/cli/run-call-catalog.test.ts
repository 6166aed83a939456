// supervisor run / call / catalog on the example core, as a user runs them: real CLI processes,
// real store, real process trees, the audit chain checked afterwards. What only reads the core or
// the flags (catalog without --discover, a broken core, --args that is not JSON) runs in-process
// through `main(argv, io)`: those fail or answer before a session, a store or a supervisor exists
// (issue 17: a run or catalog start is about 1.3 CPU-seconds).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { CLI, tempDir } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/core/', import.meta.url));
const dirs: { remove(): void }[] = [];
const state = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d.path;
};
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
/** The CLI as a child without blocking this process, so two long calls can run at once. */
const cliAsync = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
const lines = (s: string): any[] => s.trim().split('\n').map((l) => JSON.parse(l));

describe('run, call and catalog', { skip: process.platform !== 'linux' && 'the example script runs POSIX commands' }, () => {
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('run replays the example session: four user turns, four read-only terminal calls, the authored word_count, the memory MCP server, an intact audit chain', async () => {
    const dir = state();
    const r = cli('run', EXAMPLE, '--json', '--state-dir', dir);
    assert.equal(r.status, 0, r.stderr);
    const ev = lines(r.stdout);
    assert.equal(ev[0].type, 'session');
    assert.deepEqual(ev.filter((e) => e.type === 'user').map((e) => e.turn), [1, 2, 3, 4], 'the script plays four user turns');
    const results = ev.filter((e) => e.type === 'tool_result');
    assert.equal(results.length, 7);
    const terminal = results.filter((e) => e.tool === 'terminal');
    assert.equal(terminal.length, 4);
    assert.ok(terminal.every((e) => e.ok && !e.isError && e.view.approval.source === 'policy'), 'auto_approve: [read-only]');
    assert.match(terminal[0].view.output, /hello/);
    assert.match(terminal[3].view.output, /agent\.yaml/, 'the second user turn ran wc on the workspace');
    const wc = results.find((e) => e.tool === 'word_count');
    assert.deepEqual(JSON.parse(wc.view.output), { words: 4, lines: 1, characters: 19 }, 'the third user turn ran the authored tool out of process');
    assert.equal(wc.view.detail.tier, 'process');
    // The fourth user turn: discovery connected memory before the model ran; create_entities asks
    // (denied without a terminal), read_graph is auto and answers from the real server.
    const server = ev.find((e) => e.type === 'mcp_server');
    assert.deepEqual([server.server, server.state, server.approval, server.connection], ['memory', 'connected', 'approved by policy', 'new']);
    const [create, read] = results.filter((e) => e.tool.startsWith('memory_'));
    assert.deepEqual([create.tool, create.ok, create.code, create.step], ['memory_create_entities', false, 'APPROVAL_DENIED', 5]);
    assert.deepEqual([read.tool, read.ok, read.isError], ['memory_read_graph', true, false]);
    assert.match(read.view.output, /"entities"/);
    const end = ev.at(-1);
    assert.deepEqual([end.type, end.outcome, end.turns, end.effects.ok, end.effects.failed], ['end', 'completed', 4, 6, 1]);
    const v = await runMain('audit', 'verify', '--session', ev[0].session, '--json', '--state-dir', dir);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  test('each scripted user turn is its own turn of one session, with its messages recorded under it', () => {
    const core = makeCore({
      'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  auto_approve: [read-only]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': 'turns:\n  - user: first\n  - tool_calls: [{ name: terminal, arguments: { command: "echo one" } }]\n  - text: did one\n  - user: second\n  - text: done\n',
    });
    const dir = state();
    const r = cli('run', core, '--json', '--state-dir', dir);
    assert.equal(r.status, 0, r.stderr);
    const ev = lines(r.stdout);
    assert.deepEqual(ev.filter((e) => e.type === 'user').map((e) => e.text), ['first', 'second']);
    const session = ev[0].session as string;
    const require = createRequire(import.meta.url);
    const Sqlite = require('better-sqlite3') as new (f: string, o: { readonly: boolean }) => { prepare(s: string): { all(...a: unknown[]): unknown[] }; close(): void };
    const db = new Sqlite(`${dir}/supervisor.db`, { readonly: true });
    try {
      const turns = db.prepare('SELECT id, status FROM turns WHERE session_id = ? ORDER BY seq').all(session) as { id: string; status: string }[];
      assert.deepEqual(turns.map((t) => t.status), ['completed', 'completed']);
      const msgs = db.prepare('SELECT turn_id, role FROM messages WHERE session_id = ? ORDER BY seq').all(session) as { turn_id: string; role: string }[];
      assert.deepEqual(msgs.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
      assert.deepEqual(msgs.map((m) => m.turn_id === turns[0]!.id ? 1 : 2), [1, 1, 1, 1, 2, 2]);
    } finally {
      db.close();
    }
  });

  test('a --prompt replaces the script\'s first user message', () => {
    const r = cli('run', EXAMPLE, '--json', '--prompt', 'just say hello', '--state-dir', state());
    assert.equal(r.status, 0, r.stderr);
    const users = lines(r.stdout).filter((e) => e.type === 'user');
    assert.deepEqual(users.slice(0, 3).map((e) => e.text), ['just say hello', 'How many lines does the agent\'s configuration have?', 'And how many words are in "the quick brown fox"?']);
  });

  test('--deny wins even over an automatic approval', () => {
    const r = cli('run', EXAMPLE, '--deny', 'terminal:uname *', '--json', '--state-dir', state());
    assert.equal(r.status, 0, r.stderr);
    const results = lines(r.stdout).filter((e) => e.type === 'tool_result' && e.tool === 'terminal');
    assert.deepEqual(results.map((e) => e.ok), [true, true, false, true]);
    assert.equal(results[2].code, 'APPROVAL_DENIED');
  });

  test('run without approval and without a terminal: every terminal call is refused at step 5, nothing runs', () => {
    const core = makeCore({
      'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': 'turns:\n  - tool_calls:\n      - name: terminal\n        arguments: { command: "touch marker" }\n  - text: done\n',
    });
    const r = cli('run', core, '--json', '--state-dir', state());
    assert.equal(r.status, 0, r.stderr);
    const refused = lines(r.stdout).filter((e) => e.type === 'tool_result');
    assert.equal(refused.length, 1);
    assert.deepEqual([refused[0].ok, refused[0].code, refused[0].step], [false, 'APPROVAL_DENIED', 5]);
    assert.equal(spawnSync('test', ['-e', `${core}/marker`]).status, 1, 'the command never ran');
  });

  test('a model calling a tool that is not in the catalog is told so, and the session goes on', () => {
    const core = makeCore({
      'agent.yaml': 'name: t\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': 'turns:\n  - tool_calls:\n      - name: rm_rf\n        arguments: {}\n  - text: ok\n',
    });
    const r = cli('run', core, '--json', '--state-dir', state());
    assert.equal(r.status, 0, r.stderr);
    assert.ok(lines(r.stdout).some((e) => e.type === 'unknown_tool' && e.name === 'rm_rf'));
  });

  test('a model section the provider cannot use exits 2 before any request; a broken core names its file', async () => {
    const core = makeCore({ 'agent.yaml': 'name: t\nmodel:\n  provider: anthropic\n  model: claude\n  api_key: { secret: NOPE }\n' });
    const r = cli('run', core, '--state-dir', state());
    assert.equal(r.status, 2);
    assert.match(r.stderr, /provider\.config: anthropic at api\.anthropic\.com: model\.api_key: secret NOPE is not declared/);
    const bad = makeCore({ 'agent.yaml': 'name: t\ntoolsets: [terminal]\nbogus: 1\n' });
    const b = await runMain('run', bad, '--state-dir', state());
    assert.equal(b.status, 2);
    assert.match(b.stderr, /agent\.yaml.*bogus/);
  });

  test('call reaches an MCP tool of the example core: the memory server is started, asked and stopped', () => {
    const dir = state();
    const r = cli('call', EXAMPLE, 'memory_search_nodes', '--args', '{"query":"nothing-here"}', '--json', '--state-dir', dir);
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual([out.ok, out.isError], [true, false]);
    assert.match(out.view.output, /"entities"/);
    const denied = cli('call', EXAMPLE, 'memory_read_graph', '--deny', 'capability:mcp.connect:memory', '--state-dir', dir);
    assert.equal(denied.status, 2, 'without its connect approval the server is not started, so its tools are not in the catalog');
    assert.match(denied.stderr, /no tool "memory_read_graph"/);
  });

  test('call runs one effect through the pipeline; --deny wins; bad arguments are usage errors', async () => {
    const dir = state();
    const ok = cli('call', EXAMPLE, 'terminal', '--args', '{"command":"echo via-call"}', '--approve', 'terminal', '--state-dir', dir);
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /via-call/);
    const denied = cli('call', EXAMPLE, 'terminal', '--args', '{"command":"echo x"}', '--approve', 'terminal', '--deny', 'terminal', '--state-dir', dir);
    assert.equal(denied.status, 1);
    assert.match(denied.stderr, /APPROVAL_DENIED/);
    const notJson = await runMain('call', EXAMPLE, 'terminal', '--args', '{command', '--state-dir', dir);
    assert.equal(notJson.status, 2);
    assert.match(notJson.stderr, /--args is not JSON/);
    const unknown = cli('call', EXAMPLE, 'nosuch', '--state-dir', dir);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no tool "nosuch"/);
    const authored = cli('call', EXAMPLE, 'word_count', '--args', '{"text":"a b"}', '--state-dir', dir);
    assert.equal(authored.status, 0, authored.stderr);
    assert.match(authored.stdout, /"words":2/);
  });

  test('catalog --json lists every entry with source, capability, approval, risk and provenance', async () => {
    const r = await runMain('catalog', EXAMPLE, '--json');
    assert.equal(r.status, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.match(c.revision, /^[0-9a-f]{64}$/);
    assert.deepEqual(
      c.tools.map((t: any) => [t.name, t.source, t.capability, t.approval, t.granted]),
      [
        ['tools_list', 'builtin', 'catalog.read', 'auto', true],
        ['terminal', 'builtin', 'terminal.exec', 'prompt', true],
        ['word_count', 'authored', 'tool.call:word_count', 'auto', true],
      ],
    );
  });
  test('call shows the same "still running" beat as run, on stderr, readable and --json; stdout keeps only the result', async () => {
    const core = makeCore({ 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n' });
    const args = JSON.stringify({ command: 'sleep 10.6; echo slept' });
    // Both calls at once, each with its own state dir: the 10.6 s sleep is waited for once, not twice.
    const [text, json] = await Promise.all([
      cliAsync('call', core, 'terminal', '--args', args, '--approve', 'terminal', '--state-dir', state()),
      cliAsync('call', core, 'terminal', '--args', args, '--approve', 'terminal', '--json', '--state-dir', state()),
    ]);
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stderr, /… terminal 1\d s, still running/);
    assert.match(text.stdout, /slept/);
    assert.doesNotMatch(text.stdout, /still running/);
    assert.equal(json.status, 0, json.stderr);
    const beats = json.stderr.trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; tool: string; message: string });
    assert.ok(beats.some((b) => b.type === 'progress' && b.tool === 'terminal' && b.message === 's, still running'), json.stderr);
    assert.equal(JSON.parse(json.stdout).ok, true, 'stdout is one JSON object');
  });
});
