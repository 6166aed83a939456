// A fake model endpoint for the provider tests: a real node:http server on 127.0.0.1 that answers
// each request with the next scripted reply and records what it received (path, headers, body).
// Builders write the two APIs' streams the way the real services frame them.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SecretStore } from '../../../src/secrets/index.js';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  raw: string;
  at: number;
}
export type Reply = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
export interface SseItem {
  event?: string;
  data: unknown;
}

export class FakeModelServer {
  readonly received: Received[] = [];
  /** Resolves when a response's connection closes before the reply finished (a client abort). */
  readonly aborted: Promise<void>;
  private replies: Reply[] = [];
  private markAborted!: () => void;

  private constructor(private readonly server: Server) {
    this.aborted = new Promise((r) => (this.markAborted = r));
  }

  static async start(): Promise<FakeModelServer> {
    let self: FakeModelServer | null = null;
    const server = createServer((req, res) => void self!.handle(req, res));
    self = new FakeModelServer(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return self;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get host(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Drops replies a failed test left unused, so the next test starts in step. */
  clear(): void {
    this.replies = [];
  }

  reply(...r: Reply[]): this {
    this.replies.push(...r);
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = null;
    try {
      body = JSON.parse(raw);
    } catch {
      body = null;
    }
    this.received.push({ path: req.url ?? '', headers: req.headers, body, raw, at: Date.now() });
    res.on('close', () => {
      if (!res.writableFinished) this.markAborted();
    });
    const next = this.replies.shift();
    if (!next) {
      // Not retryable, so a test that sent more requests than it scripted fails at once.
      res.writeHead(418, { 'content-type': 'application/json' }).end('{"error":{"message":"the fake server has no scripted reply left"}}');
      return;
    }
    await next(req, res);
  }
}

/** A streamed reply; `cutAfter` destroys the connection after that many events, `pauseAfter` then hangs. */
export function sse(items: SseItem[], o: { cutAfter?: number; hangAfter?: number; delayMs?: number } = {}): Reply {
  return async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    for (let i = 0; i < items.length; i++) {
      if (o.cutAfter === i) {
        res.socket?.destroy();
        return;
      }
      if (o.hangAfter === i) {
        await new Promise<void>((r) => res.on('close', () => r()));
        return;
      }
      const it = items[i]!;
      const data = typeof it.data === 'string' ? it.data : JSON.stringify(it.data);
      res.write(`${it.event ? `event: ${it.event}\n` : ''}data: ${data}\n\n`);
      if (o.delayMs) await sleep(o.delayMs);
    }
    res.end();
  };
}

export function status(code: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return (_req, res) => {
    res.writeHead(code, { 'content-type': 'application/json', ...headers }).end(typeof body === 'string' ? body : JSON.stringify(body));
  };
}

/** Closes the connection without any response (a reset before the headers). */
export const reset: Reply = (req) => void req.socket.destroy();

/** OpenAI chat-completions stream chunks. */
export const oa = {
  text: (...pieces: string[]): SseItem[] => pieces.map((p) => ({ data: { object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: p } }] } })),
  /** Parallel calls: each call's first piece carries id and name; arguments follow in `n` pieces, interleaved. */
  calls(calls: { id: string; name: string; args: string }[], n = 3): SseItem[] {
    const out: SseItem[] = calls.map((c, i) => ({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] } }] } }));
    for (let p = 0; p < n; p++) {
      calls.forEach((c, i) => {
        const size = Math.ceil(c.args.length / n);
        const piece = c.args.slice(p * size, (p + 1) * size);
        if (piece) out.push({ data: { choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: piece } }] } }] } });
      });
    }
    return out;
  },
  finish: (reason: string): SseItem => ({ data: { choices: [{ index: 0, delta: {}, finish_reason: reason }] } }),
  done: { data: '[DONE]' } as SseItem,
};

/** Anthropic messages stream events. */
export const an = {
  start: { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'm', stop_reason: null, usage: { input_tokens: 1, output_tokens: 0 } } } } as SseItem,
  text(index: number, ...pieces: string[]): SseItem[] {
    return [
      { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } },
      ...pieces.map((p) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } } })),
      { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
    ];
  },
  toolUse(index: number, id: string, name: string, args: string, n = 3): SseItem[] {
    const size = Math.max(1, Math.ceil(args.length / n));
    const pieces: SseItem[] = [];
    for (let p = 0; p * size < args.length; p++) {
      pieces.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: args.slice(p * size, (p + 1) * size) } } });
    }
    return [{ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } } }, ...pieces, { event: 'content_block_stop', data: { type: 'content_block_stop', index } }];
  },
  stop(reason: string): SseItem[] {
    return [
      { event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 5 } } },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ];
  },
  ping: { event: 'ping', data: { type: 'ping' } } as SseItem,
};

/** A secret store holding one env-sourced key, as a core's `secrets:` would declare it. */
export function keyStore(name: string, value: string): SecretStore {
  return new SecretStore({ [name]: { env: `${name}_SOURCE` } } as never, { coreDir: '/', env: { [`${name}_SOURCE`]: value } });
}

/** Fast backoff for tests: the logic is the same, the waits are short. */
export const FAST_RETRY = { baseDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 5_000 };
