// web_extract through the whole pipeline against real HTTP servers on 127.0.0.1: refused before
// approval unless the operator opened the address, readable text when allowed, redirects and
// views held to the URL policy.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApprovalRules, RuleApprover } from '../../../src/policy/index.js';
import { runtimeSuite } from '../../effects/runtime-fixture.js';

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; base: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    hits.push(req.url ?? '');
    handler!(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const PAGE = '<html><head><title>Release notes</title><style>p{}</style></head><body><h1>Version 2</h1><script>alert(1)</script><p>Faster &amp; safer.</p></body></html>';

describe('web_extract', () => {
  const suite = runtimeSuite();

  async function setup(network = '') {
    const asked: string[] = [];
    const inner = new RuleApprover(ApprovalRules.parse({ approve: ['web_extract'] }));
    const r = await suite.runtime({
      files: { 'agent.yaml': `name: t\ntoolsets: [web]\ngrants: [net.fetch]\n${network}` },
      approver: { decide: (q, s) => (asked.push(q.actionSummary), inner.decide(q, s)) },
      principal: 'p',
    });
    const call = (args: Record<string, unknown>) => r.runtime.execute(r.runtime.request('web_extract', args)!, r.ctx);
    return { ...r, call, asked };
  }

  test('a loopback URL is refused at step 4, before approval, and the server never hears of it', async (t) => {
    const srv = await serve((_q, res) => res.end(PAGE));
    t.after(() => srv.server.close());
    const s = await setup();
    for (const url of [`${srv.base}/secret-path?token=abc`, srv.base.replace('127.0.0.1', 'localhost'), srv.base.replace('127.0.0.1', '2130706433'), srv.base.replace('127.0.0.1', '[::ffff:127.0.0.1]')]) {
      const out = await s.call({ url });
      assert.deepEqual([out.ok, !out.ok && out.code, !out.ok && out.step], [false, 'CHECK_FAILED', 4], url);
    }
    const ftp = await s.call({ url: 'file:///etc/passwd' });
    assert.equal(!ftp.ok && ftp.code, 'CHECK_FAILED');
    assert.deepEqual(s.asked, []);
    assert.deepEqual(srv.hits, []);
  });

  test('with the address opened by the operator: readable text, and the views keep only scheme, host and port', async (t) => {
    const srv = await serve((_q, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(PAGE);
    });
    t.after(() => srv.server.close());
    const s = await setup('network:\n  allow_cidrs: [127.0.0.1/32]\n');
    const out = await s.call({ url: `${srv.base}/notes/v2?session=hunter2#top` });
    assert.equal(out.ok, true, JSON.stringify(!out.ok && out.message));
    if (!out.ok) return;
    assert.equal(out.isError, false);
    assert.match(out.views.model.content, /# Release notes/);
    assert.match(out.views.model.content, /Faster & safer\./);
    assert.doesNotMatch(out.views.model.content, /alert\(1\)|p\{\}/);
    for (const view of [out.views.durable, out.views.event, out.views.operator]) {
      const j = JSON.stringify(view);
      assert.ok(!j.includes('hunter2') && !j.includes('/notes/v2'), `a view keeps the path or query: ${j}`);
    }
    assert.equal((out.views.durable.audit as { url: string }).url, srv.base);
    assert.deepEqual(s.asked, [`GET ${srv.base}`]);
    assert.deepEqual(srv.hits, ['/notes/v2?session=hunter2']);
  });

  test('a redirect to a forbidden place is refused with its code, and nothing is fetched there', async (t) => {
    const target = await serve((_q, res) => res.end('private'));
    t.after(() => target.server.close());
    const srv = await serve((_q, res) => {
      res.statusCode = 302;
      res.setHeader('location', target.base.replace('127.0.0.1', '127.0.0.2') + '/admin');
      res.end();
    });
    t.after(() => srv.server.close());
    const s = await setup('network:\n  allow_cidrs: [127.0.0.1/32]\n');
    const out = await s.call({ url: `${srv.base}/go` });
    assert.equal(out.ok, true);
    assert.equal(out.ok && out.isError, true);
    assert.match(out.views.model.content, /url\.redirect_forbidden/);
    assert.deepEqual(target.hits, []);
  });

  test('size is bounded: a 10 MiB page returns at most max_chars of text', async (t) => {
    const srv = await serve((_q, res) => {
      res.setHeader('content-type', 'text/plain');
      res.end('x'.repeat(10 * 1024 * 1024));
    });
    t.after(() => srv.server.close());
    const s = await setup('network:\n  allow_cidrs: [127.0.0.1/32]\n');
    const out = await s.call({ url: srv.base, max_chars: 1000 });
    assert.equal(out.ok, true);
    if (!out.ok) return;
    assert.ok(out.views.model.content.length < 1200, `${out.views.model.content.length} characters`);
    assert.equal((out.views.durable.detail as { truncated: boolean }).truncated, true);
  });

  test('a bad operator range names the field', async () => {
    await assert.rejects(setup('network:\n  allow_cidrs: [10.0.0.0/33]\n'), /network\.allow_cidrs\[0\]/);
  });
});
