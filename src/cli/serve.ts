// `supervisor serve <core> --stdio | --http 127.0.0.1:PORT`: the session's resolved catalog as an
// MCP server. Any MCP client may be the agent; every tools/call still goes through EffectRuntime.
import { cliIo } from './io.js';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallsInFlight, createCatalogServer, LoopbackAddressError, parseLoopbackListen, startLoopbackMcpHttp, type CatalogServerOptions } from '../runtimes/index.js';
import { displayText } from '../redaction/index.js';
import { withPrivateUmask, writePrivateFile } from '../store/index.js';
import { openCoreSession } from './core-session.js';
import { parseFlags } from './flags.js';
import { installShutdown } from './shutdown.js';
import { defaultStateDir } from './state-dir.js';
import { parseDuration, UsageError } from './usage.js';

export const SERVE_HELP = `Usage: supervisor serve <core> (--stdio | --http 127.0.0.1:PORT) [--token-file FILE]
                        [--approve RULE]... [--deny RULE]... [--await-approval S] [--timeout S]
                        [--max-body BYTES] [--idle-timeout S] [--max-sessions N] [--state-dir DIR]

Opens a session of the core and serves its resolved catalog as an MCP server: tools/list is
exactly the catalog's tools with their schemas, and every tools/call goes through the supervisor's
pipeline (capability, checks, approval, secrets, the adapter in a supervised process tree,
redaction); the client gets the model view. Calls are recorded in the session's audit log
(supervisor audit verify --session ID).

Transports:
  --stdio           MCP over stdin/stdout; the session ends when stdin closes (EOF)
  --http ADDR       Streamable HTTP at http://ADDR/mcp; ADDR must be loopback (127.0.0.1:PORT or
                    [::1]:PORT; PORT 0 picks a free port). Requests need the header
                    "Authorization: Bearer TOKEN" (401 otherwise); a Host or Origin that is not
                    this address is refused (403); bodies over --max-body are refused (413), a
                    body not complete within 30 s too (408); a refused request's connection is
                    closed. An MCP session with no request for --idle-timeout ends (its MCP state
                    with it); at --max-sessions, the least recently used session with no request
                    in flight is ended to make room (503 only when every one is busy). A client
                    whose session ended gets 404 and initializes again. Runs until SIGINT/SIGTERM.

Options:
  --token-file FILE where the HTTP bearer token is written (mode 0600; default
                    <state dir>/serve/<session>.token). The token is never printed.
  --approve RULE    approve matching prompts: TOOL, TOOL:GLOB or capability:PATTERN
  --deny RULE       deny matching calls, whatever else says yes
                    (a rule that names no tool or capability of the catalog is refused,
                    exit 2, with the closest valid spelling)
  --await-approval S  let a "prompt" call wait up to S for  supervisor approvals approve ID  from
                    another terminal; default: such calls are denied at once (serve never
                    prompts on its own terminal: with --stdio, stdin is the protocol)
  --timeout S       each effect's deadline (default 120 s)
  --max-body BYTES  largest HTTP request body (default 1048576)
  --idle-timeout S  an HTTP MCP session with no request for this long ends (default 10m)
  --max-sessions N  HTTP MCP sessions at once, 1-256 (default 16)
  --state-dir DIR   store and artifacts (default $SUPERVISOR_STATE_DIR or ~/.local/state/isolation-supervisor)

The first line on stdout with --http is JSON: {"type":"serving","url":…,"token_file":…,"session":…}.
With --stdio nothing but MCP is written to stdout; notes go to stderr.
Exit status: 0 served and closed; 2 usage or core errors (a non-loopback address included).
`;

