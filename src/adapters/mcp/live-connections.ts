// Open connections by id, for the call adapter. A catalog entry's adapter key names the exact
// connection its tool was discovered on; once that connection is closed, the id resolves to
// nothing and the (stale) entry cannot be called: there is no lookup of a tool by name.
import type { McpConnection } from './connection.js';

const live = new Map<string, McpConnection>();

export function registerConnection(c: McpConnection): void {
  live.set(c.id, c);
}

export function unregisterConnection(c: McpConnection): void {
  if (live.get(c.id) === c) live.delete(c.id);
}

export function liveConnection(id: string): McpConnection | undefined {
  const c = live.get(id);
  return c && !c.closed ? c : undefined;
}

/** `mcp:<server>/<connection id>/<server's tool name, URI-encoded>` (built by the catalog). */
export function parseMcpAdapterKey(key: string): Readonly<{ server: string; connection: string; tool: string }> | null {
  // Parsed twice per call (preflight, invoke) for a handful of keys: remembered, within a bound.
  const known = parsedKeys.get(key);
  if (known !== undefined) return known;
  const m = /^mcp:([^/]+)\/([^/]+)\/(.+)$/.exec(key);
  let parsed: Readonly<{ server: string; connection: string; tool: string }> | null = null;
  if (m) {
    try {
      parsed = Object.freeze({ server: m[1]!, connection: m[2]!, tool: decodeURIComponent(m[3]!) });
    } catch {
      parsed = null;
    }
  }
  if (parsedKeys.size >= MAX_PARSED_KEYS) parsedKeys.clear();
  parsedKeys.set(key, parsed);
  return parsed;
}
const MAX_PARSED_KEYS = 4096;
const parsedKeys = new Map<string, Readonly<{ server: string; connection: string; tool: string }> | null>();
