// One live connection to one MCP server: an SDK Client over our supervised stdio transport.
// Opening it (spawn, initialize, every page of tools/list) runs under ONE deadline, the
// declaration's connect timeout; a server that misses it is closed (its whole tree) and reported.
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError as SdkError, ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { mcpNetworkAllowlist, type CoreSnapshot, type McpDeclaration } from '../../core/index.js';
import { UrlPolicyError } from '../../net/errors.js';
import { resolvePinnedTarget } from '../../net/resolve.js';
import type { ProcessSupervisor, TreeOutcome } from '../../process/index.js';
import { RedactionPatterns, redactText } from '../../redaction/index.js';
import { manifestFingerprint } from './declaration.js';
import { linearOutputSchemaValidator } from './output-schema-validator.js';
import { McpError } from './errors.js';
// The HTTP transport (the SDK's HTTP client, undici) loads when a declaration uses it (issue 17).
import type { PinnedHttpTransport } from './http-transport.js';
import { DEFAULT_MAX_LINE_BYTES, SupervisedStdioTransport } from './stdio-transport.js';

/** What the connection needs of either transport beyond the SDK's interface. */
type OwnedTransport = SupervisedStdioTransport | PinnedHttpTransport;

/** tools/list pages followed at most (a server that pages forever is a broken server). */
const MAX_PAGES = 100;
const CLIENT_INFO = { name: 'isolation-supervisor', version: '0.1.0' };

export interface OpenConnectionOptions {
  supervisor: ProcessSupervisor;
  /** Whose server it is: written on its spawn record (the supervisor may be a session host's, shared). */
  principal: string;
  declaration: McpDeclaration;
  declarationFingerprint: string;
  /** The server's whole environment (allowlist + approved declared entries); stdio only. */
  env: Readonly<Record<string, string>>;
  /** The declared headers with their approved secret values; http only. */
  headers?: Readonly<Record<string, string>>;
  /** agent.yaml `network:`, the core-wide openings of the URL policy (http only). */
  network?: CoreSnapshot['agent']['network'];
  /** Extra trust anchors for an https server (an internal CA, tests). */
  ca?: string | Buffer;
  /** Secret values to keep out of the stderr log and of every error message. */
  redact: readonly string[];
  cwd: string;
  maxLineBytes?: number;
  graceMs?: number;
  /** Given the closing of a server that failed to open (not awaited here), so its owner can wait for it. */
  onAbandon?: (closing: Promise<unknown>) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
}

export class McpConnection {
  /** Opaque id, part of the catalog entry's adapter key: a stale catalog cannot reach a new connection. */
  readonly id = `mc_${randomBytes(9).toString('hex')}`;
  readonly server: string;
  tools: readonly Tool[] = [];
  manifest = '';
  /** Set when the server announced notifications/tools/list_changed: list again before reuse. */
  toolsChanged = false;
  private closedFlag = false;
  private readonly closeListeners = new Set<() => void>();
  private readonly client: Client;
  private stopping: Promise<TreeOutcome | null> | null = null;
  private readonly secrets: RedactionPatterns | null;

