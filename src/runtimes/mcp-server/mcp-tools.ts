// The tools an MCP peer is offered for a catalog. Its own module, without the SDK's server: an
// external runtime computes them (and its effect bound) in every `plan` and `run`, where the server
// itself is only loaded when a run starts its CLI (issue 17: a start loads what it uses).
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ResolvedEffectCatalog } from '../../catalog/index.js';

/** The tools an MCP peer sees for a catalog: one per entry, with the entry's own input schema. */
export function mcpToolsFor(catalog: ResolvedEffectCatalog): Tool[] {
  return catalog.entries.map((e) => ({
    name: e.name,
    description: e.description,
    // MCP requires an object schema; catalog schemas are objects already (the catalog checks them).
    inputSchema: { type: 'object', ...(e.inputSchema as Record<string, unknown>) } as Tool['inputSchema'],
  }));
}
