// `supervisor web`'s HTTP server: node:http on 127.0.0.1 or a UNIX socket, a static page and a small JSON API over
// the operator's own queries (the store's principal-scoped reads, the one answer path in
// src/operator/, the one sanitiser). Every request passes the gate (request-gate.ts) first; a
// refusal is a 403 and one log line, and no response carries a CORS header.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { withPrivateUmask } from '../store/index.js';
import { displayText } from '../redaction/index.js';
import { decidedByText } from '../operator/approval-answer.js';
import { approvalView } from '../operator/operator-views.js';
import type { TreeView } from '../operator/live-trees.js';
import { treeCancelText } from '../operator/tree-cancel.js';
import type { OperatorStore } from '../operator/operator-store.js';
import { checkFetchSite, checkHost, checkMutation, GateRefusal, socketGate, type GateOrigin } from './request-gate.js';
import { prepareSocketPath, secureSocket } from './unix-socket.js';
import { WebAuth } from './web-auth.js';
import { LiveStreams } from './live-stream.js';
import { PAGE_CSS, PAGE_HTML } from './page-assets.js';

export interface WebServerOptions {
  /** What the page reads and changes: this machine's store, or the control plane (web --store). */
  store: OperatorStore;
  /** 0: a free port chosen by the OS. Ignored with `socket`. */
  port: number;
  /** Serve on this UNIX socket instead of 127.0.0.1 (unix-socket.ts checks it first; decision 95). */
  socket?: string;
  /** One line per refusal or failure (stderr in the CLI). */
  log: (line: string) => void;
  /** Called once the one-time token was exchanged (`--open` then removes its launch file). */
  onSignIn?: () => void;
  /** How long an SSE stream lasts before the browser reconnects (tests shorten it). */
  maxStreamMs?: number;
}

export interface WebServer {
  /** The URL with the one-time token; on a socket, `http://localhost/#token=…` (open it through a forward). */
  url: string;
  /** The TCP port, or null on a UNIX socket. */
  port: number | null;
  /** The UNIX socket's path, or null on TCP. */
  socket: string | null;
  close(): Promise<void>;
}

/** How long one look at the live process trees serves every tab's poll. */
const TREES_FRESH_MS = 400;

/** The largest request body read (an answer or a token exchange is a few hundred bytes). */
const MAX_BODY_BYTES = 16 * 1024;

/** Sent with every response: nothing is framed, sniffed, cached, referred or loaded from elsewhere. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

class HttpError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The compiled page script (src/web/page/app.ts, built by `npm run build`). */
function pageScript(): string {
  const file = fileURLToPath(new URL('./page/app.js', import.meta.url));
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new Error(`the web page's script ${file} is missing; run npm run build`);
  }
}

