// The MCP host's connection manager: one per supervisor runtime, shared by its sessions.
// discover() runs before the model: for each declared server, the capability mcp.connect:<server>
// and its approval are settled first (one at a time, nothing constructed or spawned yet); then
// the approved servers are connected in parallel under one runtime-wide limit of concurrent server
// operations, each bounded by its connect timeout; the names are assembled deterministically last.
import type { DiscoveredMcpTool } from '../../core/index.js';
import { createHash } from 'node:crypto';
import { compileInputSchema, deepFreeze, type CoreSnapshot, type McpDeclaration } from '../../core/index.js';
import {
  approvalKey,
  canonicalJson,
  foldGlobal,
  mcpConnectAction,
  previewArguments,
  type ApprovalBroker,
  type ApprovalPolicy,
  type CapabilitySnapshot,
} from '../../policy/index.js';
import type { ProcessSupervisor } from '../../process/index.js';
import { supervisorDebug as debug } from '../../process/debug-log.js';
// The connection (the MCP SDK's client, and zod 4's schemas built as it loads: ~0.1 CPU-s) is
// imported when a server is first opened, so a core without MCP servers never loads it.
import type { McpConnection } from './connection.js';
import { declarationFingerprint } from './declaration.js';
import { resolveServerEnv, resolveServerHeaders, type McpEnvResolver } from './server-env.js';
import { McpError } from './errors.js';
import { registerConnection, unregisterConnection } from './live-connections.js';
import { mcpToolName, toolFilter } from './names.js';
import { Semaphore } from './semaphore.js';

export const DEFAULT_MAX_CONCURRENT = 4;
export const DEFAULT_FAILURE_TTL_MS = 30_000;

export interface McpConnectionManagerOptions {
  supervisor: ProcessSupervisor;
  /** Runtime-wide concurrent server operations (connect, tools/list); default 4. */
  maxConcurrent?: number;
  /** How long a failed server is remembered before it is tried again; default 30 s. */
  failureTtlMs?: number;
  /** The clock of the failure cache (tests move it). */
  now?: () => number;
  /** TERM→KILL grace of server trees (default 2 s). */
  graceMs?: number;
  /** Cap on one JSON-RPC line from a server (default 4 MiB). */
  maxLineBytes?: number;
  /** Trust anchors for HTTPS servers instead of the system roots (an internal CA, tests). */
  ca?: string | Buffer;
}

export interface DiscoveryRequest {
  sessionId: string;
  principal: string;
  core: CoreSnapshot;
  /** The session's grants: mcp.connect:<server> is required before anything else. */
  capabilities: CapabilitySnapshot;
  /** The session's broker (its approver, its cache). */
  broker: ApprovalBroker;
  /** Resolves { secret: NAME } env entries after approval; without it such servers fail with MCP_ENV_DENIED. */
  resolveEnv?: McpEnvResolver;
  signal?: AbortSignal;
}

/** What a catalog gets for one discovered tool: the core's DiscoveredMcpTool, one type for both sides. */
export type McpCatalogTool = DiscoveredMcpTool;

export type ServerState = 'connected' | 'denied' | 'failed';

/** A listed tool left out of the catalog, and why (shown by `supervisor catalog --discover`). */
export interface DroppedTool {
  tool: string;
  reason: string;
}

export interface ServerStatus {
  server: string;
  state: ServerState;
  /** Why it is not connected: CAPABILITY_DENIED, APPROVAL_DENIED or an McpError code. */
  code: string | null;
  message: string | null;
  /** True when the failure came from the failure cache (nothing was tried this time). */
  cached: boolean;
  declaration: string;
  manifest: string | null;
  tools: number;
  /** Tools the server listed that are not in the catalog because their input schema does not compile. */
  dropped: DroppedTool[];
  pid: number | null;
  /** How the connect approval was settled this time ('held' when the session already had it). */
  approval: string | null;
  /**
   * For a connected server: 'new' when this discovery started it, 'reused' when it joined a live
   * connection (an earlier turn's, another session's, the parent's of a delegated child).
   */
  connection: 'new' | 'reused' | null;
}

