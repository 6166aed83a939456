// Discovery: gated before anything starts, bounded per server, limited runtime-wide, remembered
// failures, targeted refreshes, and connections that close with their declarations and sessions.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCatalog } from '../../../src/catalog/index.js';
import { alive, tempDir } from '../../helpers/procs.js';
import { fixtureDecl, mcpSuite, RecordingApprover, request } from './mcp-fixture.js';

describe('MCP discovery', { skip: process.platform !== 'linux' && 'fixtures use POSIX tools' }, () => {
  const s = mcpSuite();
  const scratch = tempDir('mcp-markers-');

  test('without the grant mcp.connect:<server> nothing is asked and nothing is spawned', async () => {
    const marker = join(scratch.path, 'nogrant');
    const core = await s.core({ 'agent/mcp/a.yaml': fixtureDecl('a', 'basic', { marker }) }, ['mcp.call:*']);
    const approver = new RecordingApprover(true);
    const r = await s.manager().discover(request(core, 'sess', approver));
    assert.deepEqual([r.servers[0]!.state, r.servers[0]!.code], ['denied', 'CAPABILITY_DENIED']);
    assert.match(r.servers[0]!.message!, /mcp\.connect:a/);
    assert.equal(approver.asked.length, 0, 'no approval asked without the grant');
    assert.equal(existsSync(marker), false, 'the server never started');
    assert.deepEqual(r.tools, []);
  });

  test('a denied connect approval spawns nothing; the approval is asked again on the next discovery', async () => {
    const marker = join(scratch.path, 'denied');
    const core = await s.core({ 'agent/mcp/a.yaml': fixtureDecl('a', 'basic', { marker }).replace('connect: auto', 'connect: prompt') });
    const approver = new RecordingApprover(false);
    const m = s.manager();
    const r = await m.discover(request(core, 'sess', approver));
    assert.deepEqual([r.servers[0]!.state, r.servers[0]!.code], ['denied', 'APPROVAL_DENIED']);
    assert.equal(existsSync(marker), false);
    assert.equal(approver.asked[0]!.capability, 'mcp.connect:a');
    assert.match(approver.asked[0]!.actionSummary, /start MCP server a: .*server\.mjs basic/);
    await m.discover(request(core, 'sess', approver));
    assert.equal(approver.asked.length, 2, 'denied authority is checked again per server on the next turn');
    assert.equal(existsSync(marker), false);
  });

  test('tools are listed over every page, filtered, prefixed and sorted; the catalog takes them with the connect policy', async () => {
    const core = await s.core({ 'agent/mcp/fx.yaml': fixtureDecl('fx', 'basic', { pages: 2, extra: "include: ['*']\nexclude: [crash, 'hu*']\nrisk: high" }) });
    const r = await s.manager().discover(request(core, 'sess'));
    assert.equal(r.servers[0]!.state, 'connected', r.servers[0]!.message ?? '');
    assert.deepEqual(r.tools.map((t) => t.name), ['fx_echo', 'fx_env', 'fx_image', 'fx_mutate', 'fx_slow']);
    assert.equal(r.servers[0]!.tools, 7, 'all pages were read');
    const catalog = buildCatalog({ core, principal: 'local:test', mcpTools: r.tools, connectPolicy: r.connectPolicy });
    const e = catalog.entryForCall('fx_echo')!;
    assert.deepEqual([e.source, e.capability, e.risk, e.approval], ['mcp', 'mcp.call:fx', 'high', 'auto']);
    assert.match(e.provenance, /MCP server "fx" \(agent\/mcp\/fx\.yaml\)/);
  });

  test('a server that hangs on initialize is closed at its connect timeout without holding up the others', async () => {
    const core = await s.core({
      'agent/mcp/a.yaml': fixtureDecl('a', 'basic'),
      'agent/mcp/h1.yaml': fixtureDecl('h1', 'hang', { connectTimeout: 3 }),
      // Hangs and ignores TERM: its close takes the whole grace, which must not delay discovery.
      'agent/mcp/h2.yaml': fixtureDecl('h2', 'hang', { connectTimeout: 3, args: ['--ignore-term'] }),
      'agent/mcp/z.yaml': fixtureDecl('z', 'basic'),
    });
    const m = s.manager();
    const t0 = Date.now();
    const r = await m.discover(request(core, 'sess'));
    const took = Date.now() - t0;
    const by = Object.fromEntries(r.servers.map((x) => [x.server, x]));
    assert.equal(by.a!.state, 'connected');
    assert.equal(by.z!.state, 'connected');
    assert.deepEqual([by.h1!.state, by.h1!.code], ['failed', 'MCP_CONNECT_TIMEOUT']);
    assert.deepEqual([by.h2!.state, by.h2!.code], ['failed', 'MCP_CONNECT_TIMEOUT']);
    assert.match(by.h1!.message!, /connect timeout of 3000 ms \(connect_timeout_seconds in agent\/mcp\/h1\.yaml/);
    // The two hangs ran side by side and neither close was waited for: less than two timeouts (3 s
    // of slack for start-up on a loaded machine; a fixed 1.5 s margin failed at load 10).
    assert.ok(took >= 3000 && took < 2 * 3000, `discovery took ${took} ms; one connect timeout is 3000 ms`);
    await m.settle();
    assert.equal(m.openConnections, 2);
  });

  test('twelve servers: never more than four server operations at once', async () => {
    const files: Record<string, string> = {};
    // Twelve servers through four slots start in three rounds, and a server's connect timeout counts
    // its wait for a slot: at the default 10 s, five of the twelve timed out at load 20-30 (issue 17).
    // This test is about the limit, not the timeout, so each server gets a minute.
    for (let i = 0; i < 12; i++) files[`agent/mcp/s${i}.yaml`] = fixtureDecl(`s${i}`, 'basic', { connectTimeout: 60 });
    const core = await s.core(files);
    const m = s.manager();
    const r = await m.discover(request(core, 'sess'));
    assert.equal(r.servers.filter((x) => x.state === 'connected').length, 12);
    assert.equal(m.highestConcurrency, 4, 'the limit was reached and never passed');
  });

  test('a crashed server is remembered 30 s; after expiry only it is retried while its healthy peer stays connected', async () => {
    let now = 1_000_000;
    const core = await s.core({ 'agent/mcp/c.yaml': fixtureDecl('c', 'crash'), 'agent/mcp/ok.yaml': fixtureDecl('ok', 'basic') });
    const m = s.manager({ now: () => now });
    const first = await m.discover(request(core, 'sess'));
    const okPid = first.servers.find((x) => x.server === 'ok')!.pid!;
    const crashTool = first.tools.find((t) => t.name === 'c_crash')!;
    const { liveConnection } = await import('../../../src/adapters/mcp/index.js');
    const conn = liveConnection(crashTool.connection)!;
    await assert.rejects(conn.call('crash', {}, { timeoutMs: 5000 }), (e: any) => e.code === 'MCP_SERVER_CLOSED' && /c\.crash/.test(e.message));
    const second = await m.discover(request(core, 'sess'));
    const c2 = second.servers.find((x) => x.server === 'c')!;
    assert.deepEqual([c2.state, c2.code, c2.cached], ['failed', 'MCP_SERVER_CLOSED', true]);
    assert.notEqual(second.connectPolicy, first.connectPolicy, 'a failed server changes the catalog identity');
    now += 31_000;
    const third = await m.discover(request(core, 'sess'));
    assert.equal(third.servers.find((x) => x.server === 'c')!.state, 'connected', 'retried after expiry');
    const ok3 = third.servers.find((x) => x.server === 'ok')!;
    assert.deepEqual([ok3.pid, ok3.approval], [okPid, 'held'], 'the healthy peer kept its connection');
    assert.ok(alive(okPid));
  });

  test('a server whose tool list changes is listed again on the next discovery (only that one): new manifest, new catalog', async () => {
    const core = await s.core({ 'agent/mcp/ch.yaml': fixtureDecl('ch', 'changing'), 'agent/mcp/st.yaml': fixtureDecl('st', 'basic') });
    const m = s.manager();
    const first = await m.discover(request(core, 'sess'));
    const { liveConnection } = await import('../../../src/adapters/mcp/index.js');
    const conn = liveConnection(first.tools.find((t) => t.name === 'ch_mutate')!.connection)!;
    await conn.call('mutate', {}, { timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 100));
    const second = await m.discover(request(core, 'sess'));
    assert.ok(second.tools.some((t) => t.name === 'ch_extra'));
    const [a, b] = [first, second].map((r) => Object.fromEntries(r.servers.map((x) => [x.server, x])));
    assert.notEqual(a!.ch!.manifest, b!.ch!.manifest);
    assert.equal(a!.st!.manifest, b!.st!.manifest);
    assert.deepEqual([a!.ch!.pid, a!.st!.pid], [b!.ch!.pid, b!.st!.pid], 'refreshed in place, nobody restarted');
    const ids = [first, second].map((r) => buildCatalog({ core, principal: 'local:test', mcpTools: r.tools, connectPolicy: r.connectPolicy }).id);
    assert.notEqual(ids[0], ids[1]);
  });

  test('a changed declaration needs connect approval again and replaces the old server; removing all declarations closes the rest', async () => {
    const decl = fixtureDecl('a', 'basic').replace('connect: auto', 'connect: prompt');
    const core1 = await s.core({ 'agent/mcp/a.yaml': decl });
    const core2 = await s.core({ 'agent/mcp/a.yaml': decl.replace('call: auto', 'call: prompt') });
    const core3 = await s.core({});
    const approver = new RecordingApprover(true);
    const m = s.manager();
    const r1 = await m.discover(request(core1, 'sess', approver));
    await m.discover(request(core1, 'sess', approver));
    assert.equal(approver.asked.length, 1, 'an unchanged declaration keeps its approved connection');
    const r2 = await m.discover(request(core2, 'sess', approver));
    assert.equal(approver.asked.length, 2, 'the changed declaration was approved again');
    assert.notEqual(r1.servers[0]!.declaration, r2.servers[0]!.declaration);
    assert.notEqual(r1.servers[0]!.pid, r2.servers[0]!.pid);
    await m.settle();
    assert.equal(alive(r1.servers[0]!.pid!), false, 'the old server was closed');
    await m.discover(request(core3, 'sess', approver));
    await m.settle();
    assert.equal(m.openConnections, 0);
    assert.equal(alive(r2.servers[0]!.pid!), false);
  });

  test('sessions share a connection; evicting one session closes only what no other session holds', async () => {
    const core = await s.core({ 'agent/mcp/a.yaml': fixtureDecl('a', 'basic') });
    const other = await s.core({ 'agent/mcp/b.yaml': fixtureDecl('b', 'basic') });
    const m = s.manager();
    const r1 = await m.discover(request(core, 's1'));
    const r2 = await m.discover(request(core, 's2'));
    const rb = await m.discover(request(other, 's3'));
    assert.equal(r1.servers[0]!.pid, r2.servers[0]!.pid, 'one server for both sessions');
    await m.releaseSession('s1');
    assert.ok(alive(r1.servers[0]!.pid!), 's2 still holds it');
    assert.ok(alive(rb.servers[0]!.pid!), "another session's server is untouched");
    await m.releaseSession('s2');
    assert.equal(alive(r1.servers[0]!.pid!), false);
    assert.ok(alive(rb.servers[0]!.pid!));
    await m.releaseSession('s3');
    assert.equal(alive(rb.servers[0]!.pid!), false);
  });

  test('an HTTP server behind a denied connect approval is never contacted, and its secret header is never read', async () => {
    const srv = await s.httpServer('record');
    const decl = `name: web\ntransport:\n  type: http\n  url: ${JSON.stringify(srv.url)}\n  headers: [{ name: Authorization, value: { secret: T } }]\n  network: { allow_cidrs: ['127.0.0.1/32'] }\napproval: { connect: prompt }\n`;
    const core = await s.core({ 'agent/mcp/web.yaml': decl }, ['mcp.connect:web', 'secret:T'], '  default: auto\nsecrets:\n  T: { env: MCP_DISCOVERY_NEVER_READ }\n');
    const approver = new RecordingApprover(false);
    let read = 0;
    const r = await s.manager().discover({ ...request(core, 'sess', approver), resolveEnv: async () => (read++, 'x') });
    assert.deepEqual([r.servers[0]!.state, r.servers[0]!.code], ['denied', 'APPROVAL_DENIED']);
    assert.match(approver.asked[0]!.actionSummary, /^connect to MCP server web at http:\/\/127\.0\.0\.1:/);
    assert.equal(read, 0, 'no secret was resolved before approval');
    assert.equal(srv.output().includes('request '), false, 'nothing was sent to the server');
    scratch.remove();
  });
});
