// An MCP Transport over a supervised process tree. The SDK's own stdio client spawns the server
// in our session and, on close, signals only that one process: grandchildren outlive it. Here the
// server is a tree of the process layer (own session/group/cgroup, spawn record, marker), its
// stderr goes through the redactor into a bounded log, and close() runs the TERM→KILL ladder on
// the whole tree. Framing is the SDK's: one JSON-RPC message per '\n'-terminated line.
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { ProcessSupervisor, SupervisedTree, TreeOutcome } from '../../process/index.js';
import { McpError } from './errors.js';
import { jsonRpcMessage } from './json-rpc-envelope.js';
import { OwnedTransportBase } from './transport-base.js';

export const DEFAULT_MAX_LINE_BYTES = 4 * 1024 * 1024;
export const DEFAULT_STDERR_LOG_CHARS = 16_000;

export interface SupervisedStdioOptions {
  /** Server name, for errors and logs. */
  server: string;
  command: string;
  args: readonly string[];
  /** Already checked to lie inside the workspace. */
  cwd: string;
  /** The whole environment of the server: the allowlist plus approved declared entries. */
  env: Readonly<Record<string, string>>;
  /** Values removed from the stderr log (the declared secrets). */
  redact: readonly string[];
  /** A longer line closes the server with MCP_LINE_TOO_LONG. */
  maxLineBytes?: number;
  /** Characters of redacted stderr kept (the newest). */
  stderrLogChars?: number;
  /** TERM→KILL grace; default 2 s as for any tree. */
  graceMs?: number;
  /** Whose server it is, on its spawn record (decision 123). */
  principal?: string;
}

export class SupervisedStdioTransport extends OwnedTransportBase<TreeOutcome | null> {
  private tree: SupervisedTree | null = null;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private stderrLog = '';
  private readonly maxLine: number;
  private readonly logChars: number;

  constructor(
    private readonly supervisor: ProcessSupervisor,
    private readonly o: SupervisedStdioOptions,
  ) {
    super();
    this.maxLine = o.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.logChars = o.stderrLogChars ?? DEFAULT_STDERR_LOG_CHARS;
  }

  get pid(): number | null {
    return this.tree?.pid ?? null;
  }

  get spawnId(): string | null {
    return this.tree?.spawnId ?? null;
  }

  /** The newest redacted stderr of the server, at most `stderrLogChars` characters. */
  get stderr(): string {
    return this.stderrLog;
  }

  override async start(): Promise<void> {
    if (this.tree) throw new Error(`MCP server ${this.o.server}: transport already started`);
    const tree = this.supervisor.spawnTree({
      ...(this.o.principal !== undefined ? { principal: this.o.principal } : {}),
      command: this.o.command,
      args: this.o.args,
      cwd: this.o.cwd,
      env: this.o.env,
      redact: this.o.redact,
      stdin: 'pipe',
      stdout: 'raw',
      // A server lives as long as its connection: no artifact files, a bounded in-memory log.
      artifacts: false,
      tailChars: this.logChars,
      onStderr: (chunk) => this.appendLog(chunk.toString('utf8')),
      ...(this.o.graceMs !== undefined ? { graceMs: this.o.graceMs } : {}),
    });
    this.tree = tree;
    const out = tree.stdout;
    if (!out) throw new Error('the process layer did not hand over stdout (stdout: raw)');
    out.on('data', (chunk: Buffer) => this.onData(chunk));
    // The server ended by itself (crash, exit on EOF): tell the protocol layer once.
    void tree.done.then(() => this.notifyClosed());
    // A write to a dead server's stdin fails with EPIPE; the exit above reports it.
    tree.stdin?.on('error', () => undefined);
  }

  override send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.tree?.stdin;
    if (!stdin || this.closed) {
      return Promise.reject(new McpError('MCP_SERVER_CLOSED', this.o.server, `MCP server ${this.o.server} is not running; its connection is closed`));
    }
    const line = JSON.stringify(message) + '\n';
    return new Promise<void>((resolve) => {
      if (stdin.write(line)) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** close()/stop(): the whole tree (end of input, TERM, KILL), resolved when nothing of it is left, with its outcome (kill report). */
  protected override async shutdown(): Promise<TreeOutcome | null> {
    return this.tree ? this.tree.stop('cancelled') : null;
  }

  private appendLog(text: string): void {
    this.stderrLog += text;
    if (this.stderrLog.length > this.logChars) this.stderrLog = this.stderrLog.slice(this.stderrLog.length - this.logChars);
  }

  private onData(chunk: Buffer): void {
    if (this.failure) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      if (this.buffered + piece.length > this.maxLine) return this.tooLong();
      const line = this.buffered === 0 ? piece : Buffer.concat([...this.chunks, piece]);
      this.chunks = [];
      this.buffered = 0;
      start = nl + 1;
      this.deliver(line);
      if (this.failure) return;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    if (this.buffered + rest.length > this.maxLine) return this.tooLong();
    // Copy: the stream may reuse the chunk's memory.
    this.chunks.push(Buffer.from(rest));
    this.buffered += rest.length;
  }

  private tooLong(): void {
    this.chunks = [];
    this.buffered = 0;
    this.fail(
      new McpError(
        'MCP_LINE_TOO_LONG',
        this.o.server,
        `MCP server ${this.o.server} sent a message longer than ${this.maxLine} bytes; the server was closed (a bounded host never buffers an unbounded line)`,
      ),
    );
  }

  private deliver(line: Buffer): void {
    let text = line.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return;
    let message: JSONRPCMessage | null;
    let cause: unknown;
    try {
      message = jsonRpcMessage(JSON.parse(text));
    } catch (err) {
      message = null;
      cause = err;
    }
    if (message === null) {
      // A stray log line on stdout would corrupt the protocol: the SDK reports and skips it; so do we.
      this.onerror?.(new McpError('MCP_PROTOCOL_ERROR', this.o.server, `MCP server ${this.o.server} wrote a line on stdout that is not a JSON-RPC message (skipped)`, { cause }));
      return;
    }
    this.onmessage?.(message);
  }
}
