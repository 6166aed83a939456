// The HTTP face of the catalog server: Streamable HTTP on a loopback address only, a per-run
// bearer token compared in constant time, Host and Origin checked against the bound address (a
// page in a browser cannot reach it through DNS rebinding), and a hard cap on request bodies.
// `supervisor serve --http` and the external runtimes' per-run servers are this one code.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';

export const MCP_PATH = '/mcp';
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Open MCP sessions one server holds at once (each holds a Server and a transport). */
export const MAX_HTTP_SESSIONS = 16;
/** An MCP session with no request for this long ends (a client that goes away without DELETE). */
export const DEFAULT_IDLE_SESSION_MS = 10 * 60_000;
/** An authenticated request body must arrive within this long (a body dripped forever holds a socket). */
export const BODY_DEADLINE_MS = 30_000;

export class LoopbackAddressError extends Error {
  readonly code = 'MCP_HTTP_NOT_LOOPBACK';
  constructor(message: string) {
    super(message);
    this.name = 'LoopbackAddressError';
  }
}

/** Parses `127.0.0.1:PORT`, `[::1]:PORT` or `localhost:PORT`; anything not loopback is refused. */
export function parseLoopbackListen(spec: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(spec.trim());
  if (!m) throw new LoopbackAddressError(`--http ${JSON.stringify(spec)}: write the address as 127.0.0.1:PORT (PORT 0 picks a free one)`);
  const rawHost = (m[1] ?? m[2])!;
  const port = Number(m[3]);
  if (port > 65535) throw new LoopbackAddressError(`--http ${spec}: port ${port} is out of range (0-65535)`);
  const host = rawHost === 'localhost' ? '127.0.0.1' : rawHost;
  const loopback = (isIP(host) === 4 && host.startsWith('127.')) || (isIP(host) === 6 && host === '::1');
  if (!loopback) {
    throw new LoopbackAddressError(
      `--http ${spec}: the MCP server binds a loopback address only (127.0.0.1 or [::1]); it exposes the session's tools with its authority, so it must never listen on ${rawHost}`,
    );
  }
  return { host, port };
}

export interface LoopbackMcpHttpOptions {
  host: string;
  port: number;
  /** A new MCP Server for each MCP session (a Server serves one transport). */
  makeServer: () => Server;
  /** The bearer token; default: 32 random bytes, hex. */
  token?: string;
  maxBodyBytes?: number;
  /** Told of every refused request (status and why), for the operator's log. */
  onRefused?: (status: number, why: string) => void;
  /** Idle MCP sessions end after this long (default 10 min). */
  idleSessionMs?: number;
  /** At most this many MCP sessions at once (default 16); the least recently used idle one is evicted first. */
  maxSessions?: number;
  /** Told of every session that ends because it was idle or evicted. */
  onSessionEnded?: (id: string, why: 'idle' | 'evicted') => void;
}

