// The adapter for 'mcp:' entries. Step 4 (preflight) is pure: it finds the connection the entry
// was discovered on and names the action (server, tool, a digest of the arguments) for the
// approval key. Step 7 sends tools/call with the call timeout (the declaration's, clamped by the
// effect's deadline), forwards cancellation (the SDK sends notifications/cancelled on abort) and
// turns the result into bounded text.
import { createHash } from 'node:crypto';
import { canonicalJson, mcpCallAction } from '../../policy/index.js';
import { AdapterCheckError, type AdapterEntry, type AdapterOutput, type EffectAdapter, type InvokeEnv, type Preflight } from '../adapter-types.js';
import type { McpConnection } from './connection.js';
import { liveConnection, parseMcpAdapterKey } from './live-connections.js';
import { resultText } from './result-text.js';

const SUMMARY_ARGS_CHARS = 200;

function bind(entry: AdapterEntry): { conn: McpConnection; server: string; tool: string } {
  const k = parseMcpAdapterKey(entry.adapterKey);
  if (!k) throw new AdapterCheckError(`${entry.name}: malformed MCP adapter key; resolve the catalog again`);
  const conn = liveConnection(k.connection);
  if (!conn || conn.server !== k.server) {
    throw new AdapterCheckError(
      `${entry.name}: the connection to MCP server ${k.server} this tool was discovered on is closed (the server exited or was replaced); the next turn's discovery reconnects it`,
    );
  }
  return { conn, server: k.server, tool: k.tool };
}

function argsObject(args: unknown): Record<string, unknown> {
  return args !== null && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}

function preflight(entry: AdapterEntry, args: unknown): Preflight {
  const { conn, server, tool } = bind(entry);
  let canonicalArgs: string;
  try {
    canonicalArgs = canonicalJson(argsObject(args));
  } catch (err) {
    throw new AdapterCheckError(`${entry.name}: arguments are not plain JSON (${(err as Error).message})`);
  }
  // The key binds the exact arguments by digest: bounded, and one approval never covers other arguments.
  const argsDigest = createHash('sha256').update(canonicalArgs, 'utf8').digest('hex');
  const base = mcpCallAction(server, tool);
  const shown = canonicalArgs.length > SUMMARY_ARGS_CHARS ? `${canonicalArgs.slice(0, SUMMARY_ARGS_CHARS)}…` : canonicalArgs;
  return {
    checks: [],
    action: { kind: base.kind, target: { ...(base.target as Record<string, unknown>), args: argsDigest } },
    summary: `${server}.${tool} ${shown}`,
    audit: { server, tool, connection: conn.id, pid: conn.pid, declaration: conn.declaration.source.file, argsSha256: argsDigest },
  };
}

async function invoke(entry: AdapterEntry, args: unknown, env: InvokeEnv): Promise<AdapterOutput> {
  const { conn, server, tool } = bind(entry);
  const timeoutMs = Math.max(1, Math.min(conn.declaration.call_timeout_seconds * 1000, env.deadlineMs));
  const t0 = Date.now();
  let progress = 0;
  const onProgress = env.onProgress;
  const result = await conn.call(tool, argsObject(args), {
    signal: env.signal,
    timeoutMs,
    // A progress token is asked for only when someone shows progress: it costs the server and us a
    // notification per step, and the bare client the benchmark compares with asks for none.
    ...(onProgress
      ? {
          onProgress: (p: { progress: number; total?: number; message?: string }) => {
            progress++;
            onProgress(p);
          },
        }
      : {}),
  });
  const { text, truncated, parts } = resultText(result);
  return {
    text,
    isError: result.isError === true,
    detail: { server, tool, pid: conn.pid, durationMs: Date.now() - t0, timeoutMs, contentParts: parts, truncated, progressNotifications: progress },
  };
}

export const mcpCallAdapter: EffectAdapter = { preflight, invoke };
