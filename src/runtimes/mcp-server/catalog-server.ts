// One MCP `Server` over a session's EffectRuntime: tools/list is exactly the resolved catalog's
// model-facing tools, and every tools/call goes through EffectRuntime.execute (capability,
// approval, secrets, isolation, redaction, views); the peer gets the model view only.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ResolvedEffectCatalog } from '../../catalog/index.js';
import type { EffectOutcome, EffectRuntime } from '../../effects/index.js';
import { mcpToolsFor } from './mcp-tools.js';

/** The name and version this server reports in its initialize answer. */
export const SUPERVISOR_MCP_SERVER_NAME = 'isolation-supervisor';

/** Calls in flight across every Server of one owner, so closing waits for their audit events
 *  (an effect cancelled by the close still records its end before the store closes). */
export class CallsInFlight {
  private n = 0;
  private waiters: (() => void)[] = [];
  begin(): void {
    this.n++;
  }
  end(): void {
    this.n--;
    if (this.n === 0) for (const w of this.waiters.splice(0)) w();
  }
  get count(): number {
    return this.n;
  }
  /** Resolves when no call is running, or after `timeoutMs` whatever is left. */
  idle(timeoutMs: number): Promise<void> {
    if (this.n === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

/** Asked before each call of a catalog tool runs: the owner's own budget (an external runtime's call ceiling). */
export type CatalogCallGate = (tool: string, args: unknown) => { allow: true } | { allow: false; message: string };

export interface CatalogServerOptions {
  runtime: EffectRuntime;
  principal: string;
  sessionId: string;
  /** Each effect's deadline (default: the runtime's). */
  deadlineMs?: number;
  /** Aborting cancels every call in flight (the session is closing). */
  signal?: AbortSignal;
  /** Asked before a call runs: the owner's own budget (an external runtime's call ceiling). */
  gate?: CatalogCallGate;
  /** Told after each call with its outcome (the operator's log, the owner's counters). */
  onOutcome?: (o: EffectOutcome, args: unknown) => void;
  /** Told of a call for a name the catalog does not have. */
  onUnknownTool?: (name: string) => void;
  /** Counts running calls, for an owner that must wait for them before closing the session. */
  inFlight?: CallsInFlight;
}

export function createCatalogServer(o: CatalogServerOptions, version = '1'): Server {
  const server = new Server({ name: SUPERVISOR_MCP_SERVER_NAME, version }, { capabilities: { tools: { listChanged: false } } });
  const tools = mcpToolsFor(o.runtime.catalog);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const args = request.params.arguments ?? {};
    const req = o.runtime.request(name, args);
    if (!req) {
      o.onUnknownTool?.(name);
      return toolError(`UNKNOWN_TOOL: no tool named "${name}" in this session's catalog`);
    }
    const verdict = o.gate?.(name, args) ?? { allow: true };
    if (!verdict.allow) return toolError(verdict.message);
    const signal = o.signal ? AbortSignal.any([o.signal, extra.signal]) : extra.signal;
    o.inFlight?.begin();
    let outcome;
    try {
      outcome = await o.runtime.execute(req, {
        principal: o.principal,
        sessionId: o.sessionId,
        signal,
        ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
      });
    } finally {
      o.inFlight?.end();
    }
    o.onOutcome?.(outcome, args);
    // Refusals are tool errors the model can read (step and code), never protocol errors.
    // (The model view of a refusal already starts with its code.)
    return { content: [{ type: 'text', text: outcome.views.model.content }], isError: !outcome.ok || outcome.isError };
  });
  return server;
}

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