export interface LoopbackMcpHttp {
  readonly url: string;
  readonly token: string;
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

const digest = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export async function startLoopbackMcpHttp(o: LoopbackMcpHttpOptions): Promise<LoopbackMcpHttp> {
  parseLoopbackListen(`${o.host.includes(':') ? `[${o.host}]` : o.host}:${o.port}`);
  const token = o.token ?? randomBytes(32).toString('hex');
  // Comparing digests keeps the comparison constant-time whatever length the client sent.
  const expected = digest(`Bearer ${token}`);
  const maxBody = o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const idleMs = o.idleSessionMs ?? DEFAULT_IDLE_SESSION_MS;
  const maxSessions = o.maxSessions ?? MAX_HTTP_SESSIONS;
  /** Insertion order is recency: a session is moved to the end on every request. */
  const sessions = new Map<string, HttpSession>();
  let port = o.port;
  const hostPart = o.host.includes(':') ? `[${o.host}]` : o.host;
  const allowedHosts = (): Set<string> => new Set([`${hostPart}:${port}`, ...(o.host.startsWith('127.') ? [`localhost:${port}`] : [])]);

  // A refused request's connection is closed after the answer: a client that keeps dripping a
  // body it was refused for must not hold a socket (requestTimeout is off for long SSE answers).
  const refuse = (res: ServerResponse, status: number, why: string, headers: Record<string, string> = {}): void => {
    o.onRefused?.(status, why);
    res.writeHead(status, { 'content-type': 'application/json', connection: 'close', ...headers });
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: why }, id: null }));
  };

  const endSession = (id: string, why: 'idle' | 'evicted'): void => {
    const s = sessions.get(id);
    if (!s) return;
    sessions.delete(id);
    o.onSessionEnded?.(id, why);
    void s.server.close().catch(() => undefined);
  };
  /** The least recently used session with no request in flight, if any. */
  const leastRecentIdle = (): string | undefined => [...sessions].find(([, s]) => s.inFlight === 0)?.[0];
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, s] of [...sessions]) if (s.inFlight === 0 && now - s.lastUsed >= idleMs) endSession(id, 'idle');
  }, Math.max(50, Math.min(idleMs / 4, 30_000)));
  sweep.unref();

  /** Hands a request to its session's transport, keeping the session's recency and in-flight count. */
  const serve = (id: string, s: HttpSession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    sessions.delete(id);
    sessions.set(id, s);
    s.lastUsed = Date.now();
    // A POST is work being answered; a GET is the client's standing notification stream, open for
    // the session's whole life, so it does not keep an abandoned session alive.
    if (req.method === 'POST') {
      s.inFlight++;
      res.once('close', () => {
        s.inFlight--;
        s.lastUsed = Date.now();
      });
    }
    return s.transport.handleRequest(req, res, body);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const hosts = allowedHosts();
    const host = req.headers.host ?? '';
    if (!hosts.has(host.toLowerCase())) return refuse(res, 403, `Host ${JSON.stringify(host)} is not this server's address`);
    const origin = req.headers.origin;
    // A browser sends Origin; a page on any other origin (a rebound DNS name included) is refused.
    if (origin !== undefined) {
      const lower = origin.toLowerCase();
      if (!lower.startsWith('http://') || !hosts.has(lower.slice('http://'.length))) return refuse(res, 403, `Origin ${JSON.stringify(origin)} is not allowed`);
    }
    const auth = req.headers.authorization ?? '';
    if (!timingSafeEqual(digest(auth), expected)) return refuse(res, 401, 'missing or wrong bearer token', { 'www-authenticate': 'Bearer' });
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_PATH) return refuse(res, 404, `no such endpoint; the MCP endpoint is ${MCP_PATH}`);

    let body: unknown = undefined;
    if (req.method === 'POST') {
      const read = await readBody(req, maxBody, BODY_DEADLINE_MS);
      if (read.tooLarge || read.tooSlow) {
        if (read.tooLarge) refuse(res, 413, `request body over ${maxBody} bytes`);
        else refuse(res, 408, `request body not complete within ${BODY_DEADLINE_MS / 1000} s`);
        req.destroy();
        return;
      }
      try {
        body = JSON.parse(read.text);
      } catch {
        return refuse(res, 400, 'request body is not JSON');
      }
    }
    const sid = req.headers['mcp-session-id'];
    const existing = typeof sid === 'string' ? sessions.get(sid) : undefined;
    if (existing) return serve(sid as string, existing, req, res, body);
    if (sid !== undefined) return refuse(res, 404, 'unknown MCP session (it ended: idle, evicted or deleted); initialize a new one');
    if (req.method !== 'POST' || !isInitializeRequest(body)) return refuse(res, 400, 'no MCP session: initialize first');
    if (sessions.size >= maxSessions) {
      const victim = leastRecentIdle();
      if (victim === undefined) return refuse(res, 503, `at most ${maxSessions} MCP sessions at once, and every one has a request in flight`);
      endSession(victim, 'evicted');
    }
    const server = o.makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server, inFlight: 0, lastUsed: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };

  const http: HttpServer = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) refuse(res, 500, `internal error: ${(err as Error).message}`);
      else res.destroy();
    });
  });
  http.headersTimeout = 10_000;
  http.requestTimeout = 0; // SSE answers of long tool calls stay open; bodies are bounded by size.
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(o.port, o.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  port = (http.address() as { port: number }).port;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${hostPart}:${port}${MCP_PATH}`,
    token,
    host: o.host,
    port,
    close() {
      closing ??= (async () => {
        clearInterval(sweep);
        const open = [...sessions.values()];
        sessions.clear();
        await Promise.allSettled(open.map(async (s) => s.server.close()));
        await new Promise<void>((resolve) => {
          http.close(() => resolve());
          http.closeAllConnections();
        });
      })();
      return closing;
    },
  };
}

interface HttpSession {
  transport: StreamableHTTPServerTransport;
  server: Server;
  /** POSTs being answered (a tool call in progress): such a session is neither idle nor evicted. */
  inFlight: number;
  lastUsed: number;
}

interface BodyRead {
  tooLarge: boolean;
  tooSlow: boolean;
  text: string;
}

async function readBody(req: IncomingMessage, max: number, deadlineMs: number): Promise<BodyRead> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > max) return { tooLarge: true, tooSlow: false, text: '' };
  const chunks: Buffer[] = [];
  let size = 0;
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    req.destroy();
  }, deadlineMs);
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > max) return { tooLarge: true, tooSlow: false, text: '' };
      chunks.push(chunk);
    }
  } catch (err) {
    if (late) return { tooLarge: false, tooSlow: true, text: '' };
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return { tooLarge: false, tooSlow: late, text: Buffer.concat(chunks).toString('utf8') };
}
