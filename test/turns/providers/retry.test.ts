// Retries of the provider transport against a fake server: 429 with Retry-After and 503 are tried
// again and then succeed; a connection reset is tried again; the limit gives a typed error; a
// Retry-After longer than the supervisor waits fails at once; cancel stops a wait between tries.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { createRemoteProvider, ProviderError, retryAfterMs, type RemoteModelProvider } from '../../../src/turns/index.js';
import { FAST_RETRY, FakeModelServer, keyStore, oa, reset, sse, status } from './fake-model-server.js';

const KEY = 'sk-retry-9e8d7c6b5a4f3e2d1c';
const ok = () => sse([...oa.text('fine'), oa.finish('stop'), oa.done]);

describe('provider retries', () => {
  let server: FakeModelServer;
  const providers: RemoteModelProvider[] = [];
  const provider = async (options: Record<string, unknown> = {}): Promise<RemoteModelProvider> => {
    const p = await createRemoteProvider(
      { provider: 'openai-compatible', model: 'm', base_url: `${server.origin}/v1`, api_key: { secret: 'OPENAI_KEY' }, options: { timeout_seconds: 10, ...options } },
      { secrets: keyStore('OPENAI_KEY', KEY), retry: FAST_RETRY },
    );
    providers.push(p);
    return p;
  };
  const ask = (p: RemoteModelProvider, signal?: AbortSignal) => p.next([{ role: 'user', content: 'x' }], [], signal);
  before(async () => {
    server = await FakeModelServer.start();
  });
  beforeEach(() => server.clear());
  after(async () => {
    for (const p of providers) await p.close();
    await server.close();
  });

  test('429 with Retry-After: 1 waits that second; a 503 after it is retried too; then the answer', async () => {
    const from = server.received.length;
    server.reply(status(429, { error: { message: 'slow down' } }, { 'retry-after': '1' }), status(503, 'busy'), ok());
    const turn = await ask(await provider());
    assert.equal(turn.text, 'fine');
    const got = server.received.slice(from);
    assert.equal(got.length, 3);
    assert.ok(got[1]!.at - got[0]!.at >= 950, `Retry-After honoured: waited ${got[1]!.at - got[0]!.at} ms`);
    assert.ok(got.every((r) => r.raw === got[0]!.raw), 'each attempt sends the same request');
  });

  test('a connection reset before any response is retried', async () => {
    const from = server.received.length;
    server.reply(reset, ok());
    assert.equal((await ask(await provider())).text, 'fine');
    assert.equal(server.received.length - from, 2);
  });

  test('after max_attempts the turn fails with provider.unavailable naming the attempts and the last status', async () => {
    const from = server.received.length;
    server.reply(status(503, { error: { message: 'overloaded' } }), status(502, 'bad gateway'), status(500, { error: { message: `boom ${KEY}` } }), ok());
    await assert.rejects(ask(await provider({ max_attempts: 3 })), (e: ProviderError) => {
      assert.equal(e.code, 'provider.unavailable');
      assert.equal(e.attempts, 3);
      assert.equal(e.status, 500);
      assert.match(e.message, /still failing after 3 attempt\(s\); the last: 500 \(boom/);
      assert.ok(!e.message.includes(KEY));
      return true;
    });
    assert.equal(server.received.length - from, 3, 'no fourth request');
  });

  test('a Retry-After longer than the supervisor waits fails at once and says how long was asked', async () => {
    const from = server.received.length;
    server.reply(status(429, 'later', { 'retry-after': '3600' }));
    await assert.rejects(ask(await provider()), (e: ProviderError) => e.code === 'provider.unavailable' && /asks to wait 3600 s/.test(e.message));
    assert.equal(server.received.length - from, 1);
  });

  test('cancel during the wait between attempts ends it at once as provider.cancelled', async () => {
    server.reply(status(429, 'later', { 'retry-after': '4' }), ok());
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(), 100);
    await assert.rejects(ask(await provider(), ac.signal), { code: 'provider.cancelled' });
    assert.ok(Date.now() - t0 < 3000, 'did not wait out the Retry-After');
  });

  test('nothing listening: connection refused is retried, then named', async () => {
    // A port that was just free: bound, then closed.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const p = await createRemoteProvider(
      { provider: 'anthropic', model: 'm', base_url: `http://127.0.0.1:${port}`, options: { max_attempts: 2 } },
      { secrets: keyStore('UNUSED', 'x'), retry: FAST_RETRY },
    );
    providers.push(p);
    await assert.rejects(ask(p), (e: ProviderError) => e.code === 'provider.unavailable' && e.attempts === 2 && /connection refused \(is the server running\?\)/.test(e.message));
  });

  test('Retry-After is read as seconds, as an HTTP date, and as retry-after-ms', () => {
    const now = Date.parse('2030-01-01T00:00:00Z');
    assert.equal(retryAfterMs({ 'retry-after': '2' }, now), 2000);
    assert.equal(retryAfterMs({ 'retry-after': 'Tue, 01 Jan 2030 00:00:05 GMT' }, now), 5000);
    assert.equal(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now), 250);
    assert.equal(retryAfterMs({ 'retry-after': 'soon' }, now), null);
    assert.equal(retryAfterMs({}, now), null);
  });
});
