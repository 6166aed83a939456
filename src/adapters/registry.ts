// adapterKey → adapter. Keys come from catalog entries; an unknown key is a bug, not a fallback.
import type { EffectAdapter } from './adapter-types.js';
import { terminalAdapter } from './builtin/terminal-adapter.js';
import { toolsListAdapter } from './builtin/tools-list-adapter.js';
import { webExtractAdapter } from './builtin/web-extract-adapter.js';
import { mcpCallAdapter } from './mcp/call-adapter.js';
import { unavailableAdapter } from './unavailable-adapter.js';

export function adapterFor(adapterKey: string): EffectAdapter | undefined {
  if (adapterKey === 'builtin.terminal') return terminalAdapter;
  if (adapterKey === 'builtin.tools_list') return toolsListAdapter;
  if (adapterKey === 'builtin.web_extract') return webExtractAdapter;
  if (adapterKey.startsWith('authored:')) return unavailableAdapter('the authored-tool adapter (out-of-process tool hosts)');
  if (adapterKey.startsWith('mcp:')) return mcpCallAdapter;
  return undefined;
}
