// One error class per kind of failure, each with a stable code.
export class SpawnError extends Error {
  readonly code: 'SPAWN_FAILED' | 'COMMAND_NOT_FOUND' | 'SUPERVISOR_CLOSED';
  constructor(code: SpawnError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SpawnError';
    this.code = code;
  }
}