export async function startWebServer(o: WebServerOptions): Promise<WebServer> {
  const script = pageScript();
  const store = o.store;
  const server = createServer();
  const bound = o.socket === undefined ? await listenTcp(server, o.port) : await listenSocket(server, o.socket);
  const tcpGate: GateOrigin | null = bound.port === null ? null : { host: `127.0.0.1:${bound.port}`, origin: `http://127.0.0.1:${bound.port}` };
  // The gate of one request: the bound address on TCP; on a socket, the loopback Host it came with.
  const gateFor = (req: IncomingMessage): GateOrigin => (tcpGate ?? socketGate(req));
  // Cookies ignore ports: two servers forwarded to two ports of one browser need two cookie names.
  const auth = new WebAuth(bound.port === null ? `supervisor_web_s${randomBytes(6).toString('hex')}` : `supervisor_web_${bound.port}`);
  const streams = await LiveStreams.start(store, {
    pollMs: store.feedPollMs,
    maxStreamMs: o.maxStreamMs ?? 10 * 60_000,
    heartbeatMs: 15_000,
    maxStreams: 32,
    onError: (err) =>
      o.log(
        err === null
          ? 'supervisor web: the live feed is read again'
          : `supervisor web: the live feed cannot be read (${displayText(err instanceof Error ? err.message : String(err))}); trying again every ${store.feedPollMs} ms, the page shows changes when it is back`,
      ),
  });
  const tab = (v: unknown): string => (typeof v === 'string' && /^[a-z0-9]{1,16}$/.test(v) ? `, tab ${v}` : '');

  // A walk of /proc per look: every tab polls, so one walk serves all looks within TREES_FRESH_MS.
  let treesLook: { at: number; trees: Promise<TreeView[]> } | null = null;
  const trees = (): Promise<TreeView[]> => {
    if (treesLook === null || Date.now() - treesLook.at > TREES_FRESH_MS) {
      const look = { at: Date.now(), trees: store.liveTrees() };
      // A failed look is not kept: the next request walks again.
      look.trees.catch(() => void (treesLook === look && (treesLook = null)));
      treesLook = look;
    }
    return treesLook.trees;
  };

  const api = {
    state: async () => {
      // The feed's head first: a change made while the lists are read is sent again, never lost.
      const seq = await store.feedHead();
      const [sessions, approvals] = await Promise.all([store.listSessions(200), store.listApprovals()]);
      return { seq, sessions, approvals, store: { engine: store.engine, location: displayText(store.location), note: store.hostLocalNote } };
    },
    approval: async (id: string) => {
      const r = await store.getApproval(id);
      if (!r) throw new HttpError(404, `no request ${displayText(id)} of yours`);
      return r;
    },
    /** The principal's own session, or 404 (the same check as every owner-scoped store read). */
    session: async (id: string) => {
      const s = await store.getSession(id);
      if (!s) throw new HttpError(404, `no session ${displayText(id)} of yours`);
      return s;
    },
    /** A session's timeline (its chain events, redacted when appended) and its tasks, from `after`. */
    timeline: async (id: string, after: number) => {
      const s = await api.session(id);
      const [events, tasks] = await Promise.all([store.listEvents(s.id, after, 500), store.listTasks(s.id, 200)]);
      return { session: s, events, tasks };
    },
    /** `supervisor subagents --session`: the delegations below one of the principal's sessions. */
    delegations: async (id: string) => ({ delegations: await store.delegations((await api.session(id)).id) }),
    /** `supervisor audit verify --session` for one of the principal's sessions. */
    audit: async (id: string) => store.verifyChain((await api.session(id)).id),
    logs: async (id: string, after: number) => {
      const r = await store.taskLog(id, after, 1000);
      if (!r) throw new HttpError(404, `no task ${displayText(id)} of yours${store.hostLocalNote ? ` here (${store.hostLocalNote})` : ''}`);
      return r;
    },
    /** `supervisor cancel`'s request: the run that owns the task stops its whole tree. */
    cancel: async (id: string, body: Record<string, unknown>) => {
      const t = await store.requestTaskCancel(id, `the supervisor web page (pid ${process.pid}${tab(body.tab)})`);
      if (!t) throw new HttpError(404, `no task ${displayText(id)} of yours${store.hostLocalNote ? ` here (${store.hostLocalNote})` : ''}`);
      return { task: t };
    },
    /**
     * `supervisor cancel sp_…`'s request for one tree (a task's or a running call's): the run that
     * owns it stops the whole tree and records the cancel, with who asked, in the audit chain.
     */
    cancelTree: async (id: string, body: Record<string, unknown>): Promise<{ status: number; body: unknown }> => {
      const asked = await store.requestTreeCancel(id, `the supervisor web page (pid ${process.pid}${tab(body.tab)})`);
      const message = treeCancelText(id, asked);
      switch (asked.kind) {
        case 'malformed':
          throw new HttpError(400, message);
        case 'not-found':
          throw new HttpError(404, message);
        case 'ended':
          return { status: 409, body: { outcome: 'ended', message } };
        case 'pending':
        case 'requested':
          // The tree leaves the page's list when its owner records it finished (the next read of /api/trees).
          return { status: 200, body: { outcome: asked.kind, spawnId: asked.record.spawnId, message } };
      }
    },
    answer: async (id: string, body: Record<string, unknown>): Promise<{ status: number; body: unknown }> => {
      const { decision, always, digest } = body;
      if (decision !== 'approve' && decision !== 'deny') throw new HttpError(400, 'decision must be "approve" or "deny"');
      if (always !== undefined && typeof always !== 'boolean') throw new HttpError(400, 'always must be true or false');
      if (typeof digest !== 'string') throw new HttpError(400, 'digest (of the request you were shown) is required');
      const outcome = await store.answerApproval({ id, approve: decision === 'approve', always: always === true, expect: digest, decidedBy: `the supervisor web page (pid ${process.pid}${tab(body.tab)})` });
      switch (outcome.kind) {
        case 'answered':
          return { status: 200, body: { outcome: 'answered', approval: approvalView(outcome.record) } };
        case 'lost':
          return { status: 409, body: { outcome: 'lost', approval: approvalView(outcome.record), message: displayText(decidedByText(outcome.record)) } };
        case 'digest-mismatch':
          return { status: 412, body: { outcome: 'digest-mismatch', message: `request ${displayText(id)} is not the one you were shown (digest ${outcome.digest}); nothing was answered` } };
        case 'not-found':
          throw new HttpError(404, `no request ${displayText(id)} of yours`);
      }
    },
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      // The path only: a query string may hold what someone pasted there (a token), and logs are kept.
      const what = `${displayText(req.method ?? '?')} ${displayText((req.url ?? '').split('?')[0]!.slice(0, 200))}`;
      if (err instanceof GateRefusal) {
        o.log(`supervisor web: refused ${what}: ${displayText(err.reason)}`);
        return reply(res, 403, { error: 'forbidden' });
      }
      if (err instanceof HttpError) return reply(res, err.status, { error: err.message });
      o.log(`supervisor web: ${what} failed: ${displayText(err instanceof Error ? err.message : String(err))}`);
      reply(res, 500, { error: 'the request failed; see the supervisor web log' });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const gate = gateFor(req);
    checkHost(req, gate);
    const url = new URL(req.url ?? '/', gate.origin);
    const method = req.method ?? 'GET';
    const path = url.pathname;
    if (method === 'GET' && (path === '/' || path === '/index.html')) return asset(res, 'text/html; charset=utf-8', PAGE_HTML);
    if (method === 'GET' && path === '/app.js') return asset(res, 'text/javascript; charset=utf-8', script);
    if (method === 'GET' && path === '/app.css') return asset(res, 'text/css; charset=utf-8', PAGE_CSS);
    if (!path.startsWith('/api/')) throw new HttpError(404, 'not found');
    if (method === 'POST') {
      checkMutation(req, gate);
      const body = await readJson(req);
      if (path === '/api/session') {
        const s = auth.exchange(body.token);
        o.onSignIn?.();
        return reply(res, 200, { csrf: s.csrf }, { 'Set-Cookie': auth.setCookie(s) });
      }
      auth.checkScript(req);
      const m = /^\/api\/approvals\/([A-Za-z0-9_]{1,64})\/answer$/.exec(path);
      if (m) {
        const r = await api.answer(m[1]!, body);
        return reply(res, r.status, r.body);
      }
      const t = /^\/api\/tasks\/([A-Za-z0-9_-]{1,64})\/cancel$/.exec(path);
      if (t) return reply(res, 200, await api.cancel(t[1]!, body));
      const tree = /^\/api\/trees\/([A-Za-z0-9_]{1,64})\/cancel$/.exec(path);
      if (tree) {
        const r = await api.cancelTree(tree[1]!, body);
        return reply(res, r.status, r.body);
      }
      throw new HttpError(404, 'not found');
    }
    if (method !== 'GET') throw new GateRefusal(`method ${method} is not served`);
    checkFetchSite(req);
    if (path === '/api/events') {
      auth.checkCookie(req);
      if (streams.full) throw new HttpError(503, 'too many open live streams; close a tab');
      const last = req.headers['last-event-id'] ?? url.searchParams.get('after') ?? String(await store.feedHead());
      const after = Number(last);
      if (!Number.isSafeInteger(after) || after < 0) throw new HttpError(400, 'Last-Event-ID must be a change number');
      return streams.open(res, after, SECURITY_HEADERS);
    }
    auth.checkScript(req);
    if (path === '/api/state') return reply(res, 200, await api.state());
    if (path === '/api/trees') return reply(res, 200, { trees: await trees() });
    const after = afterParam(url);
    let p = /^\/api\/sessions\/([A-Za-z0-9_%.-]{1,200})\/(timeline|audit|delegations)$/.exec(path);
    if (p) {
      const id = sessionIdParam(p[1]!);
      return reply(res, 200, p[2] === 'timeline' ? await api.timeline(id, after) : p[2] === 'audit' ? await api.audit(id) : await api.delegations(id));
    }
    p = /^\/api\/tasks\/([A-Za-z0-9_]{1,64})\/logs$/.exec(path);
    if (p) return reply(res, 200, await api.logs(p[1]!, after));
    const m = /^\/api\/approvals\/([A-Za-z0-9_]{1,64})$/.exec(path);
    if (m) return reply(res, 200, await api.approval(m[1]!));
    throw new HttpError(404, 'not found');
  }

  return {
    url: `${tcpGate?.origin ?? 'http://localhost'}/#token=${auth.token}`,
    port: bound.port,
    socket: bound.socket,
    close: async () => {
      streams.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      bound.remove();
    },
  };
}

