// Why a session could not be opened or asked: each code names what the caller gave (the core, a
// rule, a session to resume, a tool name), and the message names the file, field or fix.
export type SessionErrorCode =
  /** The core does not load, or its catalog cannot be built (a collision, an override of no tool). */
  | 'CORE_INVALID'
  /** An approve/deny rule that cannot be parsed or can never apply to this catalog. */
  | 'RULE_INVALID'
  /** The session to resume is missing, of another core, or still running (the CLI prefixes --resume:). */
  | 'RESUME_REFUSED'
  /** callTool named no tool of the session's catalog. */
  | 'UNKNOWN_TOOL'
  /** The session is closed. */
  | 'SESSION_CLOSED'
  /** openSession's stateDir is not its host's (openSessionHost). */
  | 'HOST_STATE_DIR';

export class SessionError extends Error {
  constructor(
    readonly code: SessionErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SessionError';
  }
}
