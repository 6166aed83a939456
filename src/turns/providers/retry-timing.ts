// When a provider request is tried again: the backoff and what a response's Retry-After asks for.
// Apart from the transport, so that naming them (the providers' index, tests) loads no HTTP client.

export interface RetryTiming {
  /** First backoff step; each later step doubles, up to maxDelayMs. Default 500 ms. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the turn fails and says so. */
  maxRetryAfterMs: number;
}
export const DEFAULT_RETRY: RetryTiming = { baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 };

/** Retry-After (seconds or an HTTP date) or OpenAI's retry-after-ms; null when absent or unreadable. */
export function retryAfterMs(headers: Record<string, string | string[] | undefined>, now = Date.now()): number | null {
  const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);
  const ms = Number(one(headers['retry-after-ms']));
  if (one(headers['retry-after-ms']) !== undefined && Number.isFinite(ms) && ms >= 0) return ms;
  const v = one(headers['retry-after'])?.trim();
  if (!v) return null;
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}
