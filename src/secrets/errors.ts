// One error class for every refusal of the secrets layer; callers branch on `code`.
// Messages name the secret, the target and the fix, never a value or a file's contents.

export type SecretErrorCode =
  | 'secret.not_granted'
  | 'secret.unknown'
  | 'secret.forbidden_target'
  | 'secret.expired'
  | 'secret.source_failed'
  | 'secret.background_refused'
  | 'secret.duplicate_target';

export class SecretError extends Error {
  readonly code: SecretErrorCode;
  /** The secret's declared name, when the error is about one. */
  readonly secret: string | null;
  /** The target environment variable, when the error is about one. */
  readonly target: string | null;
  constructor(code: SecretErrorCode, message: string, where: { secret?: string; target?: string } = {}) {
    // No `cause`: a cause from a source (fs, a keychain) could carry bytes we did not write.
    super(message);
    this.name = 'SecretError';
    this.code = code;
    this.secret = where.secret ?? null;
    this.target = where.target ?? null;
  }

  /** Plain data for events and IPC (errors cross boundaries as data, never as live objects). */
  toJSON(): { name: string; code: SecretErrorCode; message: string; secret: string | null; target: string | null } {
    return { name: this.name, code: this.code, message: this.message, secret: this.secret, target: this.target };
  }
}
