// The OpenAI-compatible provider against a fake chat-completions server on 127.0.0.1: streamed text
// and parallel tool calls through runTurn and a real EffectRuntime, the request bodies it sends
// (model views only), and each way a response can fail.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { NonInteractiveApprover } from '../../../src/policy/index.js';
import { createRemoteProvider, ProviderError, runTurn, type HistoryItem, type RemoteModelProvider, type TurnEvent } from '../../../src/turns/index.js';
import { SessionStore } from '../../../src/store/index.js';
import { runtimeSuite } from '../../effects/runtime-fixture.js';
import { FAST_RETRY, FakeModelServer, keyStore, oa, sse, status } from './fake-model-server.js';

const KEY = 'sk-test-4f1c9a0d2b7e6a5c3b1d';
const AGENT = 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\n';

describe('openai-compatible provider', () => {
  const suite = runtimeSuite();
  let server: FakeModelServer;
  const providers: RemoteModelProvider[] = [];
  const provider = async (options: Record<string, unknown> = {}): Promise<RemoteModelProvider> => {
    const p = await createRemoteProvider(
      { provider: 'openai-compatible', model: 'test-model', base_url: `${server.origin}/v1`, api_key: { secret: 'OPENAI_KEY' }, options: { timeout_seconds: 10, ...options } },
      { secrets: keyStore('OPENAI_KEY', KEY), retry: FAST_RETRY },
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

  test('a multi-turn tool loop: streamed text, two parallel calls run through the runtime, model views replayed', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    server.reply(
      sse([...oa.text('Let me ', 'look.'), ...oa.calls([{ id: 'call_a', name: 'terminal', args: '{"command":"echo one"}' }, { id: 'call_b', name: 'tools_list', args: '{}' }]), oa.finish('tool_calls'), oa.done]),
      sse([...oa.text('All ', 'done.'), oa.finish('stop'), oa.done]),
      sse([...oa.text('Second answer.'), oa.finish('stop'), oa.done]),
    );
    const p = await provider({ system: 'You are a test.' });
    const events: TurnEvent[] = [];
    const history: HistoryItem[] = [];
    const o = { runtime, provider: p, ...ctx, maxIterations: 4, history, onEvent: (e: TurnEvent) => events.push(e) };
    const r = await runTurn('do it', o);
    assert.deepEqual([r.outcome, r.finalText, r.effects.ok, r.iterations], ['completed', 'All done.', 2, 2]);
    const deltas = events.filter((e) => e.type === 'text_delta' && e.iteration === 1).map((e) => (e as { text: string }).text);
    assert.deepEqual(deltas, ['Let me ', 'look.'], 'text arrives piece by piece');
    const calls = events.filter((e) => e.type === 'tool_call') as Extract<TurnEvent, { type: 'tool_call' }>[];
    assert.deepEqual(calls.map((c) => [c.callId, c.name, c.arguments]), [['call_a', 'terminal', { command: 'echo one' }], ['call_b', 'tools_list', {}]]);
    const tool = history.find((h) => h.role === 'tool' && h.callId === 'call_a') as Extract<HistoryItem, { role: 'tool' }>;
    assert.ok(tool.ok && /one/.test(tool.content), 'the terminal really ran');

    const first = server.received.at(-2)!;
    assert.equal(first.path, '/v1/chat/completions');
    assert.equal(first.headers.authorization, `Bearer ${KEY}`);
    assert.equal(first.body.model, 'test-model');
    assert.equal(first.body.stream, true);
    assert.deepEqual(first.body.messages, [{ role: 'system', content: 'You are a test.' }, { role: 'user', content: 'do it' }]);
    const names = first.body.tools.map((t: any) => [t.type, t.function.name]);
    assert.deepEqual(names.sort(), [['function', 'terminal'], ['function', 'tools_list']]);
    assert.equal(first.body.tools.find((t: any) => t.function.name === 'terminal').function.parameters.type, 'object');

    const second = server.received.at(-1)!.body.messages;
    assert.deepEqual(second.map((m: any) => m.role), ['system', 'user', 'assistant', 'tool', 'tool']);
    assert.deepEqual(second[2], {
      role: 'assistant',
      content: 'Let me look.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'terminal', arguments: '{"command":"echo one"}' } },
        { id: 'call_b', type: 'function', function: { name: 'tools_list', arguments: '{}' } },
      ],
    });
    for (const m of second.slice(3)) assert.deepEqual(Object.keys(m).sort(), ['content', 'role', 'tool_call_id'], 'a tool message carries the model view only');
    assert.match(second[3].content, /one/);
    assert.ok(!server.received.at(-1)!.raw.includes(ctx.sessionId), 'no session id in what the model receives');
    assert.ok(!/"principal"|"views"|"operator"|"durable"/.test(server.received.at(-1)!.raw), 'no internal metadata in what the model receives');

    const again = await runTurn('and now?', o);
    assert.equal(again.finalText, 'Second answer.');
    const third = server.received.at(-1)!.body.messages;
    assert.deepEqual(third.map((m: any) => m.role), ['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'user'], 'the next user turn continues the conversation');
  });

  test('a tool name the model made up is refused by the turn engine and the model is told', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    server.reply(sse([...oa.calls([{ id: 'x1', name: 'rm_rf', args: '{}' }]), oa.finish('tool_calls'), oa.done]), sse([...oa.text('ok'), oa.finish('stop'), oa.done]));
    const events: TurnEvent[] = [];
    const r = await runTurn('go', { runtime, provider: await provider(), ...ctx, maxIterations: 3, onEvent: (e) => events.push(e) });
    assert.equal(r.outcome, 'completed');
    assert.ok(events.some((e) => e.type === 'unknown_tool' && e.name === 'rm_rf'));
    const told = server.received.at(-1)!.body.messages.find((m: any) => m.role === 'tool');
    assert.match(told.content, /UNKNOWN_TOOL/);
  });

  test('arguments that are not JSON reach the runtime as they are and are refused there, not by the provider', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    server.reply(sse([...oa.calls([{ id: 'b1', name: 'terminal', args: '{"command": "echo' }]), oa.finish('tool_calls'), oa.done]), sse([...oa.text('sorry'), oa.finish('stop'), oa.done]));
    const events: TurnEvent[] = [];
    const r = await runTurn('go', { runtime, provider: await provider(), ...ctx, maxIterations: 3, onEvent: (e) => events.push(e) });
    assert.equal(r.effects.failed, 1);
    const result = events.find((e) => e.type === 'tool_result') as Extract<TurnEvent, { type: 'tool_result' }>;
    assert.equal(result.outcome.ok, false);
    const replayed = server.received.at(-1)!.body.messages.find((m: any) => m.role === 'assistant');
    assert.equal(replayed.tool_calls[0].function.arguments, '{"command": "echo', 'replayed as the model sent it');
  });

  test('arguments nested 600 deep (a 1.2 KB reply) are refused as a tool error and the history is stored; the run goes on', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    const sessions = new SessionStore(suite.db());
    const deep = `{"command": ${'['.repeat(600)}${']'.repeat(600)}}`;
    server.reply(sse([...oa.calls([{ id: 'd1', name: 'terminal', args: deep }]), oa.finish('tool_calls'), oa.done]), sse([...oa.text('understood'), oa.finish('stop'), oa.done]));
    const events: TurnEvent[] = [];
    const r = await runTurn('go', {
      runtime,
      provider: await provider(),
      ...ctx,
      maxIterations: 3,
      onEvent: (e) => events.push(e),
      // What the local runtime does: every history item into the store (it refused the whole message before).
      onHistory: (item) => sessions.addMessageDeferred({ principal: ctx.principal }, ctx.sessionId, { role: item.role, content: item }),
    });
    assert.equal(r.outcome, 'completed');
    assert.equal(r.finalText, 'understood');
    const result = events.find((e) => e.type === 'tool_result') as Extract<TurnEvent, { type: 'tool_result' }>;
    assert.deepEqual([result.outcome.ok, !result.outcome.ok && result.outcome.code], [false, 'ARGS_INVALID']);
    const stored = sessions.listMessages({ principal: ctx.principal }, ctx.sessionId).map((m) => m.role);
    assert.deepEqual(stored, ['user', 'assistant', 'tool', 'assistant']);
  });

  test('401: a typed auth error naming provider, host and secret, never the key, even when the server echoes it', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    server.reply(status(401, { error: { message: `Incorrect API key provided: ${KEY}`, code: 'invalid_api_key' } }));
    const events: TurnEvent[] = [];
    const history: HistoryItem[] = [];
    const before = server.received.length;
    const err = await runTurn('hi', { runtime, provider: await provider(), ...ctx, maxIterations: 2, history, onEvent: (e) => events.push(e) }).then(
      () => assert.fail('expected an auth error'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ProviderError);
    assert.equal(err.code, 'provider.auth');
    assert.equal(err.status, 401);
    assert.equal(server.received.length - before, 1, 'an auth failure is not retried');
    assert.match(err.message, new RegExp(`openai-compatible at ${server.host}: 401 Unauthorized: the key from secret OPENAI_KEY \\(environment variable OPENAI_KEY_SOURCE\\) was refused`));
    for (const view of [err.message, JSON.stringify(err), String(err.stack), JSON.stringify(events), JSON.stringify(history)]) {
      assert.ok(!view.includes(KEY) && !view.includes(KEY.slice(3)), 'the key appears nowhere');
    }
  });

  test('other refusals: 400 names the server message (redacted), a context overflow and a length stop have their own codes', async () => {
    const p = await provider();
    server.reply(status(400, { error: { message: `model "nope" does not exist; your key ${KEY}` } }));
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), (e: ProviderError) => {
      assert.equal(e.code, 'provider.request');
      assert.match(e.message, /400: model "nope" does not exist/);
      assert.ok(!e.message.includes(KEY), 'a key the server echoes is redacted');
      return true;
    });
    server.reply(status(400, { error: { message: "This model's maximum context length is 8192 tokens", code: 'context_length_exceeded' } }));
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), { code: 'provider.context_exceeded' });
    server.reply(sse([...oa.text('half an ans'), oa.finish('length'), oa.done]));
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), (e: ProviderError) => e.code === 'provider.truncated' && /max_tokens/.test(e.message));
  });

  test('a stream cut mid-way, one that just stops, and one that is not JSON each fail with their own code', async () => {
    const p = await provider();
    server.reply(sse([...oa.text('a', 'b', 'c'), oa.finish('stop'), oa.done], { cutAfter: 2, delayMs: 30 }));
    const seen: string[] = [];
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], [], undefined, { onText: (t) => seen.push(t) }), (e: ProviderError) => {
      assert.equal(e.code, 'provider.stream_cut');
      assert.match(e.message, /connection broke/);
      return true;
    });
    assert.deepEqual(seen, ['a', 'b'], 'what arrived before the cut was shown');
    server.reply(sse([...oa.text('a')]));
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), (e: ProviderError) => e.code === 'provider.stream_cut' && /no finish_reason/.test(e.message));
    server.reply(sse([{ data: '{"choices": [' }]));
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), { code: 'provider.bad_stream' });
    server.reply(sse([{ data: { error: { message: 'upstream overloaded' } } }]));
    await assert.rejects(p.next([{ role: 'user', content: 'x' }], []), (e: ProviderError) => e.code === 'provider.stream_error' && /upstream overloaded/.test(e.message));
  });

  test('cancelling the turn mid-stream aborts the request: the server sees the connection close, the turn is cancelled', async () => {
    const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': AGENT }, approver: new NonInteractiveApprover(), principal: 'p' });
    server.reply(sse([...oa.text('thinking', 'more'), oa.finish('stop'), oa.done], { hangAfter: 1 }));
    const ac = new AbortController();
    const r = await runTurn('go', {
      runtime,
      provider: await provider(),
      ...ctx,
      maxIterations: 2,
      signal: ac.signal,
      onEvent: (e) => {
        if (e.type === 'text_delta') ac.abort();
      },
    });
    assert.equal(r.outcome, 'cancelled');
    await server.aborted;
  });

  test('stream: false asks for one JSON answer and maps its tool calls', async () => {
    server.reply(status(200, { choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'j1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } }] } }] }));
    const turn = await (await provider({ stream: false })).next([{ role: 'user', content: 'x' }], []);
    assert.equal(server.received.at(-1)!.body.stream, false);
    assert.deepEqual(turn, { text: null, toolCalls: [{ id: 'j1', name: 'terminal', arguments: { command: 'ls' } }] });
  });
  test('usage: a streamed turn asks for the usage chunk (stream_options.include_usage) and reports its tokens; a whole answer\'s too', async () => {
    server.reply(
      sse([...oa.text('hi'), oa.finish('stop'), { data: { choices: [], usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280 } } }, oa.done]),
      status(200, { choices: [{ index: 0, message: { role: 'assistant', content: 'whole' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
    );
    const streamed = await (await provider()).next([{ role: 'user', content: 'x' }], []);
    assert.deepEqual(server.received.at(-1)!.body.stream_options, { include_usage: true });
    assert.deepEqual(streamed.usage, { inputTokens: 1200, outputTokens: 80 });
    const whole = await (await provider({ stream: false })).next([{ role: 'user', content: 'x' }], []);
    assert.equal(server.received.at(-1)!.body.stream_options, undefined, 'no stream, no stream_options');
    assert.deepEqual(whole.usage, { inputTokens: 5, outputTokens: 2 });
  });
});
