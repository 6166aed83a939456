// Redaction fails closed: a caller that catches this must publish a fixed failed result, never the
// raw output. Messages name secrets by position only ("secret #2"), never by value.

export type RedactionErrorCode =
  /** The caller's marker could form a secret (or one of its encoded forms) with its neighbours. */
  | 'REDACTION_MARKER_CONFLICT'
  /** The caller's marker is the empty string. */
  | 'REDACTION_MARKER_EMPTY'
  /** No candidate marker is safe for this set of secrets. */
  | 'REDACTION_NO_SAFE_MARKER'
  /** The secrets and their forms need a matcher larger than the memory cap. */
  | 'REDACTION_TOO_LARGE'
  /** Redacted text did not settle into valid UTF-8 free of every pattern (secrets that are partial characters). */
  | 'REDACTION_UNSTABLE_TEXT';

export class RedactionError extends Error {
  readonly code: RedactionErrorCode;
  constructor(code: RedactionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RedactionError';
    this.code = code;
  }
}
