// The Anthropic provider against a fake messages server on 127.0.0.1: streamed text and parallel
// tool_use blocks through runTurn and a real EffectRuntime, the request bodies it sends (model
// views only, tool results as blocks of one user message), and its failures.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NonInteractiveApprover } from '../../../src/policy/index.js';
import { anthropicMessages, createRemoteProvider, ProviderError, runTurn, type RemoteModelProvider, type TurnEvent } from '../../../src/turns/index.js';
import { runtimeSuite } from '../../effects/runtime-fixture.js';
import { an, FAST_RETRY, FakeModelServer, keyStore, sse, status } from './fake-model-server.js';

const KEY = 'sk-ant-test-0a1b2c3d4e5f6a7b';
const AGENT = 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\n';

describe('anthropic provider', () => {
  const suite = runtimeSuite();
  let server: FakeModelServer;
  const providers: RemoteModelProvider[] = [];
  const provider = async (options: Record<string, unknown> = {}): Promise<RemoteModelProvider> => {
    const p = await createRemoteProvider(
      { provider: 'anthropic', model: 'claude-test', base_url: server.origin, api_key: { secret: 'ANTHROPIC_KEY' }, options: { timeout_seconds: 10, ...options } },
      { secrets: keyStore('ANTHROPIC_KEY', KEY), retry: FAST_RETRY },
    );
    providers.push(p);
    return p;
  };
  before(async () => {
    server = await FakeModelServer.start();
  });
  beforeEach(() => server.clear());
  after(async () => {
    for (const p of providers) await p.close();
    await server.close();
  });

  test('a multi-turn tool loop: streamed text, two tool_use blocks run, results replayed as one user message', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    server.reply(
      sse([
        an.start,
        an.ping,
        ...an.text(0, 'Checking ', 'two things.'),
        ...an.toolUse(1, 'toolu_1', 'terminal', '{"command": "echo alpha"}'),
        ...an.toolUse(2, 'toolu_2', 'terminal', '{"command": "touch nope"}'),
        ...an.stop('tool_use'),
      ]),
      sse([an.start, ...an.text(0, 'Done.'), ...an.stop('end_turn')]),
    );
    const events: TurnEvent[] = [];
    const r = await runTurn('check', { runtime, provider: await provider({ system: 'Be brief.', max_tokens: 512 }), ...ctx, maxIterations: 3, onEvent: (e) => events.push(e) });
    assert.deepEqual([r.outcome, r.finalText, r.effects.ok, r.effects.failed], ['completed', 'Done.', 1, 1]);
    assert.deepEqual(events.filter((e) => e.type === 'text_delta' && e.iteration === 1).map((e) => (e as { text: string }).text), ['Checking ', 'two things.']);

    const first = server.received.at(-2)!;
    assert.equal(first.path, '/v1/messages');
    assert.equal(first.headers['x-api-key'], KEY);
    assert.equal(first.headers['anthropic-version'], '2023-06-01');
    assert.equal(first.headers.authorization, undefined);
    assert.deepEqual([first.body.model, first.body.max_tokens, first.body.system, first.body.stream], ['claude-test', 512, 'Be brief.', true]);
    assert.deepEqual(first.body.messages, [{ role: 'user', content: [{ type: 'text', text: 'check' }] }]);
    assert.ok(first.body.tools.some((t: any) => t.name === 'terminal' && t.input_schema.type === 'object'));

    const msgs = server.received.at(-1)!.body.messages;
    assert.deepEqual(msgs.map((m: any) => m.role), ['user', 'assistant', 'user']);
    assert.deepEqual(msgs[1].content, [
      { type: 'text', text: 'Checking two things.' },
      { type: 'tool_use', id: 'toolu_1', name: 'terminal', input: { command: 'echo alpha' } },
      { type: 'tool_use', id: 'toolu_2', name: 'terminal', input: { command: 'touch nope' } },
    ]);
    const [okResult, refused] = msgs[2].content;
    assert.deepEqual(Object.keys(okResult).sort(), ['content', 'tool_use_id', 'type'], 'model view only');
    assert.equal(okResult.tool_use_id, 'toolu_1');
    assert.match(okResult.content, /alpha/);
    assert.deepEqual([refused.tool_use_id, refused.is_error], ['toolu_2', true], 'a refused call is an error result');
    assert.ok(!server.received.at(-1)!.raw.includes(ctx.sessionId));
  });

  test('history mapping: a later user message joins the tool results before it; empty assistant turns are left out', () => {
    const msgs = anthropicMessages([
      { role: 'user', content: 'a' },
      { role: 'assistant', content: null, toolCalls: [{ id: 't1', name: 'x', arguments: 'not json' }] },
      { role: 'tool', callId: 't1', name: 'x', ok: false, content: 'INVALID' },
      { role: 'user', content: 'b' },
      { role: 'assistant', content: null, toolCalls: [] },
      { role: 'user', content: 'c' },
    ]);
    assert.deepEqual(msgs, [
      { role: 'user', content: [{ type: 'text', text: 'a' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'x', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'INVALID', is_error: true }, { type: 'text', text: 'b' }, { type: 'text', text: 'c' }] },
    ]);
  });

  test('401 and 403: provider.auth naming the secret, without the key or the server body', async () => {
    const p = await provider();
    for (const code of [401, 403]) {
      server.reply(status(code, { type: 'error', error: { type: 'authentication_error', message: `invalid x-api-key ${KEY}` } }));
      await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), (e: ProviderError) => {
        assert.equal(e.code, 'provider.auth');
        assert.match(e.message, new RegExp(`anthropic at ${server.host}: ${code} .*secret ANTHROPIC_KEY`));
        assert.ok(!e.message.includes(KEY) && !e.message.includes('invalid x-api-key'));
        return true;
      });
    }
  });

  test('an error event mid-stream, a stream without message_stop, a max_tokens stop and a context overflow', async () => {
    const p = await provider();
    const ask = () => p.next([{ role: 'user', content: 'x' }], []);
    server.reply(sse([an.start, ...an.text(0, 'par'), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }]));
    await assert.rejects(ask(), (e: ProviderError) => e.code === 'provider.stream_error' && /overloaded_error/.test(e.message));
    server.reply(sse([an.start, ...an.text(0, 'par')]));
    await assert.rejects(ask(), (e: ProviderError) => e.code === 'provider.stream_cut' && /message_stop/.test(e.message));
    server.reply(sse([an.start, ...an.toolUse(0, 'toolu_x', 'terminal', '{"comm'), ...an.stop('max_tokens')]));
    await assert.rejects(ask(), (e: ProviderError) => e.code === 'provider.truncated' && /tool call is incomplete/.test(e.message));
    server.reply(status(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' } }));
    await assert.rejects(ask(), { code: 'provider.context_exceeded' });
    server.reply(sse([{ event: 'content_block_delta', data: { type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'x' } } }]));
    await assert.rejects(ask(), { code: 'provider.bad_stream' });
  });

  test('cancel mid-stream aborts the request', async () => {
    server.reply(sse([an.start, ...an.text(0, 'a', 'b'), ...an.stop('end_turn')], { hangAfter: 3 }));
    const ac = new AbortController();
    await assert.rejects((await provider()).next([{ role: 'user', content: 'x' }], [], ac.signal, { onText: () => ac.abort() }), { code: 'provider.cancelled' });
    await server.aborted;
  });

  test('a 529 (overloaded) is retried, then the stream answers', async () => {
    const from = server.received.length;
    server.reply(status(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }), sse([an.start, ...an.text(0, 'ok'), ...an.stop('end_turn')]));
    assert.equal((await (await provider()).next([{ role: 'user', content: 'x' }], [])).text, 'ok');
    assert.equal(server.received.length - from, 2);
  });
  test('usage: message_start\'s input (cache writes and reads included) and message_delta\'s running output total; a whole message\'s too', async () => {
    const start = { event: 'message_start', data: { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, usage: { input_tokens: 1000, cache_creation_input_tokens: 200, cache_read_input_tokens: 300, output_tokens: 1 } } } };
    const delta = (n: number) => ({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: null }, usage: { output_tokens: n } } });
    server.reply(
      sse([start, ...an.text(0, 'hi'), delta(40), delta(90), { event: 'message_stop', data: { type: 'message_stop' } }]),
      status(200, { type: 'message', role: 'assistant', content: [{ type: 'text', text: 'whole' }], stop_reason: 'end_turn', usage: { input_tokens: 7, output_tokens: 3 } }),
      sse([an.start, ...an.text(0, 'x'), ...an.stop('end_turn')].map((e) => (e.event === 'message_start' ? { ...e, data: { type: 'message_start', message: { id: 'm', content: [] } } } : e.event === 'message_delta' ? { ...e, data: { type: 'message_delta', delta: { stop_reason: 'end_turn' } } } : e))),
    );
    const p = await provider();
    assert.deepEqual((await p.next([{ role: 'user', content: 'x' }], [])).usage, { inputTokens: 1500, outputTokens: 90 });
    assert.deepEqual((await p.next([{ role: 'user', content: 'x' }], [])).usage, { inputTokens: 7, outputTokens: 3 });
    assert.equal((await p.next([{ role: 'user', content: 'x' }], [])).usage, undefined, 'no usage reported: none made up');
  });
});
