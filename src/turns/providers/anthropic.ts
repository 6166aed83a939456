// Anthropic's messages API: our history as alternating user/assistant messages (tool results are
// blocks of a user message), its event stream (or one JSON message) back into a ModelTurn. Each
// content block streams under its own index, so parallel tool_use blocks assemble side by side.
import type { HistoryItem, ModelProvider, ModelStream, ModelToolCall, ModelTurn, ToolDefinition } from '../model-provider.js';
import type { ProviderError } from './errors.js';
import { readJsonBody, streamEvents, type ProviderContext } from './provider-context.js';
import { boundToolArguments, fallbackCallId, isPlainObject, parseToolArguments } from './tool-args.js';
import type { ProviderSettings } from './settings.js';
import type { ResponseData } from './transport.js';

type Json = Record<string, unknown>;
type Fail = (code: ProviderError['code'], detail: string) => ProviderError;

export const ANTHROPIC_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;

/** The request body's messages: model views only. Consecutive user-side items merge into one message. */
export function anthropicMessages(history: readonly HistoryItem[]): Json[] {
  const out: { role: 'user' | 'assistant'; content: Json[] }[] = [];
  const user = (block: Json): void => {
    const last = out.at(-1);
    if (last?.role === 'user') last.content.push(block);
    else out.push({ role: 'user', content: [block] });
  };
  for (const h of history) {
    if (h.role === 'user') user({ type: 'text', text: h.content });
    else if (h.role === 'tool') user({ type: 'tool_result', tool_use_id: h.callId, content: h.content, ...(h.ok ? {} : { is_error: true }) });
    else {
      const content: Json[] = [];
      if (h.content) content.push({ type: 'text', text: h.content });
      // The API wants an object; a model's unparseable arguments were refused anyway.
      for (const c of h.toolCalls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: isPlainObject(c.arguments) ? c.arguments : {} });
      if (content.length > 0) out.push({ role: 'assistant', content });
    }
  }
  return out;
}

export function anthropicTools(tools: readonly ToolDefinition[]): Json[] {
  return tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
}

interface Block {
  type: string;
  text: string;
  id: string;
  name: string;
  json: string;
  input: unknown;
}

export class AnthropicProvider implements ModelProvider {
  readonly name = 'anthropic';

  constructor(private readonly ctx: ProviderContext) {}

  get settings(): ProviderSettings {
    return this.ctx.settings;
  }

  async next(history: readonly HistoryItem[], tools: readonly ToolDefinition[], signal?: AbortSignal, stream?: ModelStream): Promise<ModelTurn> {
    const { settings } = this.ctx;
    const o = settings.options;
    const body: Json = {
      model: settings.model,
      max_tokens: o.max_tokens ?? DEFAULT_MAX_TOKENS,
      messages: anthropicMessages(history),
      stream: o.stream,
      ...(o.system !== undefined ? { system: o.system } : {}),
      ...(tools.length > 0 ? { tools: anthropicTools(tools) } : {}),
      ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
      ...(o.top_p !== undefined ? { top_p: o.top_p } : {}),
    };
    return this.ctx.transport.post(body, signal, (res, attempts) => this.read(res, attempts, stream));
  }

  async close(): Promise<void> {
    await this.ctx.transport.close();
  }

  private async read(res: ResponseData, attempts: number, stream: ModelStream | undefined): Promise<ModelTurn> {
    const fail: Fail = (code, detail) => this.ctx.transport.error(code, detail, res.statusCode, attempts);
    const ct = String(res.headers['content-type'] ?? '');
    if (!ct.includes('text/event-stream')) return this.fromMessage(await readJsonBody(res, fail), fail);
    const blocks = new Map<number, Block>();
    let stop: string | null = null;
    let done = false;
    const usage = { inputTokens: 0, outputTokens: 0, seen: false };
    for await (const ev of streamEvents(res, fail)) {
      const e = parseEvent(ev.data, fail);
      switch (e.type) {
        case 'content_block_start': {
          const cb = (e.content_block ?? {}) as Json;
          blocks.set(indexOf(e, fail), blockOf(cb));
          if (cb.type === 'text' && typeof cb.text === 'string' && cb.text) stream?.onText?.(cb.text);
          break;
        }
        case 'content_block_delta': {
          const b = blocks.get(indexOf(e, fail));
          if (!b) throw fail('provider.bad_stream', 'a content_block_delta arrived for a block that never started');
          const d = (e.delta ?? {}) as Json;
          if (d.type === 'text_delta' && typeof d.text === 'string') {
            b.text += d.text;
            stream?.onText?.(d.text);
          } else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') b.json += d.partial_json;
          break; // thinking and signature deltas are not part of a turn we act on
        }
        case 'message_start':
          addUsage(usage, ((e.message ?? {}) as Json).usage);
          break;
        case 'message_delta': {
          const d = (e.delta ?? {}) as Json;
          if (typeof d.stop_reason === 'string') stop = d.stop_reason;
          // output_tokens here is the message's running total, not an increment.
          const u = (e.usage ?? {}) as Json;
          if (typeof u.output_tokens === 'number' && Number.isFinite(u.output_tokens) && u.output_tokens >= 0) {
            usage.outputTokens = u.output_tokens;
            usage.seen = true;
          }
          break;
        }
        case 'message_stop':
          done = true;
          break;
        case 'error':
          throw fail('provider.stream_error', `the stream reported an error: ${this.ctx.transport.serverMessage(JSON.stringify(e))}; run the turn again`);
        default:
          break; // content_block_stop, ping, and event types added later
      }
      if (done) break;
    }
    if (!done) throw fail('provider.stream_cut', 'the stream ended before message_stop; run the turn again');
    return withUsage(finish([...blocks.entries()].sort(([a], [b]) => a - b).map(([, b]) => b), stop, fail), usage);
  }

