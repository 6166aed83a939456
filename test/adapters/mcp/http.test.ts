// MCP over Streamable HTTP: real SDK servers on 127.0.0.1 (supervised fixture processes), reached
// only through the URL policy and the pinned dispatcher, with hostile servers: one that hangs on
// initialize, one that redirects elsewhere, one that answers with a huge body, one that echoes the
// secret header back, and declarations the policy refuses.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreLoadError, loadCore, type CoreSnapshot } from '../../../src/core/index.js';
import { liveConnection } from '../../../src/adapters/mcp/index.js';
import { makeCore } from '../../core/temp-core.js';
import { tempDir, waitFor } from '../../helpers/procs.js';
import { mcpSuite, RecordingApprover } from './mcp-fixture.js';

const TOKEN = 'mcp-http-bearer-5f2c9a7e-do-not-leak-1234';
const LOOPBACK = "  network: { allow_cidrs: ['127.0.0.1/32'] }";

function httpDecl(name: string, url: string, o: { network?: boolean; headers?: string[]; extra?: string; connectTimeout?: number } = {}): string {
  return [
    `name: ${name}`,
    'transport:',
    '  type: http',
    `  url: ${JSON.stringify(url)}`,
    ...(o.headers ? ['  headers:', ...o.headers.map((h) => `    - ${h}`)] : []),
    ...(o.network === false ? [] : [LOOPBACK]),
    `connect_timeout_seconds: ${o.connectTimeout ?? 10}`,
    'approval: { connect: auto, call: auto }',
    o.extra ?? '',
  ].join('\n') + '\n';
}

const SECRET_HEADER = '{ name: Authorization, value: { secret: MCP_TOKEN } }';

/** A test CA and a server certificate for the IP address 127.0.0.1 (IP SAN), made with openssl. */
function testCertificates(dir: string): string {
  const run = (args: string[]): void => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, `openssl ${args.join(' ')}: ${r.stderr}`);
  };
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=mcp http test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  run(['req', '-new', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  run(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'server.ext']);
  return readFileSync(join(dir, 'ca.crt'), 'utf8');
}

