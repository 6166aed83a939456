export { mcpToolsFor } from './mcp-server/mcp-tools.js';
export { CallsInFlight, createCatalogServer, SUPERVISOR_MCP_SERVER_NAME, type CatalogServerOptions, type CatalogCallGate } from './mcp-server/catalog-server.js';
export { startLoopbackMcpHttp, parseLoopbackListen, LoopbackAddressError, MCP_PATH, DEFAULT_MAX_BODY_BYTES, type LoopbackMcpHttp, type LoopbackMcpHttpOptions } from './mcp-server/loopback-http.js';
export { registeredRuntimes, runtimeFor } from './registry.js';
export { localRuntime } from './local-runtime.js';
export { externalCliRuntime, resolveCliBinary } from './external-cli/external-cli-runtime.js';
export { externalBudgets, EXTERNAL_CEILINGS, EXTERNAL_DEFAULTS, type ExternalBudgets } from './external-cli/budgets.js';
export { BoundedLineSplitter, DEFAULT_MAX_LINE_BYTES, type SplitLine } from './external-cli/bounded-lines.js';
export type { ExternalCliAdapter, CliStreamEvent, CliArgvInput } from './external-cli/cli-adapter.js';
export { claudeCodeAdapter, CLAUDE_BUILTIN_TOOLS, CLAUDE_TOLERATED_INIT_TOOLS } from './claude-code/claude-code-adapter.js';
export { boundOf, boundDigest } from './effect-bound.js';
export {
  RuntimeSetupError,
  type AgentRuntime,
  type EffectBound,
  type ExternalEvent,
  type PreparedRun,
  type RuntimeEvent,
  type RuntimeRunOptions,
  type RuntimeRunResult,
  type RuntimeSession,
} from './runtime-types.js';
