// One error class for every way a model provider fails; callers branch on `code`. Messages name the
// provider, the endpoint's host (never its path or query) and the fix; never the API key, and a
// server's own error text only bounded and redacted (some servers echo the key they refused).

export type ProviderErrorCode =
  /** The provider cannot be built or used as configured (options, base URL, key source); nothing was sent. */
  | 'provider.config'
  /** 401/403: the key was refused. */
  | 'provider.auth'
  /** Any other 4xx, or a redirect: the request itself is wrong (model name, path, body). */
  | 'provider.request'
  /** 429, 5xx, connection failures or attempt timeouts, still failing after the last attempt. */
  | 'provider.unavailable'
  /** The conversation no longer fits the model's context window. */
  | 'provider.context_exceeded'
  /** The model stopped at its output token limit, so its text or tool call is incomplete. */
  | 'provider.truncated'
  /** The response is not the provider's format (bad JSON, unknown event shape, oversized event). */
  | 'provider.bad_stream'
  /** The stream ended, or the connection broke, before the turn was complete. */
  | 'provider.stream_cut'
  /** The server reported an error inside an already started stream. */
  | 'provider.stream_error'
  /** The turn's signal aborted the request. */
  | 'provider.cancelled';

export interface ProviderErrorWhere {
  provider: string;
  /** host[:port] of the endpoint. */
  host: string;
  status?: number | null;
  attempts?: number;
}

export class ProviderError extends Error {
  readonly code: ProviderErrorCode;
  readonly provider: string;
  readonly host: string;
  /** The HTTP status of the last response, when there was one. */
  readonly status: number | null;
  /** How many requests were sent for this turn. */
  readonly attempts: number;

  constructor(code: ProviderErrorCode, where: ProviderErrorWhere, detail: string) {
    // No `cause`: a low-level error (a socket error, a server body) could carry bytes we did not write.
    super(`${code}: ${where.provider} at ${where.host}: ${detail}`);
    this.name = 'ProviderError';
    this.code = code;
    this.provider = where.provider;
    this.host = where.host;
    this.status = where.status ?? null;
    this.attempts = where.attempts ?? 0;
  }

  /** Plain data for events (errors cross boundaries as data, never as live objects). */
  toJSON(): { name: string; code: ProviderErrorCode; message: string; provider: string; host: string; status: number | null; attempts: number } {
    return { name: this.name, code: this.code, message: this.message, provider: this.provider, host: this.host, status: this.status, attempts: this.attempts };
  }
}