describe('MCP over Streamable HTTP', { skip: process.platform !== 'linux' && 'fixtures use POSIX tools' }, () => {
  const s = mcpSuite();

  async function coreWith(files: Record<string, string>): Promise<CoreSnapshot> {
    return s.core(files, ['mcp.connect:*', 'mcp.call:*', 'secret:MCP_TOKEN'], '  default: auto\nsecrets:\n  MCP_TOKEN: { env: MCP_HTTP_TEST_TOKEN }\n');
  }

  function storeHolds(text: string): boolean {
    const db = join(s.stateDir, 'supervisor.db');
    return [db, `${db}-wal`].some((f) => existsSync(f) && readFileSync(f).includes(Buffer.from(text)));
  }

  test('a real server over HTTP: tools listed and called through the pipeline; the secret header reaches the server and no view, error or store', async () => {
    process.env.MCP_HTTP_TEST_TOKEN = TOKEN;
    try {
      const srv = await s.httpServer('basic');
      const core = await coreWith({ 'agent/mcp/web.yaml': httpDecl('web', srv.url, { headers: [SECRET_HEADER, '{ name: X-Plain, value: visible }'] }).replace('connect: auto', 'connect: prompt') });
      const approver = new RecordingApprover(true);
      const m = s.manager();
      const { found, call } = await s.session(core, m, { approver });
      assert.equal(found.servers[0]!.state, 'connected', found.servers[0]!.message ?? '');
      assert.deepEqual(found.tools.map((t) => t.name), ['web_echo', 'web_headers', 'web_huge', 'web_slow']);
      assert.equal(found.servers[0]!.pid, null, 'an HTTP server is no process of ours');
      // The operator approved the URL and the header names, never a value.
      const asked = approver.asked.find((r) => r.capability === 'mcp.connect:web')!;
      assert.match(asked.actionSummary, /^connect to MCP server web at http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      assert.match(JSON.stringify(asked.preview), /Authorization/);
      assert.ok(!JSON.stringify(asked).includes(TOKEN));

      const echo = await call('web_echo', { text: 'over http' });
      assert.ok(echo.ok && !echo.isError, JSON.stringify(echo));
      assert.equal(echo.views.model.content, 'over http');

      // What the server really received, read bypassing the views: the header with its value.
      const raw = await liveConnection(found.tools[0]!.connection)!.call('headers', {}, { timeoutMs: 10_000 });
      const got = JSON.parse((raw.content as { text: string }[])[0]!.text) as Record<string, string>;
      assert.equal(got.authorization, TOKEN);
      assert.equal(got['x-plain'], 'visible');
      // Through the runtime the echoed secret is redacted from every view and from the store.
      const echoed = await call('web_headers', {});
      assert.ok(echoed.ok);
      assert.match(echoed.views.model.content, /x-plain/);
      assert.ok(!JSON.stringify(echoed.views).includes(TOKEN), 'no view holds the secret');
      assert.ok(!storeHolds(TOKEN), 'the store never holds the secret');

      await m.close();
      await waitFor('the server to see the session end (DELETE)', () => /session closed/.test(srv.output()), 5000);
    } finally {
      delete process.env.MCP_HTTP_TEST_TOKEN;
    }
  });

  test('a server whose error answer echoes the secret header: the connect failure is redacted', async () => {
    process.env.MCP_HTTP_TEST_TOKEN = TOKEN;
    try {
      const srv = await s.httpServer('record');
      const core = await coreWith({ 'agent/mcp/rec.yaml': httpDecl('rec', srv.url, { headers: [SECRET_HEADER] }) });
      const { found } = await s.session(core, s.manager());
      const st = found.servers[0]!;
      assert.deepEqual([st.state, st.code], ['failed', 'MCP_CONNECT_FAILED']);
      assert.match(st.message!, /HTTP 401/);
      // The fixture logs the request on its stdout pipe and answers 401 on the socket: either may arrive first.
      await waitFor('the fixture to log the request', () => srv.output().includes('request '), 5000);
      assert.match(srv.output(), new RegExp(TOKEN), 'the server did receive (and echo) the token');
      assert.ok(!st.message!.includes(TOKEN), `the message holds no secret: ${st.message}`);
      assert.match(st.message!, /unauthorized; you sent/);
    } finally {
      delete process.env.MCP_HTTP_TEST_TOKEN;
    }
  });

  test('loopback is refused unless the declaration (or agent.yaml network:) opens it; the load error names the file and the field', async () => {
    const dir = makeCore({
      'agent.yaml': 'name: t\ngrants: ["mcp.connect:*"]\n',
      'agent/mcp/local.yaml': httpDecl('local', 'http://127.0.0.1:9/mcp', { network: false }),
      'agent/mcp/meta.yaml': httpDecl('meta', 'http://metadata.google.internal/computeMetadata/v1/', { network: false }),
    });
    await assert.rejects(loadCore(dir), (err: unknown) => {
      assert.ok(err instanceof CoreLoadError);
      const issues = err.issues.map((i) => `${i.file} ${i.field}: ${i.message}`);
      assert.equal(issues.length, 2, issues.join('\n'));
      assert.match(issues[0]!, /^agent\/mcp\/local\.yaml transport\.url: is refused by the URL policy \(url\.address_forbidden: .*127\.0\.0\.1 is loopback.*allow_cidrs: \['127\.0\.0\.1\/32'\]/);
      assert.match(issues[1]!, /^agent\/mcp\/meta\.yaml transport\.url: .*url\.host_forbidden/);
      return true;
    });
    // The same server opened core-wide by agent.yaml network: loads.
    const opened = await loadCore(makeCore({ 'agent.yaml': "name: t\nnetwork: { allow_cidrs: ['127.0.0.0/8'] }\n", 'agent/mcp/local.yaml': httpDecl('local', 'http://127.0.0.1:9/mcp', { network: false }) }));
    assert.equal(opened.mcp[0]!.transport.type, 'http');
    // Headers the transport owns cannot be declared.
    await assert.rejects(
      loadCore(makeCore({ 'agent.yaml': 'name: t\n', 'agent/mcp/h.yaml': httpDecl('h', 'http://127.0.0.1:9/mcp', { headers: ['{ name: Host, value: evil.example }'] }) })),
      /transport\.headers\[0\]\.name.*set by the MCP transport itself/,
    );
  });

  test('https: the pinned connection verifies the server certificate (IP SAN); an untrusted one is refused', { skip: spawnSync('sh', ['-c', 'command -v openssl']).status !== 0 && 'needs openssl' }, async () => {
    const certs = tempDir('mcp-tls-');
    try {
      const ca = testCertificates(certs.path);
      const srv = await s.httpServer('basic', ['--tls', certs.path]);
      assert.match(srv.url, /^https:\/\/127\.0\.0\.1:/);
      const core = await coreWith({ 'agent/mcp/tls.yaml': httpDecl('tls', srv.url) });
      const { found, call } = await s.session(core, s.manager({ ca }));
      assert.equal(found.servers[0]!.state, 'connected', found.servers[0]!.message ?? '');
      const echo = await call('tls_echo', { text: 'over tls' });
      assert.ok(echo.ok && echo.views.model.content === 'over tls', JSON.stringify(echo));
      const untrusted = await s.session(core, s.manager());
      assert.deepEqual([untrusted.found.servers[0]!.state, untrusted.found.servers[0]!.code], ['failed', 'MCP_CONNECT_FAILED']);
      assert.match(untrusted.found.servers[0]!.message!, /request to https:\/\/127\.0\.0\.1:\d+ failed \((UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT_LOCALLY)/);
    } finally {
      certs.remove();
    }
  });

  test('a server that hangs on initialize is closed at its connect timeout; a healthy peer is not held up', async () => {
    const hang = await s.httpServer('hang');
    const ok = await s.httpServer('basic');
    const core = await coreWith({ 'agent/mcp/h.yaml': httpDecl('h', hang.url, { connectTimeout: 2 }), 'agent/mcp/ok.yaml': httpDecl('ok', ok.url) });
    const t0 = Date.now();
    const { found } = await s.session(core, s.manager());
    const took = Date.now() - t0;
    const [h, good] = found.servers;
    assert.deepEqual([h!.state, h!.code], ['failed', 'MCP_CONNECT_TIMEOUT']);
    assert.match(h!.message!, /connect timeout of 2000 ms \(connect_timeout_seconds in agent\/mcp\/h\.yaml/);
    assert.equal(good!.state, 'connected', good!.message ?? '');
    // Held up by the hang's timeout once, not more (2 s of slack for a loaded machine).
    assert.ok(took >= 2000 && took < 2 * 2000, `discovery took ${took} ms; the connect timeout is 2000 ms`);
  });

  test('a redirect to a forbidden host, or to any other origin (even an allowed one), is not followed', async () => {
    process.env.MCP_HTTP_TEST_TOKEN = TOKEN;
    try {
      const elsewhere = await s.httpServer('record');
      const toMetadata = await s.httpServer('redirect', ['--redirect-to', 'http://169.254.169.254/latest/meta-data/']);
      const toOther = await s.httpServer('redirect', ['--redirect-to', elsewhere.url]);
      const core = await coreWith({
        'agent/mcp/a.yaml': httpDecl('a', toMetadata.url, { headers: [SECRET_HEADER] }),
        'agent/mcp/b.yaml': httpDecl('b', toOther.url, { headers: [SECRET_HEADER] }),
      });
      const { found } = await s.session(core, s.manager());
      for (const st of found.servers) {
        assert.deepEqual([st.state, st.code], ['failed', 'MCP_URL_REFUSED'], st.message ?? '');
        assert.match(st.message!, /url\.redirect_forbidden: .*answered 307 with a redirect to http:\/\/.*followed only within its declared origin/);
        assert.ok(!st.message!.includes(TOKEN));
      }
      assert.match(found.servers[0]!.message!, /169\.254\.169\.254/);
      assert.equal(elsewhere.output().includes('request '), false, `the other origin got nothing: ${elsewhere.output()}`);
    } finally {
      delete process.env.MCP_HTTP_TEST_TOKEN;
    }
  });

  for (const json of [false, true]) {
    test(`a huge ${json ? 'JSON' : 'SSE'} answer closes the connection at the message bound; nothing unbounded is buffered`, async () => {
      const srv = await s.httpServer('basic', json ? ['--json'] : []);
      const core = await coreWith({ 'agent/mcp/big.yaml': httpDecl('big', srv.url) });
      const { call } = await s.session(core, s.manager({ maxLineBytes: 1024 * 1024 }));
      const out = await call('big_huge', {});
      assert.ok(!out.ok, JSON.stringify(out).slice(0, 300));
      assert.equal(out.code, 'ADAPTER_FAILED');
      assert.match(out.message, /longer than 1048576 bytes; the connection was closed/);
      const next = await call('big_echo', { text: 'x' });
      assert.ok(!next.ok, 'the closed connection is not used again');
    });
  }

  test('call timeout, progress and cancellation over HTTP', async () => {
    const srv = await s.httpServer('basic');
    const core = await coreWith({ 'agent/mcp/w.yaml': httpDecl('w', srv.url, { extra: 'call_timeout_seconds: 0.5' }) });
    const progress: unknown[] = [];
    const { call } = await s.session(core, s.manager(), { onProgress: (p) => progress.push(p) });
    const t0 = Date.now();
    const slow = await call('w_slow', { ms: 5000 });
    assert.ok(!slow.ok);
    assert.match(slow.message, /did not answer within 500 ms/);
    assert.ok(Date.now() - t0 < 3000);
    assert.ok(progress.length >= 2, `progress notifications: ${progress.length}`);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const cancelled = await call('w_slow', { ms: 300 }, { signal: controller.signal });
    assert.equal(cancelled.ok ? 'ok' : cancelled.code, 'CANCELLED');
    await waitFor('the server to see the cancellation', () => srv.output().includes('cancelled'), 5000);
    const still = await call('w_echo', { text: 'alive' });
    assert.ok(still.ok, 'the connection survives a timed-out and a cancelled call');
  });
});
