// adapterKey → adapter. Keys come from catalog entries; an unknown key is a bug, not a fallback.
import type { EffectAdapter } from './adapter-types.js';
import { authoredAdapter } from './authored/authored-adapter.js';
import { terminalAdapter } from './builtin/terminal-adapter.js';
import { toolsListAdapter } from './builtin/tools-list-adapter.js';
import { webExtractAdapter } from './builtin/web-extract-adapter.js';
import { taskControlAdapter, taskListAdapter, taskStatusAdapter, yieldUntilAdapter } from './builtin/task-tools-adapter.js';
import { delegateTaskAdapter } from './builtin/delegate-task-adapter.js';
import { evolveCoreAdapter } from './builtin/evolve-core-adapter.js';
import { sessionSearchAdapter } from './builtin/session-search-adapter.js';
import { mcpCallAdapter } from './mcp/call-adapter.js';

export function adapterFor(adapterKey: string): EffectAdapter | undefined {
  if (adapterKey === 'builtin.terminal') return terminalAdapter;
  if (adapterKey === 'builtin.tools_list') return toolsListAdapter;
  if (adapterKey === 'builtin.web_extract') return webExtractAdapter;
  if (adapterKey === 'builtin.task_list') return taskListAdapter;
  if (adapterKey === 'builtin.task_status') return taskStatusAdapter;
  if (adapterKey === 'builtin.task_control') return taskControlAdapter;
  if (adapterKey === 'builtin.yield_until') return yieldUntilAdapter;
  if (adapterKey === 'builtin.session_search') return sessionSearchAdapter;
  if (adapterKey === 'builtin.delegate_task') return delegateTaskAdapter;
  if (adapterKey === 'builtin.evolve_core') return evolveCoreAdapter;
  if (adapterKey.startsWith('authored:')) return authoredAdapter;
  if (adapterKey.startsWith('mcp:')) return mcpCallAdapter;
  return undefined;
}