  private constructor(
    readonly declaration: McpDeclaration,
    readonly declarationFingerprint: string,
    private readonly transport: OwnedTransport,
    redact: readonly string[],
  ) {
    this.server = declaration.name;
    this.secrets = redact.length > 0 ? RedactionPatterns.compile(redact) : null;
    this.client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: linearOutputSchemaValidator });
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.toolsChanged = true;
    });
    this.transport.onclose = () => {
      this.closedFlag = true;
      for (const l of this.closeListeners) l();
    };
  }

  /** Spawns (stdio) or resolves and pins (http), initializes and lists every page, all within `timeoutMs`; closes the server on any failure. */
  static async open(o: OpenConnectionOptions, timeoutMs: number): Promise<McpConnection> {
    const d = o.declaration;
    const deadline = Date.now() + timeoutMs;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    let conn: McpConnection | null = null;
    try {
      conn = new McpConnection(d, o.declarationFingerprint, await McpConnection.transportFor(o, timeoutMs, controller.signal), o.redact);
      await conn.client.connect(conn.transport, { signal: controller.signal, timeout: timeoutMs });
      await conn.listAll(deadline, controller.signal);
      return conn;
    } catch (err) {
      if (!conn) {
        if (err instanceof McpError) throw err;
        throw new McpError('MCP_CONNECT_FAILED', d.name, `MCP server ${d.name}: its transport could not be set up: ${clip(String((err as Error)?.message ?? err))}`, { cause: err });
      }
      // Not awaited: a server that ignores TERM must not hold up the others for its grace time.
      const closing = conn.close();
      if (o.onAbandon) o.onAbandon(closing);
      else void closing;
      throw conn.connectError(err, controller.signal.aborted, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  private static async transportFor(o: OpenConnectionOptions, timeoutMs: number, signal: AbortSignal): Promise<OwnedTransport> {
    const d = o.declaration;
    const t = d.transport;
    if (t.type === 'stdio') {
      return new SupervisedStdioTransport(o.supervisor, {
        server: d.name,
        principal: o.principal,
        command: t.command,
        args: t.args,
        cwd: o.cwd,
        env: o.env,
        redact: o.redact,
        ...(o.maxLineBytes !== undefined ? { maxLineBytes: o.maxLineBytes } : {}),
        ...(o.graceMs !== undefined ? { graceMs: o.graceMs } : {}),
      });
    }
    // One DNS lookup, every answer judged; every request of this connection dials the chosen address.
    let target;
    try {
      target = await resolvePinnedTarget(t.url, { allow: mcpNetworkAllowlist(o.network, t.network), signal });
    } catch (err) {
      if (signal.aborted) throw new McpError('MCP_CONNECT_TIMEOUT', d.name, `MCP server ${d.name}: resolving its URL did not finish within the connect timeout (connect_timeout_seconds in ${d.source.file})`, { cause: err });
      const why = err instanceof UrlPolicyError ? err.message : String((err as Error)?.message ?? err);
      throw new McpError('MCP_URL_REFUSED', d.name, `MCP server ${d.name}: ${d.source.file} transport.url is refused by the URL policy (${why}); nothing was sent. Open it with transport.network (allow_hosts / allow_cidrs) in ${d.source.file}, or network: in agent.yaml`, { cause: err });
    }
    const { PinnedHttpTransport } = await import('./http-transport.js');
    return new PinnedHttpTransport({
      server: d.name,
      target,
      headers: o.headers ?? {},
      maxMessageBytes: o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      connectTimeoutMs: timeoutMs,
      ...(o.ca ? { ca: o.ca } : {}),
    });
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  get pid(): number | null {
    return this.transport.pid;
  }

  get spawnId(): string | null {
    return this.transport.spawnId;
  }

  /** The newest redacted stderr of the server (bounded). */
  get stderr(): string {
    return this.transport.stderr;
  }

  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** tools/list again (after list_changed), within `timeoutMs`; the manifest fingerprint follows. */
  async refreshTools(timeoutMs: number): Promise<void> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      this.toolsChanged = false;
      await this.listAll(Date.now() + timeoutMs, controller.signal);
    } catch (err) {
      throw this.connectError(err, controller.signal.aborted, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  async call(tool: string, args: Record<string, unknown>, o: CallOptions): Promise<CallToolResult> {
    if (this.closedFlag) throw this.goneError();
    try {
      const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
        timeout: Math.max(1, o.timeoutMs),
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.onProgress ? { onprogress: (p) => o.onProgress!({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) }) } : {}),
      });
      return result as CallToolResult;
    } catch (err) {
      if (o.signal?.aborted) throw new McpError('MCP_CALL_CANCELLED', this.server, `MCP ${this.server}.${tool}: the call was cancelled (the server was sent notifications/cancelled)`, { cause: err });
      if (err instanceof SdkError && err.code === ErrorCode.RequestTimeout) {
        throw new McpError('MCP_CALL_TIMEOUT', this.server, `MCP ${this.server}.${tool} did not answer within ${o.timeoutMs} ms (call_timeout_seconds or the effect deadline); the request was cancelled`, { cause: err });
      }
      if (this.closedFlag || (err instanceof SdkError && err.code === ErrorCode.ConnectionClosed)) throw this.goneError(tool, err);
      throw new McpError('MCP_CALL_FAILED', this.server, `MCP ${this.server}.${tool} failed: ${clip(this.scrub((err as Error).message))}`);
    }
  }

  /** Stops the server's whole tree; resolves with its outcome (kill report) once nothing is left. */
  close(): Promise<TreeOutcome | null> {
    this.stopping ??= (async () => {
      try {
        await this.client.close();
      } catch {
        // The transport below is stopped either way.
      }
      return this.transport.stop();
    })();
    return this.stopping;
  }

  private async listAll(deadline: number, signal: AbortSignal): Promise<void> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const r = await this.client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: Math.max(1, deadline - Date.now()) });
      tools.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    if (cursor) throw new McpError('MCP_CONNECT_FAILED', this.server, `MCP server ${this.server} returned more than ${MAX_PAGES} pages of tools/list; it was closed`);
    this.tools = Object.freeze(tools);
    this.manifest = manifestFingerprint(tools);
  }

  /** Removes the connection's secret values (env or headers) from text a server may have written. */
  private scrub(text: string): string {
    if (!this.secrets) return text;
    try {
      return redactText(text, this.secrets);
    } catch {
      return '[a message that could not be redacted was withheld]';
    }
  }

  private goneError(tool?: string, cause?: unknown): McpError {
    const what = tool ? `${this.server}.${tool}` : this.server;
    const why = this.transport.failure ? `: ${this.transport.failure.message}` : '';
    return new McpError('MCP_SERVER_CLOSED', this.server, `MCP ${what}: the server closed its connection${why}; it is retried after the failure cache expires`, { cause });
  }

  private connectError(err: unknown, timedOut: boolean, timeoutMs: number): McpError {
    if (err instanceof McpError && err.code !== 'MCP_SERVER_CLOSED') return err;
    if (err instanceof UrlPolicyError) {
      return new McpError('MCP_URL_REFUSED', this.server, `MCP server ${this.server}: ${this.scrub(err.message)}; nothing more was sent (transport.url in ${this.declaration.source.file})`);
    }
    if (timedOut || (err instanceof SdkError && err.code === ErrorCode.RequestTimeout)) {
      // The declared bound, not the time left of it (a slot wait may have used part): what the user sets.
      const declared = this.declaration.connect_timeout_seconds * 1000;
      return new McpError('MCP_CONNECT_TIMEOUT', this.server, `MCP server ${this.server} did not finish initialize and tools/list within its connect timeout of ${declared} ms (connect_timeout_seconds in ${this.declaration.source.file}; ${timeoutMs} ms were left after waiting for a slot); it was closed`, { cause: err });
    }
    const stderr = this.transport.stderr.trim().split('\n').slice(-3).join(' | ');
    const code = this.transport.httpStatusOf(err);
    const status = code !== null ? `HTTP ${code}: ` : '';
    const failure = this.transport.failure?.message ?? clip(status + this.scrub((err as Error)?.message ?? String(err)));
    const what = this.declaration.transport.type === 'http' ? 'failed to connect' : 'failed to start';
    // No cause: an HTTP error's text is the server's body, which may echo a secret header.
    return new McpError('MCP_CONNECT_FAILED', this.server, `MCP server ${this.server} ${what}: ${failure}${stderr ? ` (stderr: ${clip(stderr)})` : ''}`);
  }
}

function clip(s: string, n = 300): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
