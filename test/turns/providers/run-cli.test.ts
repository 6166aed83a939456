// `supervisor run` end to end against the fake OpenAI-compatible server: the CLI as a child process,
// the key from an env-sourced secret, streamed text shown as it arrives, exit codes, and the key
// absent from everything printed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { CLI, tempDir } from '../../helpers/procs.js';
import { makeCore, removeTempCores } from '../../core/temp-core.js';
import { FakeModelServer, oa, sse, status } from './fake-model-server.js';

const KEY = 'sk-e2e-7d3f1a9c5b2e8d4f6a0c';

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    // 'close': the process has exited and its pipes are drained.
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('supervisor run against an OpenAI-compatible endpoint', { skip: process.platform !== 'linux' && 'the terminal calls are POSIX commands' }, () => {
  let server: FakeModelServer;
  const dirs: { remove(): void }[] = [];
  const core = (): string =>
    makeCore({
      'agent.yaml': [
        'name: t',
        'toolsets: [terminal]',
        'grants: [terminal.exec]',
        'approval:',
        '  auto_approve: [read-only]',
        'secrets:',
        '  OPENAI_KEY: { env: FAKE_OPENAI_KEY_SOURCE }',
        'model:',
        '  provider: openai-compatible',
        '  model: test-model',
        `  base_url: ${server.origin}/v1`,
        '  api_key: { secret: OPENAI_KEY }',
        '  options: { max_attempts: 2, timeout_seconds: 20 }',
        '',
      ].join('\n'),
    });
  const stateDir = (): string => {
    const d = tempDir();
    dirs.push(d);
    return d.path;
  };
  before(async () => {
    server = await FakeModelServer.start();
  });
  beforeEach(() => server.clear());
  after(async () => {
    await server.close();
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('--json: text_delta events, a terminal call through the pipeline, the key sent as a header and printed nowhere', async () => {
    server.reply(
      sse([...oa.text('Hello ', 'there.'), ...oa.calls([{ id: 'c1', name: 'terminal', args: JSON.stringify({ command: `echo ${KEY}` }) }]), oa.finish('tool_calls'), oa.done]),
      sse([...oa.text('Done.'), oa.finish('stop'), oa.done]),
    );
    const from = server.received.length;
    const state = stateDir();
    const r = await run(['run', core(), '--json', '--prompt', 'print the key', '--state-dir', state], { FAKE_OPENAI_KEY_SOURCE: KEY });
    assert.equal(r.code, 0, r.stderr);
    const ev = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(ev.filter((e) => e.type === 'text_delta').map((e) => e.text), ['Hello ', 'there.', 'Done.']);
    const result = ev.find((e) => e.type === 'tool_result');
    assert.ok(result.ok && !result.isError, JSON.stringify(result));
    assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY), 'the key is removed from everything printed');
    assert.ok(JSON.stringify(result.view).includes('[REDACTED]'), 'the echoed key was replaced by the marker');
    assert.deepEqual(ev.at(-1), { ...ev.at(-1), type: 'end', outcome: 'completed', turns: 1 });
    assert.equal(server.received[from]!.headers.authorization, `Bearer ${KEY}`);
    assert.equal(server.received.length - from, 2);
    // The runtime shares the session's secret store: the echoed key is gone from what went back to
    // the model and from every file the run wrote (store, audit events, artifacts).
    // (The model's own call arguments hold the key it was given; the tool's result must not.)
    const toolMessages = (server.received[from + 1]!.body as { messages: { role: string; content: string }[] }).messages.filter((m) => m.role === 'tool');
    assert.equal(toolMessages.length, 1);
    assert.ok(!toolMessages[0]!.content.includes(KEY) && toolMessages[0]!.content.includes('[REDACTED]'), `the tool result sent to the model holds the key: ${toolMessages[0]!.content}`);
    const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(d, e.name)) : [join(d, e.name)]));
    for (const f of walk(state)) assert.ok(!readFileSync(f).includes(KEY), `${f} holds the key`);
  });

  test('readable output shows the streamed answer after "assistant:"', async () => {
    server.reply(sse([...oa.text('Hi ', 'you.'), oa.finish('stop'), oa.done], { delayMs: 20 }));
    const r = await run(['run', core(), '--prompt', 'hi', '--state-dir', stateDir()], { FAKE_OPENAI_KEY_SOURCE: KEY });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\nuser: hi\n\nassistant: Hi you\.\n/);
    assert.match(r.stdout, /completed after 1 user turn\(s\), 1 model turn\(s\)/);
  });

  test('a refused key exits 3 naming provider, host and secret; a missing key source exits 2 before any request', async () => {
    server.reply(status(401, { error: { message: `Incorrect API key provided: ${KEY}` } }));
    const r = await run(['run', core(), '--json', '--prompt', 'hi', '--state-dir', stateDir()], { FAKE_OPENAI_KEY_SOURCE: KEY });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, new RegExp(`provider\\.auth: openai-compatible at ${server.host}: 401 Unauthorized: the key from secret OPENAI_KEY`));
    const err = r.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.type === 'error');
    assert.equal(err.error.code, 'provider.auth');
    assert.ok(!r.stdout.includes(KEY) && !r.stderr.includes(KEY));
    const from = server.received.length;
    const m = await run(['run', core(), '--prompt', 'hi', '--state-dir', stateDir()], {});
    assert.equal(m.code, 2, m.stderr);
    assert.match(m.stderr, /provider\.config: .*secret OPENAI_KEY/);
    assert.equal(server.received.length, from, 'nothing was sent');
  });
});