export interface DiscoveryResult {
  tools: McpCatalogTool[];
  /** Canonical: the catalog identity's connect policy. */
  connectPolicy: string;
  servers: ServerStatus[];
  durationMs: number;
}

interface Shared {
  key: string;
  conn: McpConnection;
  sessions: Set<string>;
}

interface Plan {
  d: McpDeclaration;
  fp: string;
  key: string;
  status: ServerStatus;
  env?: { env: Record<string, string>; headers?: Record<string, string>; redact: string[] };
}

export class McpConnectionManager {
  private readonly sem: Semaphore;
  private readonly ttl: number;
  private readonly now: () => number;
  /** Open connections by sharing key (principal, workspace, server, declaration). */
  private readonly shared = new Map<string, Shared>();
  private readonly opening = new Map<string, Promise<McpConnection>>();
  /** Per session: server name → sharing key of the connection it holds. */
  private readonly held = new Map<string, Map<string, string>>();
  private readonly failures = new Map<string, { at: number; error: McpError }>();
  private readonly closing = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly o: McpConnectionManagerOptions) {
    this.sem = new Semaphore(o.maxConcurrent ?? DEFAULT_MAX_CONCURRENT);
    this.ttl = o.failureTtlMs ?? DEFAULT_FAILURE_TTL_MS;
    this.now = o.now ?? Date.now;
  }

  /** The highest number of server operations that ever ran at once (never above the limit). */
  get highestConcurrency(): number {
    return this.sem.highWater;
  }

  /** Open connections (each may be shared by several sessions). */
  get openConnections(): number {
    return this.shared.size;
  }

  async discover(req: DiscoveryRequest): Promise<DiscoveryResult> {
    if (this.closed) throw new Error('the MCP connection manager is closed');
    const t0 = Date.now();
    const declared = [...req.core.mcp].sort((a, b) => (a.name < b.name ? -1 : 1));
    const holds = this.holdsOf(req.sessionId);
    // A server no longer declared: this session lets go of it (closed when nobody else holds it).
    for (const server of [...holds.keys()]) if (!declared.some((d) => d.name === server)) this.release(req.sessionId, server);

    // Gate: capability, then approval, one server at a time; no client exists yet.
    const plans: Plan[] = [];
    for (const d of declared) plans.push(await this.gate(req, d, holds));

    // Connect what passed, in parallel, under the runtime-wide limit. Each server's connect timeout
    // counts from here, waiting for a slot included: the catalog never waits longer than that.
    const started = Date.now();
    await Promise.all(plans.filter((p) => p.status.state === 'connected').map((p) => this.connect(req, p, holds, started + p.d.connect_timeout_seconds * 1000)));

    const tools: McpCatalogTool[] = [];
    for (const p of plans) {
      if (p.status.state !== 'connected') continue;
      const conn = this.shared.get(p.key)?.conn;
      if (!conn) continue;
      const listed = catalogTools(p.d, conn);
      tools.push(...listed.tools);
      p.status.dropped = listed.dropped;
      for (const x of listed.dropped) debug('mcp server %s: tool %j dropped: %s', p.d.name, x.tool, x.reason);
    }
    const servers = plans.map((p) => p.status);
    const connectPolicy = canonicalJson({
      v: 1,
      servers: servers.map((s) => ({ server: s.server, declaration: s.declaration, state: s.state, manifest: s.manifest })),
    });
    return { tools, connectPolicy, servers, durationMs: Date.now() - t0 };
  }

  /** Lets go of every connection the session holds; each closes when no other session holds it. */
  async releaseSession(sessionId: string): Promise<void> {
    for (const server of [...(this.held.get(sessionId)?.keys() ?? [])]) this.release(sessionId, server);
    this.held.delete(sessionId);
    await this.settle();
  }

  /** Closes everything and waits until every server tree is gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const sessionId of [...this.held.keys()]) await this.releaseSession(sessionId);
    for (const s of [...this.shared.values()]) this.drop(s);
    await Promise.allSettled([...this.opening.values()]);
    await this.settle();
  }

  /** Waits for servers being closed (timed out, released) to be gone. */
  async settle(): Promise<void> {
    while (this.closing.size > 0) await Promise.allSettled([...this.closing]);
  }

  private async gate(req: DiscoveryRequest, d: McpDeclaration, holds: Map<string, string>): Promise<Plan> {
    const fp = declarationFingerprint(d);
    const key = sharingKey(req.principal, req.core.workspace, d.name, fp);
    const status: ServerStatus = { server: d.name, state: 'denied', code: null, message: null, cached: false, declaration: fp, manifest: null, tools: 0, dropped: [], pid: null, approval: null, connection: null };
    const plan: Plan = { d, fp, key, status };
    const capability = `mcp.connect:${d.name}`;
    // Authority is checked on every discovery: a grant taken away closes the session's hold.
    if (!req.capabilities.allows(capability)) {
      this.release(req.sessionId, d.name);
      return deny(plan, 'CAPABILITY_DENIED', `MCP server ${d.name} needs the grant ${capability} (add it to grants: in agent.yaml); nothing was started`);
    }
    const heldKey = holds.get(d.name);
    if (heldKey !== undefined && heldKey !== key) this.release(req.sessionId, d.name); // changed declaration: the old one goes
    const mine = heldKey === key ? this.shared.get(key) : undefined;
    if (mine && !mine.conn.closed) {
      status.state = 'connected';
      status.approval = 'held';
      return plan;
    }
    if (mine) this.release(req.sessionId, d.name);
    const failure = this.failures.get(key);
    if (failure && this.now() - failure.at < this.ttl) {
      return fail(plan, failure.error, true);
    }
    const policy = foldGlobal(d.approval.connect ?? 'prompt', req.core.agent.approval.default, Object.entries(req.core.agent.approval.rules).map(([c, p]) => ({ capability: c, policy: p })), capability);
    const { preview, summary } = connectPreview(d);
    const decision = await req.broker.decide(
      {
        key: approvalKey({
          principal: req.principal,
          session: req.sessionId,
          coreRevision: req.core.revision,
          capabilitySnapshot: req.capabilities.digest,
          policy,
          effect: { ref: `mcp-connect:${d.name}:${fp}`, name: capability },
          action: mcpConnectAction(d.name, fp),
        }),
        policy,
        toolName: `mcp.connect.${d.name}`,
        capability,
        preview,
        actionSummary: summary,
        principalId: req.principal,
        sessionId: req.sessionId,
      },
      req.signal,
    );
    status.approval = `${decision.approved ? 'approved' : 'denied'} by ${decision.source}`;
    if (!decision.approved) return deny(plan, 'APPROVAL_DENIED', `MCP server ${d.name}: connect not approved (${decision.reason}); nothing was started`);
    // Only now, after approval: the declared environment or headers (secret values included).
    try {
      if (d.transport.type === 'stdio') plan.env = await resolveServerEnv(d, req.resolveEnv);
      else {
        const h = await resolveServerHeaders(d, req.resolveEnv);
        plan.env = { env: {}, headers: h.headers, redact: h.redact };
      }
    } catch (err) {
      if (err instanceof McpError) return fail(plan, err, false);
      throw err;
    }
    status.state = 'connected';
    return plan;
  }

  private async connect(req: DiscoveryRequest, p: Plan, holds: Map<string, string>, deadline: number): Promise<void> {
    const { d, key, status } = p;
    const timeoutMs = d.connect_timeout_seconds * 1000;
    const remaining = (): number => {
      const ms = deadline - Date.now();
      if (ms <= 0) throw new McpError('MCP_CONNECT_TIMEOUT', d.name, `MCP server ${d.name} waited ${timeoutMs} ms for one of the ${this.sem.limit} server slots (connect_timeout_seconds in ${d.source.file}); it was not started`);
      return ms;
    };
    try {
      let s = this.shared.get(key);
      if (s && s.conn.closed) s = undefined;
      status.connection = s ? 'reused' : 'new';
      if (!s) {
        let pending = this.opening.get(key);
        if (!pending) {
          pending = this.sem.run(async () =>
            (await import('./connection.js')).McpConnection.open(
              {
                supervisor: this.o.supervisor,
                principal: req.principal,
                declaration: d,
                declarationFingerprint: p.fp,
                env: p.env!.env,
                ...(p.env!.headers ? { headers: p.env!.headers } : {}),
                network: req.core.agent.network,
                redact: p.env!.redact,
                cwd: d.resolvedCwd ?? req.core.workspace,
                onAbandon: (closing) => this.track(closing),
                ...(this.o.graceMs !== undefined ? { graceMs: this.o.graceMs } : {}),
                ...(this.o.maxLineBytes !== undefined ? { maxLineBytes: this.o.maxLineBytes } : {}),
                ...(this.o.ca !== undefined ? { ca: this.o.ca } : {}),
              },
              remaining(),
            ),
          );
          this.opening.set(key, pending);
          void pending.then(
            (conn) => this.adopt(key, conn),
            () => undefined,
          ).finally(() => this.opening.delete(key));
        }
        await pending;
        s = this.shared.get(key);
        if (!s) throw new McpError('MCP_SERVER_CLOSED', d.name, `MCP server ${d.name} closed right after it connected`);
      } else if (s.conn.toolsChanged) {
        // The server said its tools changed: list again (this server only), same limit and bound.
        await this.sem.run(async () => s!.conn.refreshTools(remaining()));
      }
      s.sessions.add(req.sessionId);
      holds.set(d.name, key);
      this.failures.delete(key);
      status.manifest = s.conn.manifest;
      status.tools = s.conn.tools.length;
      status.pid = s.conn.pid;
    } catch (err) {
      const e = err instanceof McpError ? err : new McpError('MCP_CONNECT_FAILED', d.name, `MCP server ${d.name}: ${(err as Error).message}`, { cause: err });
      this.failures.set(key, { at: this.now(), error: e });
      const s = this.shared.get(key);
      if (s && (s.conn.closed || e.code === 'MCP_CONNECT_TIMEOUT')) this.drop(s);
      fail(p, e, false);
    }
  }

  private adopt(key: string, conn: McpConnection): void {
    if (this.closed) {
      this.track(conn.close());
      return;
    }
    const s: Shared = { key, conn, sessions: new Set() };
    this.shared.set(key, s);
    registerConnection(conn);
    conn.onClose(() => {
      // Closed by the server itself (crash, exit): remember the failure, forget the connection.
      if (this.shared.get(key) === s) {
        this.failures.set(key, { at: this.now(), error: new McpError('MCP_SERVER_CLOSED', conn.server, `MCP server ${conn.server} exited; it is retried after ${Math.round(this.ttl / 1000)} s`) });
        this.drop(s);
      }
    });
  }

  private release(sessionId: string, server: string): void {
    const holds = this.held.get(sessionId);
    const key = holds?.get(server);
    if (key === undefined) return;
    holds!.delete(server);
    const s = this.shared.get(key);
    if (!s) return;
    s.sessions.delete(sessionId);
    if (s.sessions.size === 0) this.drop(s);
  }

  private drop(s: Shared): void {
    if (this.shared.get(s.key) === s) this.shared.delete(s.key);
    unregisterConnection(s.conn);
    for (const holds of this.held.values()) for (const [server, key] of holds) if (key === s.key) holds.delete(server);
    this.track(s.conn.close());
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch(() => undefined).finally(() => this.closing.delete(t));
    this.closing.add(t);
  }

  private holdsOf(sessionId: string): Map<string, string> {
    let h = this.held.get(sessionId);
    if (!h) this.held.set(sessionId, (h = new Map()));
    return h;
  }
}

