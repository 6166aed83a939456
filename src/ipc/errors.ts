// A protocol error ends the one child that caused it; callers branch on the stable code.
export type IpcErrorCode =
  /** A frame announced a length over the cap (checked before any of it is buffered). */
  | 'IPC_FRAME_TOO_LARGE'
  /** A frame was not UTF-8 JSON, or did not match its message schema. */
  | 'IPC_MALFORMED'
  /** A well-formed message that is not allowed now: a reply for an unknown id, hello twice, a call while busy. */
  | 'IPC_UNEXPECTED'
  /** The first message was not a hello, or named a protocol version this side does not speak. */
  | 'IPC_VERSION'
  /** The pipe closed or failed. */
  | 'IPC_CLOSED';

export class IpcError extends Error {
  readonly code: IpcErrorCode;
  constructor(code: IpcErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IpcError';
    this.code = code;
  }
}
