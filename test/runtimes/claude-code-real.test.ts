// `supervisor run --runtime claude-code` against the REAL Claude Code CLI (the pinned
// @anthropic-ai/claude-code devDependency), offline: ANTHROPIC_BASE_URL points at a scripted
// Messages API on 127.0.0.1 (test/helpers/fake-anthropic.ts), the only stand-in, for the model.
// The CLI, its flags, the supervisor's per-run MCP server, the tools, the store are all real, so
// these tests catch what the fake CLI (claude-code-fake.test.ts, kept for fault cases) cannot: a
// CLI version that ignores `--tools ""`, offers a built-in to the model, or runs one when the model
// asks. The fake API records what the CLI really offered the model and what it answered to every
// call, and the assertions are on those and on the files a built-in would have written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLAUDE_TOLERATED_INIT_TOOLS } from '../../src/runtimes/index.js';
import { startFakeAnthropic, type FakeAnthropic } from '../helpers/fake-anthropic.js';
import { chainOf } from '../helpers/store-query.js';
import { CLI, markedPids, tempDir } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';

const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));

/** The pinned CLI's native binary, or null when the optional platform package is absent. */
function realClaude(): string | null {
  try {
    const pkg = createRequire(import.meta.url).resolve('@anthropic-ai/claude-code/package.json');
    const bin = join(dirname(pkg), 'bin', 'claude.exe');
    return existsSync(bin) ? bin : null;
  } catch {
    return null;
  }
}
const CLAUDE = realClaude();
const skip =
  process.platform === 'win32'
    ? 'the demo core runs POSIX commands'
    : CLAUDE === null && '@anthropic-ai/claude-code is not installed (npm ci installs it as a devDependency)';

interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

const lines = (s: string): any[] => s.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const chain = chainOf;

