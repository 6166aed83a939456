// fetchPage against real servers on loopback. 127.0.0.1 stands in for a public address by being on
// the operator allowlist; 127.0.0.2 is not, and plays the internal target a rebinding or redirect
// attack aims at (a decoy server there counts every connection).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, afterEach, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { EnvHttpProxyAgent, getGlobalDispatcher, request as undiciRequest, setGlobalDispatcher } from 'undici';
import { PageFetchError, UrlPolicyError } from '../../src/net/errors.js';
import { fetchPage } from '../../src/net/fetch-page.js';
import { createPinnedAgent } from '../../src/net/pinned-agent.js';
import { type DnsAnswer, resolvePinnedTarget } from '../../src/net/resolve.js';
import { ServerPool, type TestServer, redirectTo, text } from './servers.js';

const ALLOW = { cidrs: ['127.0.0.1/32'] };
const MiB = 1024 * 1024;

/** A resolver the test controls: each name maps to a list of answers, consumed one per call. */
function resolver(map: Record<string, string[]>) {
  const calls: string[] = [];
  const lookup = async (host: string): Promise<DnsAnswer[]> => {
    calls.push(host);
    const queue = map[host];
    if (!queue || queue.length === 0) throw Object.assign(new Error(`no answer for ${host}`), { code: 'ENOTFOUND' });
    const address = queue.length > 1 ? queue.shift()! : queue[0]!;
    return [{ address, family: address.includes(':') ? 6 : 4 }];
  };
  return { lookup, calls };
}

async function rejectsWith(p: Promise<unknown>, cls: typeof UrlPolicyError | typeof PageFetchError, code: string): Promise<Error & { code: string }> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof cls, `expected ${cls.name} ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but the fetch succeeded`);
}

const pool = new ServerPool();
let decoy: TestServer;
let decoyPort: number;

before(async () => {
  decoy = await pool.start(text('internal secret'), '127.0.0.2');
  decoyPort = decoy.port;
});
after(() => pool.closeAll());

describe('fetchPage: pinning and the Host header', () => {
  it('connects to the validated address and sends the original Host, path and query', async () => {
    const site = await pool.start(text('<title>Hi</title><p>hello</p>'));
    const r = resolver({ 'site.test': ['127.0.0.1'] });
    const page = await fetchPage(`http://user:pw@site.test:${site.port}/page?x=1#frag`, { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW });
    assert.equal(page.status, 200);
    assert.equal(page.text, '<title>Hi</title><p>hello</p>');
    assert.equal(page.contentType, 'text/html; charset=utf-8');
    assert.equal(page.finalUrl, `http://site.test:${site.port}`);
    assert.equal(page.truncated, false);
    assert.equal(page.bytes, 29);
    assert.equal(site.requests[0]?.host, `site.test:${site.port}`);
    assert.equal(site.requests[0]?.url, '/page?x=1');
    assert.deepEqual(r.calls, ['site.test']);
  });

  it('looks a name up once per request, so a rebinding resolver cannot move the connection', async () => {
    const site = await pool.start(text('public page'), '127.0.0.1', decoyPort);
    const r = resolver({ 'rebind.test': ['127.0.0.1', '127.0.0.2'] });
    const page = await fetchPage(`http://rebind.test:${decoyPort}/`, { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW });
    assert.equal(page.text, 'public page');
    assert.equal(r.calls.length, 1);
    assert.equal(site.requests.length, 1);
    assert.equal(decoy.connections, 0);
  });

  it('re-validates a redirect to the same name: the second answer (127.0.0.2) is refused', async () => {
    const site = await pool.start(redirectTo('/again'), '127.0.0.1', 0);
    const r = resolver({ 'rebind2.test': ['127.0.0.1', '127.0.0.2'] });
    const err = await rejectsWith(
      fetchPage(`http://rebind2.test:${site.port}/`, { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW }),
      UrlPolicyError,
      'url.redirect_forbidden',
    );
    assert.equal((err.cause as UrlPolicyError).code, 'url.address_forbidden');
    assert.equal(r.calls.length, 2);
    assert.equal(decoy.connections, 0);
  });

  it('refuses to carry a request for another origin on a pinned agent, before dialling', async () => {
    const site = await pool.start(text('x'));
    const target = await resolvePinnedTarget(`http://site.test:${site.port}/`, { lookup: resolver({ 'site.test': ['127.0.0.1'] }).lookup, allow: ALLOW });
    const agent = createPinnedAgent(target);
    try {
      await rejectsWith(agent.request({ origin: `http://other.test:${site.port}`, path: '/', method: 'GET' }), UrlPolicyError, 'url.not_pinned');
      await rejectsWith(agent.request({ origin: `http://site.test:${decoyPort}`, path: '/', method: 'GET' }), UrlPolicyError, 'url.not_pinned');
      assert.equal(site.connections, 0);
      assert.equal(decoy.connections, 0);
    } finally {
      await agent.destroy();
    }
  });
});

