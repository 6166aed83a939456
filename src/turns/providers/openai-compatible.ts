// The OpenAI chat-completions API, as OpenAI and local servers (llama.cpp, vLLM, Ollama's /v1)
// speak it: our history and tool definitions in its format, its stream (or one JSON answer) back
// into a ModelTurn. Tool-call arguments arrive as text pieces keyed by index; several calls may
// stream side by side.
import type { HistoryItem, ModelProvider, ModelStream, ModelToolCall, ModelTurn, ModelUsage, ToolDefinition } from '../model-provider.js';
import { ProviderError } from './errors.js';
import { readJsonBody, streamEvents, type ProviderContext } from './provider-context.js';
import { fallbackCallId, parseToolArguments } from './tool-args.js';
import type { ProviderSettings } from './settings.js';
import type { ResponseData } from './transport.js';

type Json = Record<string, unknown>;

/** The request body's messages: model views only, in the API's shapes. */
export function openAIMessages(history: readonly HistoryItem[], system?: string): Json[] {
  const out: Json[] = system ? [{ role: 'system', content: system }] : [];
  for (const h of history) {
    if (h.role === 'user') out.push({ role: 'user', content: h.content });
    else if (h.role === 'tool') out.push({ role: 'tool', tool_call_id: h.callId, content: h.content });
    else {
      const m: Json = { role: 'assistant', content: h.content };
      if (h.toolCalls.length > 0) {
        m.tool_calls = h.toolCalls.map((c) => ({
          id: c.id,
          type: 'function',
          // A model's unparseable arguments go back as it sent them.
          function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}) },
        }));
      }
      out.push(m);
    }
  }
  return out;
}

export function openAITools(tools: readonly ToolDefinition[]): Json[] {
  return tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } }));
}

export class OpenAICompatibleProvider implements ModelProvider {
  readonly name = 'openai-compatible';

  constructor(private readonly ctx: ProviderContext) {}

  get settings(): ProviderSettings {
    return this.ctx.settings;
  }

  async next(history: readonly HistoryItem[], tools: readonly ToolDefinition[], signal?: AbortSignal, stream?: ModelStream): Promise<ModelTurn> {
    const { settings } = this.ctx;
    const o = settings.options;
    const body: Json = {
      model: settings.model,
      messages: openAIMessages(history, o.system),
      stream: o.stream,
      // The usage chunk at the end of a stream: what the supervisor meters limits.max_cost_usd from.
      ...(o.stream ? { stream_options: { include_usage: true } } : {}),
      ...(tools.length > 0 ? { tools: openAITools(tools) } : {}),
      ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      ...(o.top_p !== undefined ? { top_p: o.top_p } : {}),
      ...(o.max_tokens !== undefined ? { max_tokens: o.max_tokens } : {}),
    };
    return this.ctx.transport.post(body, signal, (res, attempts) => this.read(res, attempts, stream));
  }

  async close(): Promise<void> {
    await this.ctx.transport.close();
  }

  private async read(res: ResponseData, attempts: number, stream: ModelStream | undefined): Promise<ModelTurn> {
    const fail = (code: ProviderError['code'], detail: string): ProviderError => this.ctx.transport.error(code, detail, res.statusCode, attempts);
    const ct = String(res.headers['content-type'] ?? '');
    if (!ct.includes('text/event-stream')) return this.fromMessage(await readJsonBody(res, fail), fail);
    const acc = new Accumulator();
    let done = false;
    for await (const ev of streamEvents(res, fail)) {
      if (ev.data.trim() === '[DONE]') {
        done = true;
        break;
      }
      const chunk = parseChunk(ev.data, fail);
      if (chunk.error !== undefined) throw fail('provider.stream_error', `the stream reported an error: ${this.ctx.transport.serverMessage(JSON.stringify(chunk))}`);
      acc.addUsage(chunk.usage);
      const choices = Array.isArray(chunk.choices) ? (chunk.choices as Json[]) : [];
      const choice = choices[0];
      if (!choice) continue; // a usage-only chunk
      const delta = (choice.delta ?? {}) as Json;
      if (typeof delta.content === 'string' && delta.content.length > 0) {
        acc.text += delta.content;
        stream?.onText?.(delta.content);
      }
      if (Array.isArray(delta.tool_calls)) for (const tc of delta.tool_calls as Json[]) acc.addCallDelta(tc, fail);
      if (typeof choice.finish_reason === 'string') acc.finish = choice.finish_reason;
    }
    if (!done && acc.finish === null) throw fail('provider.stream_cut', 'the stream ended before the model finished its turn (no finish_reason, no [DONE]); run the turn again');
    return this.finish(acc, fail);
  }