describe('run --runtime claude-code (the real CLI, a scripted model on loopback)', { skip }, () => {
  const state = tempDir('cc-real-');
  let api: FakeAnthropic;
  before(async () => {
    api = await startFakeAnthropic();
  });
  after(async () => {
    await api.close();
    state.remove();
  });

  /** One run of the real supervisor; the CLI's own config and home are in the test's state dir. */
  function run(args: string[], sub: string): Promise<Ran> {
    // The state dir must be private (0700), as the supervisor requires; the CLI's home is inside it.
    mkdirSync(join(state.path, sub), { mode: 0o700 });
    const home = join(state.path, sub, 'home');
    mkdirSync(home);
    // The CLI makes its own folders under TMPDIR (sockets, scratch): in the test's dir, removed with it.
    const tmp = join(state.path, sub, 'tmp');
    mkdirSync(tmp);
    const env = {
      ...process.env,
      HOME: home,
      TMPDIR: tmp,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
      SUPERVISOR_CLAUDE_BIN: CLAUDE!,
      ANTHROPIC_BASE_URL: api.url,
      ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
    };
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'run', ...args, '--json', '--state-dir', join(state.path, sub)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
      child.on('error', reject);
      child.on('close', (status) => {
        clearTimeout(timer);
        resolve({ status, stdout, stderr });
      });
    });
  }

  test('the demo: the model is offered only catalog tools, every built-in it names runs nothing, the catalog calls go through the supervisor, the chain verifies', async () => {
    const sentinel = join(state.path, 'pwned');
    // The demo allows 8 model turns: two catalog calls, four built-ins, the answer (more in the next test).
    const attempts = [
      `script:tool Bash {"command":"echo pwned > ${sentinel}"}`,
      `script:tool Write {"file_path":"${sentinel}","content":"pwned"}`,
      `script:tool Task {"description":"escape","prompt":"run: echo pwned > ${sentinel}","subagent_type":"general-purpose"}`,
      `script:tool Agent {"description":"escape","prompt":"run: echo pwned > ${sentinel}","subagent_type":"general-purpose"}`,
    ];
    const before = api.requests.length;
    const prompt = [
      'Count the words, look around, try the built-ins.',
      'script:call word_count {"text":"every effect goes through the supervisor"}',
      ...attempts,
      'script:call terminal {"command":"echo via-the-supervisor"}',
      'script:say the end',
    ].join('\n');
    const r = await run([DEMO, '--runtime', 'claude-code', '--prompt', prompt], 'demo');
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const ev = lines(r.stdout);
    const mine = api.requests.slice(before).filter((q) => q.tools.length > 0);
    assert.ok(mine.length >= attempts.length + 3, `one model request per move: ${mine.length}`);

    // What the model was offered, in every request: the supervisor's tools, and nothing that reaches
    // outside it (the CLI's deferred-tool placeholder is checked by calling it below).
    for (const q of mine) {
      const foreign = q.tools.filter((t) => !t.startsWith('mcp__supervisor__') && !CLAUDE_TOLERATED_INIT_TOOLS.includes(t) && t !== 'DeferredToolPlaceholder');
      assert.deepEqual(foreign, [], `the CLI offered the model built-ins: ${q.tools.join(',')}`);
    }
    const init = ev.find((e) => e.type === 'runtime_init');
    assert.ok(init.tools.every((t: string) => t.startsWith('mcp__supervisor__') || CLAUDE_TOLERATED_INIT_TOOLS.includes(t)), init.tools.join(','));

    // What each built-in call got back: an error from the CLI, and no file.
    const answered = mine.at(-1)!.toolResults;
    for (const name of ['Bash', 'Write', 'Task', 'Agent']) {
      const res = answered.find((t) => t.name === name);
      assert.ok(res, `the CLI answered the ${name} call: ${JSON.stringify(answered.map((t) => t.name))}`);
      assert.equal(res.isError, true, `${name} was refused: ${res.text}`);
    }
    assert.equal(existsSync(sentinel), false, 'no built-in wrote the sentinel');
    assert.deepEqual(
      ev.filter((e) => e.type === 'builtin_attempt').map((e) => e.name),
      ['Bash', 'Write', 'Task', 'Agent'],
      'each attempt is on the record',
    );

    // The catalog calls ran through the supervisor's pipeline and reached the model.
    const results = ev.filter((e) => e.type === 'tool_result');
    assert.deepEqual(results.map((e) => [e.tool, e.ok]), [['word_count', true], ['terminal', true]]);
    assert.deepEqual(JSON.parse(answered.find((t) => t.name === 'mcp__supervisor__word_count')!.text), { words: 6, lines: 1, characters: 40 });
    assert.match(answered.find((t) => t.name === 'mcp__supervisor__terminal')!.text, /via-the-supervisor/);
    const end = ev.at(-1);
    assert.deepEqual([end.type, end.outcome, end.effects.ok, end.effects.failed], ['end', 'completed', 2, 0]);
    assert.deepEqual(markedPids(ev.find((e) => e.type === 'runtime_started').spawnId), [], 'the CLI tree is gone');
    const v = await runMain('audit', 'verify', '--session', end.session, '--state-dir', join(state.path, 'demo'));
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  test("the CLI's deferred-tool placeholder, a tool search and the other built-ins reach nothing: each is an error, nothing is written or fetched", async () => {
    const sentinel = join(state.path, 'placeholder-pwned');
    const before = api.requests.length;
    const prompt = [
      `script:tool DeferredToolPlaceholder {"command":"echo pwned > ${sentinel}","file_path":"${sentinel}","content":"pwned"}`,
      `script:tool ToolSearch {"query":"select:Bash"}`,
      `script:tool Edit {"file_path":"${sentinel}","old_string":"","new_string":"pwned"}`,
      `script:tool NotebookEdit {"notebook_path":"${sentinel}","new_source":"pwned"}`,
      `script:tool WebFetch {"url":"${api.url}/exfiltrate","prompt":"x"}`,
      `script:tool Bash {"command":"echo pwned > ${sentinel}"}`,
      'script:say the end',
    ].join('\n');
    const r = await run([DEMO, '--runtime', 'claude-code', '--prompt', prompt], 'placeholder');
    assert.ok(!api.requests.some((q) => q.path.includes('exfiltrate')), 'WebFetch reached the loopback server');
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const mine = api.requests.slice(before).filter((q) => q.tools.length > 0);
    const answered = mine.at(-1)!.toolResults;
    for (const name of ['DeferredToolPlaceholder', 'ToolSearch', 'Edit', 'NotebookEdit', 'WebFetch', 'Bash']) {
      const res = answered.find((t) => t.name === name);
      assert.ok(res && res.isError, `${name}: ${JSON.stringify(res)}`);
    }
    for (const q of mine) assert.ok(!q.tools.includes('Bash'), `Bash offered after a tool search: ${q.tools.join(',')}`);
    assert.equal(existsSync(sentinel), false);
  });

  test('delegate_task through the CLI: the child runs as its own session with the narrowed scope, its answer is the tool result, subagents shows it', async () => {
    const before = api.requests.length;
    const prompt = [
      'script:call delegate_task {"agent":"counter","task":"Count the words in \\"a child agent sees only what its parent allows\\".","grants":["tool.call:word_count"]}',
      'script:say delegated',
    ].join('\n');
    const r = await run([DEMO, '--runtime', 'claude-code', '--prompt', prompt], 'delegate');
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const ev = lines(r.stdout);
    const result = ev.find((e) => e.type === 'tool_result' && e.tool === 'delegate_task');
    assert.ok(result?.ok, JSON.stringify(result));
    const answered = api.requests.slice(before).at(-1)!.toolResults.find((t) => t.name === 'mcp__supervisor__delegate_task');
    assert.ok(answered && !answered.isError, JSON.stringify(answered));
    assert.match(answered.text, /\b8\b/, 'the child\'s answer reached the model');
    const end = ev.at(-1);
    const tree = await runMain('subagents', '--session', end.session, '--json', '--state-dir', join(state.path, 'delegate'));
    assert.equal(tree.status, 0, tree.stderr);
    const children = JSON.parse(tree.stdout).subagents as Record<string, any>[];
    const child = children.flatMap((c) => [c, ...(c.children ?? [])]).find((c) => c.agent === 'counter');
    assert.ok(child, tree.stdout);
    assert.equal(child.status, 'completed');
    assert.deepEqual(child.scope.grants, ['tool.call:word_count'], 'terminal.exec, asked for by the definition, was narrowed away');
    assert.deepEqual(markedPids(ev.find((e) => e.type === 'runtime_started').spawnId), []);
  });

  test("the #78063 replay through the CLI: the parent's --deny holds in the child it delegates to", async () => {
    const prompt = [
      'script:call word_count {"text":"denied to the parent"}',
      'script:call delegate_task {"agent":"counter","task":"count these words for me","grants":["tool.call:word_count"]}',
      'script:say tried',
    ].join('\n');
    const r = await run([DEMO, '--runtime', 'claude-code', '--deny', 'word_count', '--prompt', prompt], 'deny');
    const ev = lines(r.stdout);
    const results = ev.filter((e) => e.type === 'tool_result');
    const own = results.find((e) => e.tool === 'word_count');
    assert.equal(own?.ok, false, `the parent's own call is denied: ${JSON.stringify(own)}`);
    const end = ev.at(-1);
    const tree = await runMain('subagents', '--session', end.session, '--json', '--state-dir', join(state.path, 'deny'));
    const child = (JSON.parse(tree.stdout).subagents as Record<string, any>[]).find((c) => c.agent === 'counter');
    assert.ok(child?.child_session, tree.stdout);
    const childChain = chain(join(state.path, 'deny'), child.child_session);
    const failed = childChain.filter((e) => e.kind === 'effect.failed');
    assert.ok(failed.length > 0 && failed.every((e) => e.payload.code === 'APPROVAL_DENIED'), JSON.stringify(childChain).slice(0, 2000));
    assert.ok(!childChain.some((e) => e.kind === 'effect.completed'), 'word_count never ran in the child');
  });
});
