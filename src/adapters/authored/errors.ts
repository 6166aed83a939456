// What can go wrong running an authored tool out of process, as stable codes callers branch on.
import type { IpcErrorCode } from '../../ipc/index.js';

export type AuthoredToolErrorCode =
  | IpcErrorCode
  /** The deadline passed: the worker's whole tree was stopped. */
  | 'TIMEOUT'
  /** The caller cancelled: the worker's whole tree was stopped. */
  | 'CANCELLED'
  /** The worker died (crash, heap limit, killed) or could not start. */
  | 'ADAPTER_FAILED';

export class AuthoredToolError extends Error {
  readonly code: AuthoredToolErrorCode;
  constructor(code: AuthoredToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthoredToolError';
    this.code = code;
  }
}
