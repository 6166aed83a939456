// Typed failures of the sandbox tier. Callers branch on `code`; messages name the field and the
// fix. An env value is never quoted: it may be a secret.

export type SandboxSpecErrorCode =
  | 'SANDBOX_BAD_COMMAND'
  | 'SANDBOX_COMMAND_NOT_FOUND'
  | 'SANDBOX_COMMAND_NOT_VISIBLE'
  | 'SANDBOX_BAD_ARG'
  | 'SANDBOX_BAD_PATH'
  | 'SANDBOX_PATH_MISSING'
  | 'SANDBOX_PATH_TOO_BROAD'
  | 'SANDBOX_PATH_RESERVED'
  | 'SANDBOX_PATH_SYSTEM'
  | 'SANDBOX_PATH_PROTECTED'
  | 'SANDBOX_PATH_CONFLICT'
  | 'SANDBOX_CWD_OUTSIDE'
  | 'SANDBOX_BAD_ENV'
  | 'SANDBOX_ENV_RESERVED'
  | 'SANDBOX_BAD_OPTION';

/** The spec cannot be run as asked; `field` is its path in the spec (`writablePaths[1]`, `env.PATH`). */
export class SandboxSpecError extends Error {
  readonly code: SandboxSpecErrorCode;
  readonly field: string;
  constructor(code: SandboxSpecErrorCode, field: string, message: string) {
    super(`sandbox spec ${field}: ${message}`);
    this.name = 'SandboxSpecError';
    this.code = code;
    this.field = field;
  }
}

/** No sandbox mechanism works on this machine; `reason` says why and how to fix it. */
export class SandboxUnavailableError extends Error {
  readonly code = 'SANDBOX_UNAVAILABLE' as const;
  readonly reason: string;
  constructor(reason: string) {
    super(`the sandbox tier is not usable here: ${reason}`);
    this.name = 'SandboxUnavailableError';
    this.reason = reason;
  }
}
