// A scripted Anthropic Messages API on 127.0.0.1, for running the real Claude Code CLI offline
// (ANTHROPIC_BASE_URL points here). It is the model, nothing else: the CLI, the supervisor, its
// per-run MCP server and the tools under test are all real. The model's moves come from the first
// user message (the run's prompt), one directive per line, played one per model request:
//   script:call TOOL {json}    a tool_use of the supervisor's catalog tool (mcp__supervisor__TOOL)
//   script:tool NAME {json}    a tool_use of NAME exactly as written (a built-in the CLI should not have)
//   script:say TEXT            the final answer (default "done")
// The step is the number of tool_use blocks already in the conversation, so the CLI's own retries
// and the system notes it inserts do not shift the script. Every request is recorded, with the tool
// names the CLI offered and the tool_result blocks it sent back, so a test asserts what the model
// was really given and what each attempted call really returned.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedToolResult {
  toolUseId: string;
  /** The tool_use's name, matched by id within the same conversation. */
  name: string | null;
  isError: boolean;
  text: string;
}

export interface RecordedRequest {
  path: string;
  stream: boolean;
  model: string | null;
  /** Names of the tools the CLI offered the model in this request. */
  tools: string[];
  /** The tool results in this request's history (what the CLI answered to each tool_use). */
  toolResults: RecordedToolResult[];
}

export interface FakeAnthropic {
  /** For ANTHROPIC_BASE_URL. */
  readonly url: string;
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

interface Step {
  kind: 'tool_use' | 'say';
  name: string;
  input: unknown;
}

type Block = { type?: string; text?: string; id?: string; name?: string; tool_use_id?: string; is_error?: boolean; content?: unknown };
type Message = { role?: string; content?: string | Block[] };

const textOf = (content: unknown): string => {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return (content as Block[]).map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join('\n');
};

/** The script in the first user message, in order. */
function scriptOf(messages: Message[]): Step[] {
  const first = messages.find((m) => m.role === 'user');
  const steps: Step[] = [];
  for (const raw of textOf(first?.content).split('\n')) {
    const line = raw.trim();
    const m = /^script:(call|tool|say)\s+(\S+)?\s*(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === 'say') {
      steps.push({ kind: 'say', name: '', input: `${m[2] ?? ''} ${m[3] ?? ''}`.trim() });
      continue;
    }
    const name = m[1] === 'call' ? `mcp__supervisor__${m[2]}` : m[2]!;
    steps.push({ kind: 'tool_use', name, input: m[3] ? JSON.parse(m[3]) : {} });
  }
  return steps;
}

function toolUsesIn(messages: Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const b of m.content) if (b.type === 'tool_use' && b.id && b.name) names.set(b.id, b.name);
  }
  return names;
}

function toolResultsIn(messages: Message[], names: Map<string, string>): RecordedToolResult[] {
  const out: RecordedToolResult[] = [];
  for (const m of messages) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type !== 'tool_result' || !b.tool_use_id) continue;
      out.push({ toolUseId: b.tool_use_id, name: names.get(b.tool_use_id) ?? null, isError: b.is_error === true, text: textOf(b.content) });
    }
  }
  return out;
}

function writeSse(res: ServerResponse, events: [string, Record<string, unknown>][]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [type, data] of events) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  res.end();
}

function answer(res: ServerResponse, id: number, model: string, stream: boolean, step: Step): void {
  const usage = { input_tokens: 100, output_tokens: 10 };
  const message = { id: `msg_fake_${id}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage };
  const block =
    step.kind === 'tool_use'
      ? { type: 'tool_use', id: `toolu_fake_${id}`, name: step.name, input: step.input }
      : { type: 'text', text: String(step.input || 'done') };
  const stopReason = step.kind === 'tool_use' ? 'tool_use' : 'end_turn';
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content: [block], stop_reason: stopReason }));
    return;
  }
  const delta =
    step.kind === 'tool_use'
      ? { type: 'input_json_delta', partial_json: JSON.stringify(step.input) }
      : { type: 'text_delta', text: (block as { text: string }).text };
  const start = step.kind === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
  writeSse(res, [
    ['message_start', { message }],
    ['content_block_start', { index: 0, content_block: start }],
    ['content_block_delta', { index: 0, delta }],
    ['content_block_stop', { index: 0 }],
    ['message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } }],
    ['message_stop', {}],
  ]);
}

export async function startFakeAnthropic(): Promise<FakeAnthropic> {
  const requests: RecordedRequest[] = [];
  let served = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      if (req.method !== 'POST' || path !== '/v1/messages') {
        // Token counting, model lists, telemetry, anything else: recorded, not faked.
        requests.push({ path, stream: false, model: null, tools: [], toolResults: [] });
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"type":"error","error":{"type":"not_found_error","message":"not faked"}}');
        return;
      }
      let body: { messages?: Message[]; tools?: { name?: string }[]; stream?: boolean; model?: string };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const names = toolUsesIn(messages);
      const tools = (body.tools ?? []).map((t) => String(t.name));
      requests.push({ path, stream: body.stream === true, model: body.model ?? null, tools, toolResults: toolResultsIn(messages, names) });
      served += 1;
      // A request that offers no tools is the CLI's own side job (a title, a summary): plain text.
      const script = tools.length > 0 ? scriptOf(messages) : [];
      const moves = script.filter((s) => s.kind === 'tool_use');
      const final = script.find((s) => s.kind === 'say') ?? { kind: 'say', name: '', input: 'done' };
      answer(res, served, body.model ?? 'claude-fake', body.stream === true, moves[names.size] ?? final);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
