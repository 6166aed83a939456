// The MCP host: gated connections, bounded discovery, server processes owned as whole trees.
export { McpConnectionManager, DEFAULT_FAILURE_TTL_MS, DEFAULT_MAX_CONCURRENT, type DiscoveryRequest, type DiscoveryResult, type McpCatalogTool, type McpConnectionManagerOptions, type ServerState, type ServerStatus } from './connection-manager.js';
export type { McpConnection, CallOptions, OpenConnectionOptions } from './connection.js';
export { SupervisedStdioTransport, DEFAULT_MAX_LINE_BYTES, DEFAULT_STDERR_LOG_CHARS, type SupervisedStdioOptions } from './stdio-transport.js';
export { McpError, type McpErrorCode } from './errors.js';
export { mcpToolName, toolFilter, MAX_TOOL_NAME } from './names.js';
export { declarationFingerprint, manifestFingerprint } from './declaration.js';
export { resolveServerEnv, type McpEnvResolver } from './server-env.js';
export { resultText, DEFAULT_RESULT_CHARS } from './result-text.js';
export { mcpCallAdapter } from './call-adapter.js';
export { liveConnection, parseMcpAdapterKey } from './live-connections.js';
export { Semaphore } from './semaphore.js';