export async function runServe(argv: string[]): Promise<number> {
  const f = parseFlags(
    argv,
    { bool: ['stdio'], value: ['http', 'token-file', 'timeout', 'state-dir', 'await-approval', 'max-body', 'idle-timeout', 'max-sessions'], multi: ['approve', 'deny'] },
    'serve',
  );
  if (f.help) {
    cliIo().stdout.write(SERVE_HELP);
    return 0;
  }
  const [coreDir, ...extra] = f.positionals;
  if (!coreDir || extra.length > 0) throw new UsageError('serve needs one core directory: supervisor serve <core> --stdio | --http 127.0.0.1:PORT');
  const stdio = f.bool.has('stdio');
  const httpSpec = f.value.get('http');
  if (stdio === (httpSpec !== undefined)) throw new UsageError('serve needs exactly one transport: --stdio or --http 127.0.0.1:PORT');
  let listen: { host: string; port: number } | null = null;
  if (httpSpec !== undefined) {
    try {
      listen = parseLoopbackListen(httpSpec);
    } catch (err) {
      if (err instanceof LoopbackAddressError) throw new UsageError(err.message);
      throw err;
    }
  }
  const maxBodyRaw = f.value.get('max-body');
  const maxBodyBytes = maxBodyRaw === undefined ? undefined : Number(maxBodyRaw);
  if (maxBodyBytes !== undefined && (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024 || maxBodyBytes > 64 * 1024 * 1024)) {
    throw new UsageError(`--max-body ${maxBodyRaw}: give a whole number of bytes between 1024 and 67108864`);
  }
  const idleRaw = f.value.get('idle-timeout');
  const idleSessionMs = idleRaw === undefined ? undefined : parseDuration('--idle-timeout', idleRaw);
  const maxSessionsRaw = f.value.get('max-sessions');
  const maxSessions = maxSessionsRaw === undefined ? undefined : Number(maxSessionsRaw);
  if (maxSessions !== undefined && (!Number.isInteger(maxSessions) || maxSessions < 1 || maxSessions > 256)) {
    throw new UsageError(`--max-sessions ${maxSessionsRaw}: give a whole number between 1 and 256`);
  }
  const timeout = f.value.get('timeout');
  const deadlineMs = timeout === undefined ? undefined : parseDuration('--timeout', timeout);
  const stateDir = resolve(f.value.get('state-dir') ?? defaultStateDir());
  // With --stdio, stdout is the protocol: every note goes to stderr.
  // Notes name tools and reasons a client chose: shown through the one display sanitiser.
  const note = (s: string): void => void cliIo().stderr.write(`supervisor serve: ${displayText(s)}\n`);
  const s = await openCoreSession(
    {
      coreDir,
      stateDir,
      approve: f.multi.get('approve') ?? [],
      deny: f.multi.get('deny') ?? [],
      // Never the inline terminal prompt: with --stdio stdin is the protocol, and with --http the
      // server runs unattended; a prompt waits for `supervisor approvals` or is denied.
      interactive: false,
      runtime: stdio ? 'mcp-stdio' : 'mcp-http',
      ...(f.value.get('await-approval') !== undefined ? { awaitApprovalMs: parseDuration('--await-approval', f.value.get('await-approval')!) } : {}),
      onPendingApproval: (id, r) => note(`waiting for approval of ${r.toolName} (${id}): answer with  supervisor approvals approve ${id}  or  deny ${id}`),
    },
    'serve',
  );
  const controller = new AbortController();
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const shutdown = installShutdown(s.supervisor, () => {
    controller.abort();
    stop();
  });
  const calls = { ok: 0, failed: 0 };
  const inFlight = new CallsInFlight();
  const serverOptions: CatalogServerOptions = {
    inFlight,
    runtime: s.effects,
    principal: s.principal,
    sessionId: s.id,
    signal: controller.signal,
    ...(deadlineMs !== undefined ? { deadlineMs } : {}),
    onOutcome: (o) => {
      if (o.ok && !o.isError) calls.ok++;
      else calls.failed++;
      note(`${o.tool}: ${o.ok ? (o.isError ? 'ran, reported an error' : 'ok') : `refused at step ${o.step} (${o.code})`}`);
    },
    onUnknownTool: (name) => {
      calls.failed++;
      note(`${JSON.stringify(name.slice(0, 80))}: no such tool in this catalog`);
    },
  };
  // What the catalog left out of a server's tools, and why (also in the session's chain).
  for (const d of s.droppedTools) note(`mcp ${d.server}: tool ${JSON.stringify(d.tool)} dropped: ${d.reason}`);
  let status: 'completed' | 'failed' | 'cancelled' = 'failed';
  try {
    if (stdio) {
      const server = createCatalogServer(serverOptions);
      const transport = new StdioServerTransport(process.stdin, process.stdout);
      // The SDK's stdio transport does not end on EOF; the session does (the client is gone).
      process.stdin.once('end', stop);
      process.stdin.once('close', stop);
      transport.onclose = stop;
      await server.connect(transport);
      note(`serving ${s.catalog.entries.length} tool(s) over stdio · session ${s.id}`);
      await stopped;
      controller.abort();
      await server.close();
    } else {
      const http = await startLoopbackMcpHttp({
        host: listen!.host,
        port: listen!.port,
        makeServer: () => createCatalogServer(serverOptions),
        ...(maxBodyBytes !== undefined ? { maxBodyBytes } : {}),
        ...(idleSessionMs !== undefined ? { idleSessionMs } : {}),
        ...(maxSessions !== undefined ? { maxSessions } : {}),
        onRefused: (code, why) => note(`refused a request (${code}): ${why}`),
        onSessionEnded: (id, why) => note(`MCP session ${id} ended: ${why === 'idle' ? 'idle past --idle-timeout' : 'evicted to make room (--max-sessions)'}`),
      });
      const tokenFile = resolve(f.value.get('token-file') ?? join(stateDir, 'serve', `${s.id}.token`));
      // 0600 from the first byte (a fresh file renamed into place), never chmod-ed after.
      withPrivateUmask(() => mkdirSync(join(tokenFile, '..'), { recursive: true, mode: 0o700 }));
      writePrivateFile(tokenFile, `${http.token}\n`);
      cliIo().stdout.write(`${JSON.stringify({ type: 'serving', url: http.url, token_file: tokenFile, session: s.id, tools: s.catalog.entries.length })}\n`);
      await stopped;
      await http.close();
    }
    // Calls cancelled by the close still record their end before the store closes.
    await inFlight.idle(15_000);
    status = 'completed';
    note(`closed · ${calls.ok} call(s) ran, ${calls.failed} refused or failed · audit: supervisor audit verify --session ${s.id}`);
    return 0;
  } finally {
    // The signal hooks stay until the session is closed: an MCP client's SIGTERM after EOF (the
    // SDK sends one 2 s after closing stdin) then only repeats the stop under way, and the trees'
    // ends are still recorded; a second signal kills every tree at once.
    try {
      await s.close(status);
    } finally {
      shutdown.dispose();
    }
  }
}
