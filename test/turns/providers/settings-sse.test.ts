// The model section's checks before any request (options, endpoint, where the key may travel, what
// the key may be) and the event-stream reader's framing and bounds.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRemoteProvider, ProviderError, providerSettings, readSse, SseFormatError, type SseEvent } from '../../../src/turns/index.js';
import { keyStore } from './fake-model-server.js';

const oai = (o: Record<string, unknown>) => ({ provider: 'openai-compatible' as const, model: 'm', options: {}, ...o });

describe('model settings', () => {
  test('endpoints follow each SDK\'s base URL: OpenAI\'s includes /v1, Anthropic\'s does not; a query is kept', () => {
    assert.equal(providerSettings(oai({})).endpoint.href, 'https://api.openai.com/v1/chat/completions');
    assert.equal(providerSettings(oai({ base_url: 'http://127.0.0.1:8080/v1/' })).endpoint.href, 'http://127.0.0.1:8080/v1/chat/completions');
    assert.equal(providerSettings(oai({ base_url: 'https://gw.example.com/openai/v1?api-version=2' })).endpoint.href, 'https://gw.example.com/openai/v1/chat/completions?api-version=2');
    assert.equal(providerSettings({ provider: 'anthropic', model: 'm', options: {} }).endpoint.href, 'https://api.anthropic.com/v1/messages');
    const s = providerSettings(oai({ options: {} }));
    assert.deepEqual([s.options.max_attempts, s.options.timeout_seconds, s.options.stream], [4, 120, true]);
  });

  test('an unknown or out-of-range option names its field and the options there are', () => {
    assert.throws(() => providerSettings(oai({ options: { temprature: 1 } })), (e: ProviderError) => e.code === 'provider.config' && /model\.options: Unrecognized key\(s\) in object: 'temprature'/.test(e.message) && /temperature/.test(e.message));
    assert.throws(() => providerSettings(oai({ options: { max_attempts: 50 } })), (e: ProviderError) => /agent\.yaml model\.options\.max_attempts/.test(e.message));
  });

  test('a key is never sent over plain http to another machine; loopback and keyless http are fine', () => {
    const key = { api_key: { secret: 'K' } };
    assert.throws(() => providerSettings(oai({ base_url: 'http://10.0.0.5:8000/v1', ...key })), (e: ProviderError) => e.code === 'provider.config' && /clear text/.test(e.message));
    for (const url of ['http://127.0.0.1:8000/v1', 'http://localhost:11434/v1', 'http://[::1]:8000/v1', 'http://127.1:8000/v1']) {
      assert.doesNotThrow(() => providerSettings(oai({ base_url: url, ...key })), url);
    }
    assert.doesNotThrow(() => providerSettings(oai({ base_url: 'http://10.0.0.5:8000/v1' })));
  });

  test('the key is read before the session: undeclared, empty, or not header-safe, each refused without its value', async () => {
    await assert.rejects(createRemoteProvider(oai({ api_key: { secret: 'MISSING' } }), { secrets: keyStore('OTHER', 'v') }), (e: ProviderError) => e.code === 'provider.config' && /secret MISSING is not declared/.test(e.message));
    await assert.rejects(createRemoteProvider(oai({ api_key: { secret: 'K' } }), { secrets: keyStore('K', '') }), (e: ProviderError) => e.code === 'provider.config' && /model\.api_key/.test(e.message));
    const bad = 'sk-abc\r\nX-Injected: 1';
    await assert.rejects(createRemoteProvider(oai({ api_key: { secret: 'K' } }), { secrets: keyStore('K', bad) }), (e: ProviderError) => {
      assert.equal(e.code, 'provider.config');
      assert.match(e.message, /secret K contains spaces, control or non-ASCII/);
      assert.ok(!e.message.includes('sk-abc') && !e.message.includes('Injected'));
      return true;
    });
  });
});

async function collect(chunks: (string | Buffer)[], limits?: { maxEventBytes: number; maxStreamBytes: number }): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  async function* body() {
    for (const c of chunks) yield typeof c === 'string' ? Buffer.from(c) : c;
  }
  for await (const e of readSse(body(), limits)) out.push(e);
  return out;
}

describe('readSse', () => {
  test('CRLF split across chunks, comments, named events, multi-line data and a split UTF-8 character', async () => {
    const euro = Buffer.from('€');
    const events = await collect([': keep-alive\r', '\nevent: a\r\ndata: 1\r', '\ndata: 2\r\n\r\n', 'data:x', Buffer.concat([Buffer.from('\ndata: '), euro.subarray(0, 1)]), Buffer.concat([euro.subarray(1), Buffer.from('\n\n')])]);
    assert.deepEqual(events, [
      { event: 'a', data: '1\n2' },
      { event: 'message', data: 'x\n€' },
    ]);
  });

  test('an event still open at the end is dropped, as the format says', async () => {
    assert.deepEqual(await collect(['data: whole\n\n', 'data: half']), [{ event: 'message', data: 'whole' }]);
  });

  test('an oversized event or stream is refused', async () => {
    await assert.rejects(collect(['data: ' + 'x'.repeat(100) + '\n\n'], { maxEventBytes: 50, maxStreamBytes: 1000 }), SseFormatError);
    await assert.rejects(collect(['data: ' + 'x'.repeat(100)], { maxEventBytes: 50, maxStreamBytes: 1000 }), SseFormatError);
    await assert.rejects(collect(['data: a\n\n'.repeat(200)], { maxEventBytes: 50, maxStreamBytes: 1000 }), SseFormatError);
  });
});