describe('fetchPage: redirects', () => {
  const forbidden: ReadonlyArray<readonly [string, string]> = [
    ['http://10.0.0.1/', 'url.address_forbidden'],
    ['http://[::ffff:169.254.169.254]/latest/meta-data/', 'url.address_forbidden'],
    ['http://0x7f000002:PORT/', 'url.address_forbidden'],
    ['http://internal-name.test:PORT/', 'url.address_forbidden'],
    ['http://localhost:PORT/', 'url.host_forbidden'],
    ['http://metadata.google.internal/', 'url.host_forbidden'],
    ['file:///etc/passwd', 'url.scheme'],
    ['gopher://127.0.0.1:6379/_', 'url.scheme'],
  ];
  for (const [location, cause] of forbidden) {
    it(`refuses a redirect to ${location}`, async () => {
      const site = await pool.start(redirectTo(location.replace('PORT', String(decoyPort)), 307));
      const r = resolver({ 'site.test': ['127.0.0.1'], 'internal-name.test': ['127.0.0.2'] });
      const err = await rejectsWith(
        fetchPage(`http://site.test:${site.port}/`, { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW }),
        UrlPolicyError,
        'url.redirect_forbidden',
      );
      assert.equal((err.cause as UrlPolicyError).code, cause);
      assert.match(err.message, new RegExp(`http://site\\.test:${site.port}`));
      assert.equal(decoy.connections, 0);
    });
  }

  it('follows five redirects (relative Locations included) and refuses the sixth', async () => {
    const chain = await pool.start((req, res) => {
      const n = Number((req.url ?? '').split('/')[2]);
      if (n > 0) {
        res.writeHead(302, { location: `/r/${n - 1}` });
        res.end();
      } else text('end of chain')(req, res);
    });
    const r = resolver({ 'chain.test': ['127.0.0.1'] });
    const opts = { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW };
    const page = await fetchPage(`http://chain.test:${chain.port}/r/5`, opts);
    assert.equal(page.text, 'end of chain');
    assert.equal(page.redirects, 5);
    assert.equal(chain.requests.length, 6);
    await rejectsWith(fetchPage(`http://chain.test:${chain.port}/r/6`, opts), UrlPolicyError, 'url.too_many_redirects');
    assert.equal(chain.requests.length, 6 + 6, 'the sixth Location is not requested');
    await rejectsWith(fetchPage(`http://chain.test:${chain.port}/r/1`, { ...opts, maxRedirects: 0 }), UrlPolicyError, 'url.too_many_redirects');
  });

  it('sends URL credentials to their own origin only, never across a redirect', async () => {
    const other = await pool.start(text('other'));
    const home = await pool.start((req, res) => {
      if (req.url === '/') redirectTo('/same')(req, res);
      else redirectTo(`http://site.test:${other.port}/`)(req, res);
    });
    const r = resolver({ 'site.test': ['127.0.0.1'] });
    const page = await fetchPage(`http://alice:s3cr%40t@site.test:${home.port}/`, { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW });
    assert.equal(page.text, 'other');
    const basic = `Basic ${Buffer.from('alice:s3cr@t').toString('base64')}`;
    assert.deepEqual(home.requests.map((q) => q.authorization), [basic, basic]);
    assert.deepEqual(other.requests.map((q) => q.authorization), [undefined]);
  });
});

