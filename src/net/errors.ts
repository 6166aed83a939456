// The two kinds of failure the net layer reports. Callers branch on `code`; messages name the rule and
// the place (scheme, host and port only) and never contain userinfo, a path or a query.

export type UrlPolicyCode =
  | 'url.invalid'
  | 'url.scheme'
  | 'url.host_forbidden'
  | 'url.address_forbidden'
  | 'url.dns_failed'
  | 'url.dns_empty'
  | 'url.redirect_forbidden'
  | 'url.too_many_redirects'
  | 'url.not_pinned'
  | 'url.allowlist_invalid';

/** A request the URL policy refuses: nothing was sent (or, for a redirect, nothing more). */
export class UrlPolicyError extends Error {
  override readonly name = 'UrlPolicyError';
  constructor(
    readonly code: UrlPolicyCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
  }
}

export type PageFetchCode =
  | 'fetch.options'
  | 'fetch.timeout'
  | 'fetch.aborted'
  | 'fetch.connect_failed'
  | 'fetch.tls_failed'
  | 'fetch.encoding'
  | 'fetch.failed';

/** A request the policy allowed that then failed on the wire, ran out of time or was cancelled. */
export class PageFetchError extends Error {
  override readonly name = 'PageFetchError';
  constructor(
    readonly code: PageFetchCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${code}: ${message}`, options);
  }
}