function deny(p: Plan, code: string, message: string): Plan {
  Object.assign(p.status, { state: 'denied', code, message });
  return p;
}

function fail(p: Plan, e: McpError, cached: boolean): Plan {
  Object.assign(p.status, { state: 'failed', code: e.code, message: e.message, cached, connection: null });
  return p;
}

function sharingKey(principal: string, workspace: string, server: string, fp: string): string {
  return createHash('sha256').update(JSON.stringify(['mcp-conn/1', principal, workspace, server, fp])).digest('hex').slice(0, 32);
}

/**
 * The connection's tools, filtered and named; sorted by name so the catalog is the same every time.
 * A tool whose input schema does not compile (invalid, or a pattern the linear-time engine cannot
 * run) is dropped with its reason; the server's other tools stay.
 */
function catalogTools(d: McpDeclaration, conn: McpConnection): { tools: McpCatalogTool[]; dropped: DroppedTool[] } {
  const keep = toolFilter(d.include, d.exclude);
  const out: McpCatalogTool[] = [];
  const dropped: DroppedTool[] = [];
  for (const t of conn.tools) {
    if (!keep(t.name)) continue;
    // The schema's dialect tag is dropped: the runtime's validator speaks one dialect for all tools.
    const { $schema: _drop, ...schema } = (t.inputSchema ?? { type: 'object' }) as Record<string, unknown>;
    const admitted = admitSchema(schema);
    if (!admitted.ok) {
      dropped.push({ tool: t.name, reason: admitted.reason });
      continue;
    }
    const inputSchema = admitted.schema;
    out.push({
      server: d.name,
      name: mcpToolName(d.name, t.name),
      serverTool: t.name,
      connection: conn.id,
      description: (t.description ?? '').slice(0, 4000),
      inputSchema,
      declarationFile: d.source.file,
      approval: (d.approval.tools as Record<string, ApprovalPolicy>)[t.name] ?? d.approval.call ?? 'prompt',
      risk: d.risk ?? 'medium',
    });
  }
  return { tools: out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), dropped };
}

