// One error class per kind of store failure, each with a stable `code` callers can switch on.
/** Opening or preparing the store failed; `code` says how (STORE_OPEN_FAILED, STATE_DIR_UNSAFE, …). */
export class StoreError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreError';
    this.code = code;
  }
}

/**
 * No session with this id for this principal. A session owned by someone else gets exactly this
 * error, with exactly this message, so a caller cannot learn that the id exists.
 */
export class SessionNotFoundError extends StoreError {
  readonly sessionId: string;
  /**
   * `where` is for the chain's own (not principal-scoped) lookups only: which store was asked and
   * what it lacked, so a report of this error says whether the row or the connection was wrong.
   */
  constructor(sessionId: string, where?: string) {
    super('SESSION_NOT_FOUND', `session ${JSON.stringify(sessionId)} not found${where ? ` (${where})` : ''}`);
    this.name = 'SessionNotFoundError';
    this.sessionId = sessionId;
  }
}

/** Same rule as sessions: another principal's turn is indistinguishable from a missing one. */
export class TurnNotFoundError extends StoreError {
  readonly turnId: string;
  constructor(turnId: string) {
    super('TURN_NOT_FOUND', `turn ${JSON.stringify(turnId)} not found in this session`);
    this.name = 'TurnNotFoundError';
    this.turnId = turnId;
  }
}

/** The session (or turn) already ended: its transcript is closed, start a new one. */
export class SessionEndedError extends StoreError {
  constructor(what: string, status: string) {
    super('SESSION_ENDED', `${what} already ended with status ${JSON.stringify(status)}; nothing more can be added to it`);
    this.name = 'SessionEndedError';
  }
}

/** A caller passed a value the store refuses; `field` names it. */
export class StoreInputError extends StoreError {
  readonly field: string;
  /** The rule broken and its fix, without the field name. */
  readonly reason: string;
  constructor(field: string, reason: string, options?: { cause?: unknown }) {
    super('STORE_INPUT_INVALID', `${field}: ${reason}`, options);
    this.name = 'StoreInputError';
    this.field = field;
    this.reason = reason;
  }
}

/**
 * The chain cannot be extended safely: its head row is gone while events remain, or events exist
 * past the head. Appending would paper over the tampering (or collide with a forged row), so the
 * store refuses; `supervisor audit verify` says what is wrong.
 */
export class ChainInconsistentError extends StoreError {
  readonly sessionId: string;
  constructor(sessionId: string, problem: string) {
    super(
      'AUDIT_CHAIN_INCONSISTENT',
      `the audit chain of session ${sessionId} cannot be extended: ${problem}; refusing to append. Run "supervisor audit verify --session ${sessionId}"`,
    );
    this.name = 'ChainInconsistentError';
    this.sessionId = sessionId;
  }
}