interface Bound {
  port: number | null;
  socket: string | null;
  /** Undoes what listening left on disk (the socket file); nothing on TCP. */
  remove(): void;
}

function listenOn(server: Server, options: { host: string; port: number; exclusive: boolean } | { path: string; exclusive: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

async function listenTcp(server: Server, port: number): Promise<Bound> {
  await listenOn(server, { host: '127.0.0.1', port, exclusive: true });
  const a = server.address();
  return { port: typeof a === 'object' && a ? a.port : port, socket: null, remove: () => undefined };
}

async function listenSocket(server: Server, path: string): Promise<Bound> {
  const abs = await prepareSocketPath(path);
  // Bound under umask 077 (bind happens inside listen), then made 0600 whatever the umask was.
  await withPrivateUmask(() => listenOn(server, { path: abs, exclusive: true }));
  const made = secureSocket(abs);
  return { port: null, socket: abs, remove: () => made.remove() };
}

/**
 * A session id from the path: this machine's (se_…) or the control plane's (`se_…@member`, a UUID
 * for a session made by the library), percent-decoded once and then held to that alphabet.
 */
function sessionIdParam(encoded: string): string {
  let id: string;
  try {
    id = decodeURIComponent(encoded);
  } catch {
    throw new HttpError(400, 'the session id is not a valid percent-encoding');
  }
  if (!/^[A-Za-z0-9_@.-]{1,128}$/.test(id)) throw new HttpError(400, 'a session id is letters, digits and _ @ . - (at most 128)');
  return id;
}

/** `?after=N`: where a timeline or a log continues from (0: the start). */
function afterParam(url: URL): number {
  const v = url.searchParams.get('after') ?? '0';
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new HttpError(400, 'after must be a whole number');
  return n;
}

function asset(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': type });
  res.end(body);
}

function reply(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  if (res.headersSent) return void res.end();
  res.writeHead(status, { ...SECURITY_HEADERS, ...extra, 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, `the body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(c);
  }
  let v: unknown;
  try {
    v = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'the body is not JSON');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new HttpError(400, 'the body must be a JSON object');
  return v as Record<string, unknown>;
}