describe('fetchPage: proxy settings never route around the pin', () => {
  const NAMES = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'no_proxy'];
  const saved = new Map<string, string | undefined>();
  const savedDispatcher = getGlobalDispatcher();
  afterEach(() => {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    setGlobalDispatcher(savedDispatcher);
  });

  it('ignores HTTP(S)_PROXY, ALL_PROXY, NO_PROXY and an env-proxy global dispatcher', async () => {
    // The recorder refuses both proxy styles (absolute-form GET and CONNECT tunnels) and counts them.
    const proxy = await pool.start(text('from the proxy'));
    let tunnels = 0;
    proxy.server.on('connect', (_req, socket) => {
      tunnels++;
      socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    });
    const site = await pool.start(text('direct'));
    for (const k of NAMES) saved.set(k, process.env[k]);
    for (const k of NAMES) process.env[k] = k.toLowerCase().startsWith('no_') ? '' : proxy.origin;
    const envAgent = new EnvHttpProxyAgent();
    setGlobalDispatcher(envAgent);
    try {
      // The recorder does catch a client that honours the variables:
      await assert.rejects(undiciRequest(`http://site.test:${site.port}/`));
      assert.ok(proxy.connections >= 1 && tunnels + proxy.requests.length >= 1, 'the env-proxy client went to the recorder');
      const seen = proxy.connections;

      const r = resolver({ 'site.test': ['127.0.0.1'] });
      const page = await fetchPage(`http://site.test:${site.port}/`, { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW });
      assert.equal(page.text, 'direct');
      assert.equal(site.requests.length, 1);
      assert.equal(site.requests[0]?.host, `site.test:${site.port}`);
      assert.equal(proxy.connections, seen, 'fetchPage opened no connection to the proxy');
    } finally {
      await envAgent.destroy();
    }
  });
});

describe('fetchPage: size and time bounds', () => {
  it('stops reading a 50 MiB body at maxBytes and closes the connection', async () => {
    let written = 0;
    let finished = false;
    const big = await pool.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(50 * MiB) });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const pump = (): void => {
        while (written < 50 * MiB) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        finished = true;
        res.end();
      };
      res.on('close', () => {});
      pump();
    });
    const r = resolver({ 'big.test': ['127.0.0.1'] });
    const page = await fetchPage(`http://big.test:${big.port}/`, { timeoutMs: 10_000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW });
    assert.equal(page.truncated, true);
    assert.equal(page.bytes, MiB);
    assert.equal(page.text.length, MiB);
    const deadline = Date.now() + 5000;
    while (big.closed < big.connections && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    assert.equal(big.closed, big.connections, 'the server saw its connection closed');
    assert.equal(finished, false, `the server could not send everything (wrote ${written} bytes)`);
    assert.ok(written < 50 * MiB);
  });

  it('bounds decoded bytes, so a compression bomb stops at maxBytes too', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * MiB, 'a'));
    const server = await pool.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    const r = resolver({ 'bomb.test': ['127.0.0.1'] });
    const page = await fetchPage(`http://bomb.test:${server.port}/`, { timeoutMs: 10_000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW });
    assert.ok(bomb.length < MiB, 'the bomb is small on the wire');
    assert.equal(page.truncated, true);
    assert.equal(page.bytes, MiB);
    assert.equal(page.text, 'a'.repeat(MiB));
  });

  it('does not call a body truncated when it ends exactly at maxBytes', async () => {
    const server = await pool.start(text('x'.repeat(1000), 'text/plain'));
    const r = resolver({ 'exact.test': ['127.0.0.1'] });
    const page = await fetchPage(`http://exact.test:${server.port}/`, { timeoutMs: 5000, maxBytes: 1000, lookup: r.lookup, allow: ALLOW });
    assert.equal(page.truncated, false);
    assert.equal(page.bytes, 1000);
  });

  it('aborts a body that trickles past the deadline and closes the connection', async () => {
    const timers = new Set<NodeJS.Timeout>();
    const slow = await pool.start((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const t = setInterval(() => res.write('.'), 50);
      timers.add(t);
      res.on('close', () => clearInterval(t));
    });
    const r = resolver({ 'slow.test': ['127.0.0.1'] });
    const started = Date.now();
    await rejectsWith(fetchPage(`http://slow.test:${slow.port}/`, { timeoutMs: 400, maxBytes: MiB, lookup: r.lookup, allow: ALLOW }), PageFetchError, 'fetch.timeout');
    const took = Date.now() - started;
    assert.ok(took >= 350 && took < 3000, `took ${took} ms`);
    const deadline = Date.now() + 5000;
    while (slow.closed < 1 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
    assert.equal(slow.closed, 1);
    for (const t of timers) clearInterval(t);
  });

  it('times out a server that never answers, and honours the caller’s signal', async () => {
    const silent = await pool.start(() => {});
    const r = resolver({ 'silent.test': ['127.0.0.1'] });
    await rejectsWith(fetchPage(`http://silent.test:${silent.port}/`, { timeoutMs: 300, maxBytes: MiB, lookup: r.lookup, allow: ALLOW }), PageFetchError, 'fetch.timeout');
    const ac = new AbortController();
    const p = fetchPage(`http://silent.test:${silent.port}/`, { timeoutMs: 10_000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW, signal: ac.signal });
    await once(silent.server, 'request');
    ac.abort();
    await rejectsWith(p, PageFetchError, 'fetch.aborted');
    // A lookup that never answers is bounded by the same deadline.
    const never = (): Promise<DnsAnswer[]> => new Promise(() => {});
    await rejectsWith(fetchPage('http://hang.test/', { timeoutMs: 200, maxBytes: MiB, lookup: never }), PageFetchError, 'fetch.timeout');
  });
});

