// The session layer: assembling a session (core, catalog, store, process supervisor, secrets, MCP
// host, EffectRuntime, runtime) for every front end — the CLI's commands and the library.
export { openSession, type CallToolOptions, type DroppedTool, type OpenSessionOptions, type RunSessionOptions, type RunTurnOptions, type Session, type SessionStatus } from './open-session.js';
export { loadSessionCore } from './load.js';
export { mcpSecretResolver } from './secret-policy.js';
export { SessionError, type SessionErrorCode } from './errors.js';
export { exec, type ExecOptions } from './exec.js';
export { localPrincipal } from './principal.js';
export { defaultStateDir } from './state-dir.js';
export { openSessionHost, type SessionHost } from './session-host.js';