  /** A whole chat.completion object, for `stream: false` or a server that ignores `stream`. */
  private fromMessage(j: Json, fail: (code: ProviderError['code'], detail: string) => ProviderError): ModelTurn {
    if (j.error !== undefined) throw fail('provider.stream_error', `the response reported an error: ${this.ctx.transport.serverMessage(JSON.stringify(j))}`);
    const choice = Array.isArray(j.choices) ? (j.choices[0] as Json | undefined) : undefined;
    const message = choice?.message as Json | undefined;
    if (!choice || !message) throw fail('provider.bad_stream', 'the response has no choices[0].message; is model.base_url an OpenAI-compatible endpoint?');
    const acc = new Accumulator();
    acc.text = typeof message.content === 'string' ? message.content : '';
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : [];
    calls.forEach((c, i) => acc.addCallDelta({ ...c, index: i }, fail));
    acc.finish = typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop';
    acc.addUsage(j.usage);
    return this.finish(acc, fail);
  }

  private finish(acc: Accumulator, fail: (code: ProviderError['code'], detail: string) => ProviderError): ModelTurn {
    if (acc.finish === 'length') {
      throw fail('provider.truncated', `the model stopped at its output token limit, so its ${acc.calls.size > 0 ? 'tool call' : 'answer'} is incomplete; raise model.options.max_tokens`);
    }
    const toolCalls: ModelToolCall[] = [...acc.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => ({ id: c.id || fallbackCallId(), name: c.name, arguments: parseToolArguments(c.args) }));
    return { text: acc.text === '' ? null : acc.text, toolCalls, ...(acc.usage ? { usage: acc.usage } : {}) };
  }
}

class Accumulator {
  text = '';
  finish: string | null = null;
  usage: ModelUsage | null = null;

  /** `usage` of a chunk or a whole response (prompt_tokens, completion_tokens); the last one wins. */
  addUsage(raw: unknown): void {
    if (raw === null || typeof raw !== 'object') return;
    const u = raw as Json;
    const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
    this.usage = { inputTokens: n(u.prompt_tokens), outputTokens: n(u.completion_tokens) };
  }
  readonly calls = new Map<number, { id: string; name: string; args: string }>();

  /** One tool-call piece: the first carries id and name, later ones more argument text. */
  addCallDelta(tc: Json, fail: (code: ProviderError['code'], detail: string) => ProviderError): void {
    const fn = (tc.function ?? {}) as Json;
    let index = typeof tc.index === 'number' ? tc.index : -1;
    if (index < 0) {
      // Servers that send each call whole, without an index: a new id is a new call.
      const byId = [...this.calls.entries()].find(([, c]) => typeof tc.id === 'string' && c.id === tc.id);
      index = byId ? byId[0] : this.calls.size;
    }
    if (!Number.isInteger(index) || index > 1024) throw fail('provider.bad_stream', `a tool call has an unusable index ${JSON.stringify(tc.index)}`);
    let c = this.calls.get(index);
    if (!c) this.calls.set(index, (c = { id: '', name: '', args: '' }));
    if (typeof tc.id === 'string' && tc.id !== '') c.id = tc.id;
    if (typeof fn.name === 'string' && fn.name !== '' && fn.name !== c.name) c.name += fn.name;
    if (typeof fn.arguments === 'string') c.args += fn.arguments;
    else if (fn.arguments !== undefined && fn.arguments !== null) c.args = JSON.stringify(fn.arguments);
  }
}

function parseChunk(data: string, fail: (code: ProviderError['code'], detail: string) => ProviderError): Json {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    throw fail('provider.bad_stream', `a stream event is not JSON (${data.length} bytes); is model.base_url an OpenAI-compatible endpoint?`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail('provider.bad_stream', 'a stream event is not a JSON object');
  return v as Json;
}