  /** A whole message object, for `stream: false` or a gateway that ignores `stream`. */
  private fromMessage(j: Json, fail: Fail): ModelTurn {
    if (j.type === 'error') throw fail('provider.stream_error', `the response reported an error: ${this.ctx.transport.serverMessage(JSON.stringify(j))}`);
    if (!Array.isArray(j.content)) throw fail('provider.bad_stream', 'the response has no content list; is model.base_url an Anthropic messages endpoint?');
    const blocks = (j.content as Json[]).map(blockOf);
    const usage = { inputTokens: 0, outputTokens: 0, seen: false };
    addUsage(usage, j.usage);
    return withUsage(finish(blocks, typeof j.stop_reason === 'string' ? j.stop_reason : null, fail), usage);
  }
}

type UsageTally = { inputTokens: number; outputTokens: number; seen: boolean };

const tokens = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);

/** A usage object: input counts cache writes and reads too (they are billed input). */
function addUsage(t: UsageTally, raw: unknown): void {
  if (raw === null || typeof raw !== 'object') return;
  const u = raw as Json;
  t.inputTokens += tokens(u.input_tokens) + tokens(u.cache_creation_input_tokens) + tokens(u.cache_read_input_tokens);
  t.outputTokens = Math.max(t.outputTokens, tokens(u.output_tokens));
  t.seen = true;
}

function withUsage(turn: ModelTurn, t: UsageTally): ModelTurn {
  return t.seen ? { ...turn, usage: { inputTokens: t.inputTokens, outputTokens: t.outputTokens } } : turn;
}

/** A content block as a stream's content_block_start or a whole message carries it. */
function blockOf(cb: Json): Block {
  return {
    type: String(cb.type ?? ''),
    text: typeof cb.text === 'string' ? cb.text : '',
    id: typeof cb.id === 'string' ? cb.id : '',
    name: typeof cb.name === 'string' ? cb.name : '',
    json: '',
    input: cb.input,
  };
}

function finish(blocks: Block[], stop: string | null, fail: Fail): ModelTurn {
  const calls = blocks.filter((b) => b.type === 'tool_use');
  if (stop === 'max_tokens') {
    throw fail('provider.truncated', `the model stopped at its output token limit, so its ${calls.length > 0 ? 'tool call' : 'answer'} is incomplete; raise model.options.max_tokens`);
  }
  if (stop === 'model_context_window_exceeded') {
    throw fail('provider.context_exceeded', "the conversation filled the model's context window; start a new session or use a model with a larger window");
  }
  const text = blocks
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('');
  const toolCalls: ModelToolCall[] = calls.map((b) => ({
    id: b.id || fallbackCallId(),
    name: b.name,
    arguments: b.json !== '' ? parseToolArguments(b.json) : boundToolArguments(b.input ?? {}),
  }));
  return { text: text === '' ? null : text, toolCalls };
}

function parseEvent(data: string, fail: Fail): Json {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    throw fail('provider.bad_stream', `a stream event is not JSON (${data.length} bytes); is model.base_url an Anthropic messages endpoint?`);
  }
  if (!isPlainObject(v) || typeof v.type !== 'string') throw fail('provider.bad_stream', 'a stream event is not an object with a type');
  return v;
}

function indexOf(e: Json, fail: Fail): number {
  if (typeof e.index !== 'number' || !Number.isInteger(e.index) || e.index < 0 || e.index > 1024) throw fail('provider.bad_stream', `a ${String(e.type)} event has an unusable index`);
  return e.index;
}
