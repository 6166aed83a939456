// MCP calls through EffectRuntime with real servers: the npm reference servers and fixtures that
// crash, hang, stream progress, or answer with huge and binary results.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir, waitFor } from '../../helpers/procs.js';
import { declaration, fixtureDecl, mcpSuite, NPM_SERVER, RecordingApprover } from './mcp-fixture.js';

const LEAKY = 'SUPERVISOR_MCP_TEST_API_TOKEN';
const LEAKY_VALUE = 'sk-live-this-must-never-reach-a-server-0001';
const SECRET_VALUE = 'ghp_declared-secret-value-for-everything-42';

describe('MCP calls', { skip: process.platform !== 'linux' && 'fixtures use POSIX tools' }, () => {
  const s = mcpSuite();
  const scratch = tempDir('mcp-calls-');

  test('server-everything sees only the allowlist plus the approved declared entries, not the supervisor environment', async () => {
    process.env[LEAKY] = LEAKY_VALUE;
    process.env.MCP_TEST_SECRET_SRC = SECRET_VALUE;
    try {
      const core = await s.core(
        {
          'agent/mcp/ev.yaml': declaration('ev', [NPM_SERVER('everything'), 'stdio'], [
            'env:',
            '  - { name: DECLARED_PLAIN, value: visible }',
            '  - { name: API_KEY, value: { secret: EV_KEY } }',
          ].map((l) => `  ${l}`).join('\n') + '\napproval: { connect: auto, call: auto }'),
        },
        ['mcp.connect:ev', 'mcp.call:ev', 'secret:EV_KEY'],
        '  default: auto\nsecrets:\n  EV_KEY: { env: MCP_TEST_SECRET_SRC }\n',
      );
      const m = s.manager();
      const { call, found } = await s.session(core, m);
      assert.equal(found.servers[0]!.state, 'connected', found.servers[0]!.message ?? '');
      // What the server really got, read from inside it, bypassing the views' redaction.
      const { liveConnection } = await import('../../../src/adapters/mcp/index.js');
      const conn = liveConnection(found.tools[0]!.connection)!;
      const raw = await conn.call('get-env', {}, { timeoutMs: 10_000 });
      const env = JSON.parse((raw.content as { text: string }[])[0]!.text) as Record<string, string>;
      assert.equal(env[LEAKY], undefined, 'the supervisor’s own variable did not leak');
      assert.equal(env.DECLARED_PLAIN, 'visible');
      assert.equal(env.API_KEY, SECRET_VALUE, 'the approved secret entry is there');
      // PWD: set by the shell that enters the tree's cgroup (where one exists); it is the cwd, nothing more.
      const allowed = new Set(['PWD', 'HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'DECLARED_PLAIN', 'API_KEY', 'SUPERVISOR_SPAWN_ID']);
      assert.deepEqual(Object.keys(env).filter((k) => !allowed.has(k)), [], 'nothing outside the allowlist and the declaration');
      // Through the runtime: the secret is redacted from every view.
      const out = await call('ev_get-env', {});
      assert.ok(out.ok && !out.isError);
      assert.ok(!JSON.stringify(out.views).includes(SECRET_VALUE), 'views never hold the secret');
      assert.match(out.views.model.content, /DECLARED_PLAIN/);
    } finally {
      delete process.env[LEAKY];
      delete process.env.MCP_TEST_SECRET_SRC;
    }
  });

  test('a secret env entry without its exact grant: nothing is started, the failure names the grant', async () => {
    const marker = join(scratch.path, 'nosecret');
    const core = await s.core(
      { 'agent/mcp/fx.yaml': fixtureDecl('fx', 'basic', { marker, extra: '' }).replace('transport:\n  type: stdio', 'transport:\n  type: stdio\n  env: [{ name: API_KEY, value: { secret: K } }]') },
      ['mcp.connect:fx', 'mcp.call:fx'],
      '  default: auto\nsecrets:\n  K: { env: NOPE }\n',
    );
    const { found } = await s.session(core, s.manager());
    assert.deepEqual([found.servers[0]!.state, found.servers[0]!.code], ['failed', 'MCP_ENV_DENIED']);
    assert.match(found.servers[0]!.message!, /secret:K/);
    assert.throws(() => readFileSync(marker), /ENOENT/);
  });

  test('server-memory: create_entities (its own approval) then read_graph through the pipeline', async () => {
    const memFile = join(scratch.path, 'memory.jsonl');
    const core = await s.core({
      'agent/mcp/memory.yaml': declaration('memory', [NPM_SERVER('memory')], `  env: [{ name: MEMORY_FILE_PATH, value: ${JSON.stringify(memFile)} }]\napproval:\n  connect: auto\n  call: prompt\n  tools: { read_graph: auto }`),
    });
    const approver = new RecordingApprover((r) => r.toolName === 'memory_create_entities');
    const { call } = await s.session(core, s.manager(), { approver });
    const created = await call('memory_create_entities', { entities: [{ name: 'supervisor', entityType: 'program', observations: ['owns every effect'] }] });
    assert.ok(created.ok && !created.isError, JSON.stringify(created.views.model));
    assert.equal(approver.asked.length, 1);
    assert.deepEqual(approver.asked[0]!.capability, 'mcp.call:memory');
    assert.match(approver.asked[0]!.actionSummary, /^memory\.create_entities \{/);
    const graph = await call('memory_read_graph', {});
    assert.ok(graph.ok);
    assert.match(graph.views.model.content, /owns every effect/);
    assert.equal(approver.asked.length, 1, 'read_graph is auto by its per-tool override');
    assert.match(readFileSync(memFile, 'utf8'), /supervisor/);
  });

  test('server-memory with { workspace_path }: the graph is written in the workspace, not in node_modules', async () => {
    const core = await s.core({
      'agent/mcp/memory.yaml': declaration('memory', [NPM_SERVER('memory')], `  env: [{ name: MEMORY_FILE_PATH, value: { workspace_path: graph.jsonl } }]\napproval:\n  connect: auto\n  call: auto`),
    });
    const inPackage = join(dirname(NPM_SERVER('memory')), 'graph.jsonl');
    const { call } = await s.session(core, s.manager());
    const created = await call('memory_create_entities', { entities: [{ name: 'workspace', entityType: 'place', observations: ['kept here'] }] });
    assert.ok(created.ok && !created.isError, JSON.stringify(created.views.model));
    assert.match(readFileSync(join(core.workspace, 'graph.jsonl'), 'utf8'), /kept here/);
    assert.equal(existsSync(inPackage), false, `nothing written into the package at ${inPackage}`);
  });

  test('server-filesystem rooted in a temp workspace: inside works, outside is refused by the server', async () => {
    const root = join(scratch.path, 'fsroot');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'hello.txt'), 'hello from the workspace\n');
    const core = await s.core({ 'agent/mcp/fs.yaml': declaration('fs', [NPM_SERVER('filesystem'), root], 'approval: { connect: auto, call: auto }') });
    const { call } = await s.session(core, s.manager());
    const inside = await call('fs_read_text_file', { path: join(root, 'hello.txt') });
    assert.ok(inside.ok && !inside.isError);
    assert.match(inside.views.model.content, /hello from the workspace/);
    const outside = await call('fs_read_text_file', { path: '/etc/hostname' });
    assert.ok(outside.ok && outside.isError, 'the server refused a path outside its root');
  });

  test('results are bounded: 1 MB of text is cut, images are described, resources are bounded', async () => {
    const core = await s.core({ 'agent/mcp/fx.yaml': fixtureDecl('fx', 'huge') });
    const { call } = await s.session(core, s.manager());
    const big = await call('fx_huge', {});
    assert.ok(big.ok);
    assert.ok(big.views.model.content.length < 100_000, `model view is ${big.views.model.content.length} characters`);
    const img = await call('fx_image', {});
    assert.ok(img.ok);
    assert.match(img.views.model.content, /\[image: image\/png, 300 bytes\]/);
    assert.match(img.views.model.content, /\[resource file:\/\/\/r\.txt\]/);
  });

  test('a line over the transport cap closes the server with MCP_LINE_TOO_LONG', async () => {
    const core = await s.core({ 'agent/mcp/fx.yaml': fixtureDecl('fx', 'huge-line') });
    const m = s.manager({ maxLineBytes: 1024 * 1024 });
    const { call, found } = await s.session(core, m);
    const out = await call('fx_huge', {});
    assert.ok(!out.ok);
    assert.equal(out.code, 'ADAPTER_FAILED');
    assert.match(out.message, /longer than 1048576 bytes; the server was closed/);
    await m.settle();
    await waitFor('the server to be gone', () => !alive(found.servers[0]!.pid!));
  });

  test('a server crashing mid-call: a typed error; its stale entry then fails before approval', async () => {
    const core = await s.core({ 'agent/mcp/fx.yaml': fixtureDecl('fx', 'crash') });
    const { call } = await s.session(core, s.manager());
    const out = await call('fx_crash', {});
    assert.ok(!out.ok);
    assert.deepEqual([out.code, out.step], ['ADAPTER_FAILED', 7]);
    assert.match(out.message, /fx\.crash: the server closed its connection/);
    const again = await call('fx_echo', { text: 'x' });
    assert.ok(!again.ok);
    assert.deepEqual([again.code, again.step], ['CHECK_FAILED', 4]);
    assert.match(again.message, /connection to MCP server fx .* is closed/);
  });

  test('progress reaches the operator hook; cancelling sends notifications/cancelled to the server', async () => {
    const marker = join(scratch.path, 'cancel-marker');
    const core = await s.core({ 'agent/mcp/fx.yaml': fixtureDecl('fx', 'basic', { marker }) });
    const progress: unknown[] = [];
    const { call } = await s.session(core, s.manager(), { onProgress: (p) => progress.push(p) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 400);
    const out = await call('fx_slow', { ms: 5000 }, { signal: controller.signal });
    assert.ok(!out.ok);
    assert.equal(out.code, 'CANCELLED');
    assert.ok(progress.length >= 2, `progress notifications seen: ${progress.length}`);
    assert.match(JSON.stringify(progress[0]), /"tool":"fx_slow".*"message":"step 1"/);
    await waitFor('the server to see the cancellation', () => readFileSync(marker, 'utf8').includes('cancelled'), 5000);
  });

  test('the call timeout (call_timeout_seconds) ends a slow call with a typed error', async () => {
    const core = await s.core({ 'agent/mcp/fx.yaml': fixtureDecl('fx', 'basic', { extra: 'call_timeout_seconds: 0.3' }) });
    const { call } = await s.session(core, s.manager());
    const t0 = Date.now();
    const out = await call('fx_slow', { ms: 5000 });
    assert.ok(!out.ok);
    assert.match(out.message, /did not answer within 300 ms/);
    assert.ok(Date.now() - t0 < 3000);
    const next = await call('fx_echo', { text: 'still here' });
    assert.ok(next.ok, 'the connection survives a timed-out call');
    scratch.remove();
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z');
  } catch {
    return false;
  }
}
