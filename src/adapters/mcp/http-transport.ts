// An MCP Transport for Streamable HTTP servers. The protocol (POST per message, JSON or SSE answers,
// the optional GET event stream, session and protocol-version headers) is the SDK's
// StreamableHTTPClientTransport; everything that touches the network is ours: its `fetch` goes only
// through a private undici Agent pinned to the address the URL policy validated once at connect
// (no global dispatcher, no proxy, no second DNS lookup), redirects leave nothing but the declared
// origin, and every response body is bounded (an SSE stream per event, anything else whole).
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { fetch as undiciFetch, Response as UndiciResponse, type Agent } from 'undici';
import { UrlPolicyError } from '../../net/errors.js';
import { createPinnedAgent } from '../../net/pinned-agent.js';
import type { PinnedTarget } from '../../net/resolve.js';
import { auditUrl } from '../../net/url-policy.js';
import { McpError } from './errors.js';
import { OwnedTransportBase } from './transport-base.js';

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/** How long close() waits for the server to acknowledge the end of the session (DELETE). */
const TERMINATE_MS = 1000;

export interface PinnedHttpOptions {
  server: string;
  /** The declared URL (already validated; `target` is its pinned resolution). */
  target: PinnedTarget;
  /** Declared headers, secret values already resolved (after approval). */
  headers: Readonly<Record<string, string>>;
  /** A larger JSON answer or SSE event closes the connection with MCP_RESPONSE_TOO_LARGE. */
  maxMessageBytes: number;
  connectTimeoutMs: number;
  /** Extra trust anchors for https (tests, an internal CA). */
  ca?: string | Buffer;
}

export class PinnedHttpTransport extends OwnedTransportBase<null> {
  readonly pid = null;
  readonly spawnId = null;
  readonly stderr = '';

  private readonly agent: Agent;
  private readonly inner: StreamableHTTPClientTransport;

  override httpStatusOf(err: unknown): number | null {
    return err instanceof StreamableHTTPError && typeof err.code === 'number' && err.code > 0 ? err.code : null;
  }

  constructor(private readonly o: PinnedHttpOptions) {
    super();
    // Our own deadlines (connect timeout, call timeout, cancel) govern requests; an idle event stream is legitimate.
    this.agent = createPinnedAgent(o.target, { connectTimeoutMs: o.connectTimeoutMs, headersTimeoutMs: 0, bodyTimeoutMs: 0, ...(o.ca ? { ca: o.ca } : {}) });
    this.inner = new StreamableHTTPClientTransport(o.target.url, {
      fetch: (url, init) => this.fetch(url, init),
      requestInit: { headers: { ...o.headers } },
      reconnectionOptions: { initialReconnectionDelay: 1000, maxReconnectionDelay: 10_000, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
    });
    this.inner.onmessage = (m) => this.onmessage?.(m);
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onclose = () => this.notifyClosed();
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }

  override start(): Promise<void> {
    return this.inner.start();
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (this.closed) {
      return Promise.reject(this.failure ?? new McpError('MCP_SERVER_CLOSED', this.o.server, `MCP server ${this.o.server}: its connection is closed`));
    }
    return this.inner.send(message, options);
  }

  /** close()/stop(): ends the session (DELETE, bounded) and aborts every request and stream. */
  protected override async shutdown(): Promise<null> {
    if (!this.failure && this.inner.sessionId) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.inner.terminateSession().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, TERMINATE_MS)))]);
      clearTimeout(timer);
    }
    await this.inner.close().catch(() => undefined);
    return null;
  }

  /** After onclose: drops the pinned Agent. */
  protected override async release(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }

  /** The SDK's fetch: only our pinned Agent, no redirect beyond the origin, bounded bodies. */
  private async fetch(input: string | URL, init?: RequestInit): Promise<Response> {
    const url = new URL(String(input));
    const origin = this.o.target.url.origin;
    if (url.origin !== origin) {
      throw new UrlPolicyError('url.not_pinned', `MCP server ${this.o.server}: a request for ${auditUrl(url)} was refused; this connection reaches only ${this.o.target.audit}`);
    }
    let res: UndiciResponse;
    try {
      res = await undiciFetch(url, {
        method: init?.method ?? 'GET',
        headers: { 'user-agent': 'isolation-supervisor (mcp)', ...plainHeaders(init?.headers) },
        ...(init?.body !== undefined && init.body !== null ? { body: init.body as string } : {}),
        ...(init?.signal ? { signal: init.signal } : {}),
        redirect: 'manual',
        dispatcher: this.agent,
      });
    } catch (err) {
      if (init?.signal?.aborted) throw err;
      // undici says only "fetch failed"; the reason (refused, reset, TLS) is in its cause.
      const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause;
      const code = typeof cause?.code === 'string' ? `${cause.code}: ` : '';
      const why = typeof cause?.message === 'string' ? cause.message.slice(0, 200) : String((err as Error).message);
      throw new Error(`request to ${this.o.target.audit} failed (${code}${why})`, { cause: err });
    }
    if (REDIRECTS.has(res.status)) {
      const location = res.headers.get('location');
      let to: URL | null = null;
      try {
        to = location ? new URL(location, url) : null;
      } catch {
        to = null;
      }
      // Within the origin the SDK follows it (through this fetch again, on the same pinned Agent).
      if (to === null || to.origin !== origin) {
        await res.body?.cancel().catch(() => undefined);
        throw new UrlPolicyError(
          'url.redirect_forbidden',
          `MCP server ${this.o.server}: ${this.o.target.audit} answered ${res.status} with a redirect to ${to ? auditUrl(to) : 'an unparsable Location'}; an MCP endpoint is followed only within its declared origin (its approved headers go nowhere else); declare the final URL instead`,
        );
      }
    }
    return this.bounded(res) as unknown as Response;
  }

  private bounded(res: UndiciResponse): UndiciResponse {
    if (!res.body) return res;
    const max = this.o.maxMessageBytes;
    const sse = (res.headers.get('content-type') ?? '').toLowerCase().startsWith('text/event-stream');
    const over = (): McpError =>
      new McpError(
        'MCP_RESPONSE_TOO_LARGE',
        this.o.server,
        `MCP server ${this.o.server} sent ${sse ? 'an event' : 'a response'} longer than ${max} bytes; the connection was closed (a bounded host never buffers an unbounded message)`,
      );
    let size = 0;
    let lineLength = 0;
    const limit = new TransformStream<Uint8Array, Uint8Array>({
      transform: (chunk, controller) => {
        if (!sse) {
          size += chunk.length;
        } else {
          // An SSE event ends at an empty line; the bound applies to each event, not to the stream.
          for (let i = 0; i < chunk.length; i++) {
            const b = chunk[i]!;
            size++;
            if (b === 0x0a) {
              if (lineLength === 0) size = 0;
              lineLength = 0;
            } else if (b !== 0x0d) lineLength++;
            if (size > max) break;
          }
        }
        if (size > max) {
          const err = over();
          controller.error(err);
          this.fail(err);
          return;
        }
        controller.enqueue(chunk);
      },
    });
    return new UndiciResponse(res.body.pipeThrough(limit), { status: res.status, statusText: res.statusText, headers: res.headers });
  }
}

function plainHeaders(h: RequestInit['headers']): Record<string, string> {
  if (!h) return {};
  if (h instanceof Headers) return Object.fromEntries(h.entries());
  if (Array.isArray(h)) return Object.fromEntries(h);
  return { ...(h as Record<string, string>) };
}
