// One error class for the MCP host; callers branch on `code`, people read `message`.
// Messages name the server and what to change; they never hold an environment value.

export type McpErrorCode =
  /** A server wrote a line longer than the transport's cap; the server was closed. */
  | 'MCP_LINE_TOO_LONG'
  /** An HTTP server's JSON answer or SSE event was over the cap; the connection was closed. */
  | 'MCP_RESPONSE_TOO_LARGE'
  /** The URL policy refused the server's URL, a DNS answer or a redirect; nothing (more) was sent. */
  | 'MCP_URL_REFUSED'
  /** A line that is not a JSON-RPC message; the server was closed. */
  | 'MCP_PROTOCOL_ERROR'
  /** connect + tools/list did not finish within the declaration's connect timeout. */
  | 'MCP_CONNECT_TIMEOUT'
  /** The server could not be started or failed during initialize / tools/list. */
  | 'MCP_CONNECT_FAILED'
  /** The server process ended (or was closed) while a request was in flight. */
  | 'MCP_SERVER_CLOSED'
  /** A tools/call did not answer within the call timeout. */
  | 'MCP_CALL_TIMEOUT'
  /** The call was cancelled by the caller (notifications/cancelled was sent). */
  | 'MCP_CALL_CANCELLED'
  /** The server answered the call with a JSON-RPC error. */
  | 'MCP_CALL_FAILED'
  /** The catalog entry names a connection that is no longer open (a stale catalog). */
  | 'MCP_CONNECTION_GONE'
  /** The declared transport is not implemented by this host. */
  | 'NOT_IMPLEMENTED'
  /** A declared env entry could not be resolved (secret not granted, unknown, unsafe target). */
  | 'MCP_ENV_DENIED'
  /** The declared cwd is outside the workspace (checked again right before the spawn). */
  | 'MCP_CWD_INVALID';

export class McpError extends Error {
  readonly code: McpErrorCode;
  readonly server: string;
  constructor(code: McpErrorCode, server: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'McpError';
    this.code = code;
    this.server = server;
  }
}