/** Frozen, so the validator compiled here is the one the runtime finds (compiled once per object). */
function admitSchema(schema: Record<string, unknown>): { ok: true; schema: Record<string, unknown> } | { ok: false; reason: string } {
  let frozen: Record<string, unknown>;
  try {
    frozen = deepFreeze(schema) as Record<string, unknown>;
  } catch {
    return { ok: false, reason: 'input schema is nested too deeply to check; the server must send a flatter schema' };
  }
  const compiled = compileInputSchema(frozen);
  if (compiled.ok) return { ok: true, schema: frozen };
  const where = compiled.path.length > 0 ? ` at inputSchema.${compiled.path.join('.')}` : '';
  return { ok: false, reason: `input schema${where} ${compiled.reason}` };
}

/** What the operator is asked to approve: the command line, or the URL, header names and openings. */
function connectPreview(d: McpDeclaration): { preview: ReturnType<typeof previewArguments>; summary: string } {
  const t = d.transport;
  if (t.type === 'stdio') {
    return {
      preview: previewArguments({ command: t.command, args: t.args, cwd: t.cwd, env: t.env.map((e) => e.name) }),
      summary: `start MCP server ${d.name}: ${[t.command, ...t.args].join(' ')}`.slice(0, 500),
    };
  }
  // Header values are never shown: a literal may be a credential too.
  return {
    preview: previewArguments({ url: t.url, headers: t.headers.map((h) => h.name), ...(t.network ? { network: t.network } : {}) }),
    summary: `connect to MCP server ${d.name} at ${t.url}`.slice(0, 500),
  };
}