describe('fetchPage: results and failures', () => {
  it('returns the status of an error page, decodes the charset, and keeps binary bodies out of text', async () => {
    const server = await pool.start((req, res) => {
      if (req.url === '/missing') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('gone');
      } else if (req.url === '/latin1') {
        res.writeHead(200, { 'content-type': 'text/plain; charset=ISO-8859-1' });
        res.end(Buffer.from([0x63, 0x61, 0x66, 0xe9]));
      } else {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      }
    });
    const r = resolver({ 'res.test': ['127.0.0.1'] });
    const opts = { timeoutMs: 5000, maxBytes: MiB, lookup: r.lookup, allow: ALLOW };
    const missing = await fetchPage(`http://res.test:${server.port}/missing`, opts);
    assert.deepEqual([missing.status, missing.text], [404, 'gone']);
    assert.equal((await fetchPage(`http://res.test:${server.port}/latin1`, opts)).text, 'café');
    const png = await fetchPage(`http://res.test:${server.port}/png`, opts);
    assert.deepEqual([png.text, png.bytes, png.contentType], ['', 4, 'image/png']);
  });

  it('refuses before connecting when DNS fails, and reports a refused connection as connect_failed', async () => {
    await rejectsWith(fetchPage('http://nx.test/', { timeoutMs: 2000, maxBytes: MiB, lookup: resolver({}).lookup }), UrlPolicyError, 'url.dns_failed');
    const gone = await pool.start(text('x'));
    const port = gone.port;
    await pool.closeAll();
    decoy = await pool.start(text('internal secret'), '127.0.0.2', decoyPort);
    await rejectsWith(
      fetchPage(`http://gone.test:${port}/`, { timeoutMs: 2000, maxBytes: MiB, lookup: resolver({ 'gone.test': ['127.0.0.1'] }).lookup, allow: ALLOW }),
      PageFetchError,
      'fetch.connect_failed',
    );
  });

  it('rejects bad options with the field named', async () => {
    await rejectsWith(fetchPage('http://example.com/', { timeoutMs: 0, maxBytes: 1 }), PageFetchError, 'fetch.options');
    await rejectsWith(fetchPage('http://example.com/', { timeoutMs: 10, maxBytes: 1.5 }), PageFetchError, 'fetch.options');
  });
});
