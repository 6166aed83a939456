export { createCatalogServer, mcpToolsFor, SUPERVISOR_MCP_SERVER_NAME, type CatalogServerOptions, type CatalogCallGate } from './mcp-server/catalog-server.js';
export { startLoopbackMcpHttp, parseLoopbackListen, LoopbackAddressError, MCP_PATH, DEFAULT_MAX_BODY_BYTES, type LoopbackMcpHttp, type LoopbackMcpHttpOptions } from './mcp-server/loopback-http.js';
