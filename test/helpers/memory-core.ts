// A core whose one MCP server is a real @modelcontextprotocol/server-memory over stdio, its memory
// file in the core's workspace: what the session-host tests share.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeCore } from '../core/temp-core.js';

export const MEMORY_SERVER = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');

/** The core (removed by removeTempCores); `connect` is the server's connect approval. */
export function memoryServerCore(name: string, connect: 'auto' | 'prompt'): string {
  const core = makeCore({ 'agent.yaml': `name: ${name}\ngrants: [mcp.connect:memory, mcp.call:memory]\napproval:\n  default: auto\n` });
  mkdirSync(join(core, 'agent', 'mcp'), { recursive: true });
  const declaration = {
    name: 'memory',
    transport: { type: 'stdio', command: process.execPath, args: [MEMORY_SERVER], cwd: '.', env: [{ name: 'MEMORY_FILE_PATH', value: { workspace_path: 'memory.jsonl' } }] },
    approval: { connect, call: 'auto' },
  };
  writeFileSync(join(core, 'agent', 'mcp', 'memory.yaml'), JSON.stringify(declaration));
  return core;
}
