// `supervisor serve` as an MCP peer sees it: the real CLI in a child process, the SDK's own
// Client over stdio and over Streamable HTTP, raw requests for the HTTP guards, and the audit
// chain checked afterwards.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { openStore } from '../../src/store/index.js';
import { alive, CLI, markedPids, tempDir, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores, toolFiles } from '../core/temp-core.js';
import { fixtureDecl } from '../adapters/mcp/mcp-fixture.js';
import { readEvents } from '../../src/store/index.js';

const dirs: { remove(): void }[] = [];
const children: ChildProcess[] = [];
const state = (): string => {
  const d = tempDir('serve-');
  dirs.push(d);
  return d.path;
};
// The views checked after a serve (catalog, sessions, audit verify) run in-process through
// `main(argv, io)` (issue 17); every serve is a real process.
const text = (r: any): string => r.content.map((c: { text: string }) => c.text).join('');

// terminal is granted (read-only commands run without asking); the task tools are in the catalog
// but task.read is not granted, so a call of task_list is refused at step 3.
const CORE = () =>
  makeCore({
    'agent.yaml': 'name: served\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\n',
  });

async function startHttp(core: string, dir: string, extra: string[] = []): Promise<{ child: ChildProcess; url: string; token: string; session: string; tokenFile: string }> {
  const child = spawn(process.execPath, [CLI, 'serve', core, '--http', '127.0.0.1:0', '--state-dir', dir, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const rl = createInterface({ input: child.stdout! });
  const [line] = (await Promise.race([once(rl, 'line'), once(child, 'exit').then(() => [null])])) as [string | null];
  assert.ok(line, `serve exited before serving: ${err}`);
  const serving = JSON.parse(line!);
  assert.equal(serving.type, 'serving');
  return { child, url: serving.url, session: serving.session, tokenFile: serving.token_file, token: readFileSync(serving.token_file, 'utf8').trim() };
}

async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  return code;
}


// Data from outside that used to escape the pipeline: a server whose tools/list holds an invalid
// pattern and a name that collides with an authored tool, arguments nested 600 deep, and a
// "__proto__" key after a secret was resolved. Terminal is approved by rule (a call binding a
// secret always asks).
const SECRET = 'ghp_serveHostile_5f6e7d8c9b';
const HOSTILE_CORE = () =>
  makeCore({
    'agent.yaml': [
      'name: served-hostile',
      'toolsets: [terminal]',
      "grants: [terminal.exec, 'secret:GH_TOKEN', 'mcp.connect:hs', 'mcp.call:hs', 'tool.call:hs_echo']",
      'secrets:\n  GH_TOKEN: { env: SV_SERVE_GH }',
      'tools:\n  terminal:\n    secrets:\n      - { secret: GH_TOKEN, env: GH_TOKEN, ttl: 1m }',
      'approval:\n  default: auto',
      '',
    ].join('\n'),
    ...toolFiles('hs_echo'),
    'agent/mcp/hs.yaml': fixtureDecl('hs', 'hostile-schemas'),
  });
const DEEP = JSON.parse(`{"command": ${'['.repeat(600)}${']'.repeat(600)}}`) as Record<string, unknown>;
const PROTO = JSON.parse('{"command": "touch proto-marker", "env": {"__proto__": "proto-value"}}') as Record<string, unknown>;
const PROTO_OBJECT = JSON.parse('{"command": "touch proto-marker", "env": {"__proto__": {"LD_PRELOAD": "/tmp/x.so"}}}') as Record<string, unknown>;
type RpcAnswer = { result?: { content: { text: string }[]; isError?: boolean }; error?: { code: number; message: string } };

/** The hostile calls in order; each must be a tool result (never a JSON-RPC error), and the session goes on. */
async function hostileCalls(call: (name: string, args: Record<string, unknown>) => Promise<RpcAnswer>): Promise<void> {
  const expectToolError = (what: string, a: RpcAnswer): string => {
    assert.equal(a.error, undefined, `${what}: a JSON-RPC error instead of a tool result: ${JSON.stringify(a.error)}`);
    assert.equal(a.result?.isError, true, `${what}: ${JSON.stringify(a.result)}`);
    return a.result!.content.map((c) => c.text).join('');
  };
  assert.match(expectToolError('600-deep arguments', await call('terminal', DEEP)), /ARGS_INVALID|deep/);
  const first = await call('terminal', { command: 'echo resolved' });
  assert.equal(first.result?.isError, false, JSON.stringify(first)); // GH_TOKEN is resolved from now on
  expectToolError('"__proto__" in the env overlay', await call('terminal', PROTO));
  expectToolError('"__proto__" holding an object', await call('terminal', PROTO_OBJECT));
  assert.match(expectToolError('600-deep arguments after a secret', await call('terminal', DEEP)), /ARGS_INVALID|deep/);
  const still = await call('terminal', { command: 'echo still-serving' });
  assert.equal(still.result?.isError, false, JSON.stringify(still));
  assert.match(still.result!.content[0]!.text, /still-serving/);
}

/** Every call above left its record in the chain, and the dropped MCP tools are there with their reasons. */
function assertAudited(dir: string, session: string): void {
  const db = openStore(join(dir, 'supervisor.db'));
  try {
    const events = readEvents(db, session, { limit: 10_000 });
    const ends = events.filter((e) => e.kind === 'effect.completed' || e.kind === 'effect.failed');
    assert.equal(ends.length, 6, `one end record per call: ${events.map((e) => e.kind).join(',')}`);
    assert.ok(!JSON.stringify(events.map((e) => e.payload)).includes(SECRET), 'no secret in the chain');
    const dropped = events.filter((e) => e.kind === 'catalog.tool_dropped').map((e) => e.payload as { server: string; tool: string; reason: string });
    assert.deepEqual(dropped.map((d) => d.tool).sort(), ['hs_broken', 'hs_echo', 'hs_lookahead'], JSON.stringify(dropped));
    assert.match(dropped.find((d) => d.tool === 'hs_broken')!.reason, /pattern/);
    assert.match(dropped.find((d) => d.tool === 'hs_echo')!.reason, /already defined by authored tool/);
  } finally {
    db.close();
  }
}

describe('supervisor serve', { skip: process.platform !== 'linux' && 'the served terminal runs POSIX commands' }, () => {
  after(async () => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('stdio: the SDK client lists exactly the catalog, a granted call runs, an ungranted one is a tool error; EOF ends the session; the chain verifies', async () => {
    const dir = state();
    const core = CORE();
    const catalog = JSON.parse((await runMain('catalog', core, '--json')).stdout);
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', core, '--stdio', '--state-dir', dir], stderr: 'pipe' });
    let err = '';
    transport.stderr!.on('data', (d) => (err += d));
    const client = new Client({ name: 'serve-test', version: '1' });
    await client.connect(transport);
    const pid = transport.pid!;
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(tools.map((t) => t.name).sort(), catalog.tools.map((t: { name: string }) => t.name).sort());
      const terminal = tools.find((t) => t.name === 'terminal')!;
      assert.equal(terminal.inputSchema.type, 'object');
      assert.ok((terminal.inputSchema.properties as Record<string, unknown>).command, 'the entry schema is served as is');
      const ok = await client.callTool({ name: 'terminal', arguments: { command: 'echo served-hello' } });
      assert.equal(ok.isError, false, text(ok));
      assert.match(text(ok), /served-hello/);
      const denied = await client.callTool({ name: 'task_list', arguments: {} });
      assert.equal(denied.isError, true);
      assert.match(text(denied), /^CAPABILITY_DENIED/);
      const unknown = await client.callTool({ name: 'Bash', arguments: { command: 'id' } });
      assert.equal(unknown.isError, true);
      assert.match(text(unknown), /UNKNOWN_TOOL/);
      const badArgs = await client.callTool({ name: 'terminal', arguments: { command: 42 } });
      assert.equal(badArgs.isError, true);
      assert.match(text(badArgs), /ARGS_INVALID/);
    } finally {
      await client.close();
    }
    // Closing the client ends stdin; the server closes its session and exits on its own.
    await waitFor('serve --stdio to exit after EOF', () => !alive(pid), 15_000);
    const session = /session (se_[0-9a-f]{24})/.exec(err)?.[1];
    assert.ok(session, err);
    assert.match(err, /1 call\(s\) ran, 3 refused or failed/);
    const v = await runMain('audit', 'verify', '--session', session!, '--json', '--state-dir', dir);
    assert.equal(v.status, 0, v.stdout + v.stderr);
    const sessions = JSON.parse((await runMain('sessions', '--json', '--state-dir', dir)).stdout);
    assert.deepEqual(sessions.sessions.map((x: { status: string; runtime: string }) => [x.status, x.runtime]), [['completed', 'mcp-stdio']]);
  });

  test('stdio with examples/demo: an authored tool host and the memory MCP server serve calls, and EOF stops every tree the session started', async () => {
    const dir = state();
    const demo = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
    const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'serve', demo, '--stdio', '--state-dir', dir], stderr: 'pipe' });
    transport.stderr!.on('data', () => undefined);
    const client = new Client({ name: 'serve-demo-test', version: '1' });
    await client.connect(transport);
    const pid = transport.pid!;
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('word_count') && names.includes('memory_read_graph'), names.join(','));
      const wc = await client.callTool({ name: 'word_count', arguments: { text: 'one two three' } });
      assert.equal(wc.isError, false, text(wc));
      assert.equal(JSON.parse(text(wc)).words, 3);
      const graph = await client.callTool({ name: 'memory_read_graph', arguments: {} });
      assert.equal(graph.isError, false, text(graph));
    } finally {
      await client.close();
    }
    await waitFor('serve --stdio to exit after EOF', () => !alive(pid), 20_000);
    const db = openStore(join(dir, 'supervisor.db'));
    const spawns = db.prepare('SELECT spawn_id, status FROM spawns').all() as { spawn_id: string; status: string }[];
    db.close();
    assert.ok(spawns.length >= 2, 'a tool host and the MCP server were spawned');
    assert.deepEqual(spawns.filter((r) => r.status === 'running'), []);
    for (const r of spawns) assert.deepEqual(markedPids(r.spawn_id), [], `${r.spawn_id} left a process`);
  });

  test('a SIGTERM while serve closes after EOF (the MCP SDK client sends one 2 s after EOF) still lets it record every tree\'s end', async () => {
    // The SDK's StdioClientTransport.close() ends stdin, waits 2 s, then sends SIGTERM (and SIGKILL
    // 2 s later). On a loaded machine closing the session's trees takes longer than 2 s, so the
    // SIGTERM lands while serve is closing: it must not end the process before the records do.
    const dir = state();
    const demo = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
    const child = spawn(process.execPath, [CLI, 'serve', demo, '--stdio', '--state-dir', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
    const closed = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    const lines = createInterface({ input: child.stdout! });
    const replies = new Map<number, (v: unknown) => void>();
    lines.on('line', (l) => {
      const m = JSON.parse(l) as { id?: number };
      if (typeof m.id === 'number') replies.get(m.id)?.(m);
    });
    const rpc = (id: number, method: string, params: unknown) => {
      const reply = new Promise((r) => replies.set(id, r));
      child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return reply;
    };
    await rpc(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sigterm-test', version: '1' } });
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    // A call starts the word_count tool host, so closing has a tree of its own to stop and record.
    await rpc(2, 'tools/call', { name: 'word_count', arguments: { text: 'a b' } });
    child.stdin!.end();
    // Inside the close: serve prints its summary, then stops the session's trees and ends the
    // session; the signal comes then.
    await waitFor('serve to print its summary', () => err.includes('closed ·') || null, 20_000);
    child.kill('SIGTERM');
    const code = await closed;
    const db = openStore(join(dir, 'supervisor.db'));
    const spawns = db.prepare('SELECT spawn_id, status FROM spawns').all() as { spawn_id: string; status: string }[];
    const sessions = db.prepare('SELECT status FROM sessions').all() as { status: string }[];
    db.close();
    assert.ok(spawns.length >= 2, `a tool host and the MCP server were spawned: ${err}`);
    assert.deepEqual(spawns.filter((r) => r.status === 'running'), [], `exit ${code}; ${err}`);
    assert.notDeepEqual(sessions.map((x) => x.status), ['running'], 'the session was ended, not left running');
    for (const r of spawns) assert.deepEqual(markedPids(r.spawn_id), [], `${r.spawn_id} left a process`);
  });

  test('stdio: hostile input (600-deep arguments, "__proto__" after a secret, schemas that cannot compile, a name collision) is a tool error or a dropped tool, audited, never -32603; the session goes on', async () => {
    const dir = state();
    const child = spawn(process.execPath, [CLI, 'serve', HOSTILE_CORE(), '--stdio', '--state-dir', dir, '--approve', 'terminal'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, SV_SERVE_GH: SECRET } });
    children.push(child);
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const answers = new Map<number, (a: RpcAnswer) => void>();
    createInterface({ input: child.stdout! }).on('line', (l) => {
      const m = JSON.parse(l) as RpcAnswer & { id?: number };
      if (typeof m.id === 'number') answers.get(m.id)?.(m);
    });
    let id = 0;
    const rpc = (method: string, params: unknown): Promise<RpcAnswer> =>
      new Promise((resolve, reject) => {
        const n = ++id;
        const t = setTimeout(() => reject(new Error(`no answer to ${method} #${n}; stderr: ${err}`)), 30_000);
        answers.set(n, (a) => {
          clearTimeout(t);
          resolve(a);
        });
        child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', id: n, method, params })}\n`);
      });
    const init = await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    assert.ok(init.result, JSON.stringify(init));
    child.stdin!.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const list = (await rpc('tools/list', {})) as unknown as { result: { tools: { name: string }[] } };
    const names = list.result.tools.map((t) => t.name);
    assert.ok(names.includes('hs_echo') && names.includes('hs_redos') && !names.includes('hs_broken'), names.join(','));
    await hostileCalls((name, args) => rpc('tools/call', { name, arguments: args }));
    const exited = once(child, 'exit');
    child.stdin!.end();
    await exited;
    assert.match(err, /mcp hs: tool "hs_broken" dropped: .*pattern/);
    assert.match(err, /mcp hs: tool "hs_echo" dropped: .*already defined/);
    const session = /session (se_[0-9a-f]{24})/.exec(err)?.[1];
    assert.ok(session, err);
    assertAudited(dir, session!);
    const v = await runMain('audit', 'verify', '--session', session!, '--json', '--state-dir', dir);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  test('http: the same hostile input through the SDK client is a tool error, audited, and the server goes on', async () => {
    const dir = state();
    process.env.SV_SERVE_GH = SECRET;
    let s: Awaited<ReturnType<typeof startHttp>>;
    try {
      s = await startHttp(HOSTILE_CORE(), dir, ['--approve', 'terminal']);
    } finally {
      delete process.env.SV_SERVE_GH;
    }
    const client = new Client({ name: 'serve-hostile-http', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: { authorization: `Bearer ${s.token}` } } }));
    await hostileCalls(async (name, args) => {
      try {
        return { result: (await client.callTool({ name, arguments: args })) as RpcAnswer['result'] };
      } catch (e) {
        return { error: { code: (e as { code?: number }).code ?? 0, message: (e as Error).message } };
      }
    });
    await client.close();
    assert.equal(await stopChild(s.child), 0);
    assertAudited(dir, s.session);
  });

  test('http: bearer token, Host and Origin guards, body cap; the SDK client calls through the pipeline; the chain verifies', async () => {
    const dir = state();
    const s = await startHttp(CORE(), dir, ['--max-body', '4096']);
    assert.equal(statSync(s.tokenFile).mode & 0o777, 0o600);
    assert.match(s.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    // node:http, not fetch: fetch will not send a Host header of the caller's choosing.
    const post = (headers: Record<string, string>, body = init): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const u = new URL(s.url);
        const req = request(
          { host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
          (res) => {
            let b = '';
            res.on('data', (d) => (b += d));
            res.on('end', () => resolve({ status: res.statusCode!, body: b }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const auth = { authorization: `Bearer ${s.token}` };
    assert.equal((await post({})).status, 401, 'no token');
    assert.equal((await post({ authorization: `Bearer ${s.token.slice(0, -1)}x` })).status, 401, 'wrong token');
    assert.equal((await post({ authorization: s.token })).status, 401, 'token without the Bearer scheme');
    const port = new URL(s.url).port;
    assert.equal((await post({ ...auth, host: `evil.example:${port}` })).status, 403, 'a rebound DNS name in Host');
    assert.equal((await post({ ...auth, origin: 'http://evil.example' })).status, 403, 'a foreign Origin');
    assert.equal((await post({ ...auth, origin: `https://127.0.0.1:${port}` })).status, 403, 'another scheme');
    assert.equal((await post({ ...auth }, JSON.stringify({ pad: 'x'.repeat(8000) }))).status, 413, 'a body over --max-body');
    assert.equal((await post({ ...auth }, '{not json')).status, 400);
    assert.equal((await post({ ...auth, 'mcp-session-id': 'nope' })).status, 404);
    const fine = await post({ ...auth, origin: `http://127.0.0.1:${port}` });
    assert.equal(fine.status, 200, fine.body);
    assert.equal((await post({ ...auth, host: `localhost:${port}` })).status, 200, 'localhost names the same loopback address');

    // A client without the token cannot even initialize.
    const stranger = new Client({ name: 'stranger', version: '1' });
    await assert.rejects(stranger.connect(new StreamableHTTPClientTransport(new URL(s.url))));

    const client = new Client({ name: 'serve-http-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: auth } }));
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'terminal'));
    const ok = await client.callTool({ name: 'terminal', arguments: { command: 'echo over-http' } });
    assert.equal(ok.isError, false, text(ok));
    assert.match(text(ok), /over-http/);
    const denied = await client.callTool({ name: 'task_list', arguments: {} });
    assert.equal(denied.isError, true);
    assert.match(text(denied), /^CAPABILITY_DENIED/);
    await client.close();
    assert.equal(await stopChild(s.child), 0);
    const v = await runMain('audit', 'verify', '--session', s.session, '--json', '--state-dir', dir);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  test('http: abandoned sessions never lock clients out: idle ones expire, the least recently used idle one is evicted at the cap', async () => {
    const dir = state();
    const s = await startHttp(CORE(), dir, ['--max-sessions', '3', '--idle-timeout', '1500ms']);
    const auth = { authorization: `Bearer ${s.token}` };
    const connect = async (name: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
      const client = new Client({ name, version: '1' });
      const transport = new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: auth } });
      await client.connect(transport);
      return { client, transport };
    };
    // 5 clients that each go away without DELETE (before: the 17th client, here the 4th, got 503 forever).
    const abandoned: { client: Client; transport: StreamableHTTPClientTransport }[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await connect(`abandons-${i}`);
      await c.client.listTools();
      abandoned.push(c);
    }
    // The first two were evicted to make room (least recently used first): their session id is gone.
    await assert.rejects(abandoned[0]!.client.listTools(), /404|unknown MCP session|Not Found/i);
    const recent = await abandoned[4]!.client.listTools();
    assert.ok(recent.tools.some((t) => t.name === 'terminal'), 'the most recent one still works');
    // Idle past --idle-timeout: every session ends, and a new client is served.
    await new Promise((r) => setTimeout(r, 2_500));
    await assert.rejects(abandoned[4]!.client.listTools(), /404|unknown MCP session|Not Found/i);
    const fresh = await connect('after-idle');
    const called = await fresh.client.callTool({ name: 'terminal', arguments: { command: 'echo still-serving' } });
    assert.match(text(called), /still-serving/);
    await fresh.client.close();
    for (const c of abandoned) await c.transport.close().catch(() => undefined);
    assert.equal(await stopChild(s.child), 0);
  });

  test('http: an unauthenticated request that keeps dripping its body is answered 401 and its connection closed', async () => {
    const dir = state();
    const s = await startHttp(CORE(), dir);
    const u = new URL(s.url);
    const { connect } = await import('node:net');
    const sock = connect(Number(u.port), u.hostname);
    await once(sock, 'connect');
    sock.write(`POST /mcp HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{`);
    let answer = '';
    sock.on('data', (d) => (answer += d));
    sock.on('error', () => undefined);
    const closed = once(sock, 'close');
    const drip = setInterval(() => sock.write('x'), 50);
    try {
      const gone = await Promise.race([closed.then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
      assert.equal(gone, true, 'the server closed the connection while the client was still sending');
      assert.match(answer, /^HTTP\/1\.1 401 /);
    } finally {
      clearInterval(drip);
      sock.destroy();
    }
    assert.equal(await stopChild(s.child), 0);
  });

  // In-process (main(argv, io)): the flags are refused before a session is opened.
  test('http refuses to bind anything but loopback, before opening a session', async () => {
    const dir = state();
    for (const addr of ['0.0.0.0:0', '192.168.1.10:8080', '[::]:0', 'example.com:80']) {
      const r = await runMain('serve', CORE(), '--http', addr, '--state-dir', dir);
      assert.equal(r.status, 2, addr);
      assert.match(r.stderr, /loopback|write the address/, addr);
    }
    const both = await runMain('serve', CORE(), '--stdio', '--http', '127.0.0.1:0', '--state-dir', dir);
    assert.equal(both.status, 2);
    assert.match(both.stderr, /exactly one transport/);
  });
});
