// An undici Agent whose every connection dials one validated address, while the request keeps the
// original Host header (undici writes it from the origin) and TLS keeps the original name for SNI
// and certificate verification. It is a fresh, private Agent: never the global dispatcher and never a
// proxy agent, so HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY cannot route around the pin.
import type { LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { UrlPolicyError } from './errors.js';
import type { PinnedTarget } from './resolve.js';

export interface PinnedAgentOptions {
  /** Extra trust anchors (an operator's internal CA, a test CA); the system roots stay in use otherwise. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  readonly connectTimeoutMs?: number;
  /** undici's waits for response headers and between body chunks; 0 turns one off (a long-lived event stream). Default undici's 300 s. */
  readonly headersTimeoutMs?: number;
  readonly bodyTimeoutMs?: number;
}

const defaultPort = (protocol: string): string => (protocol === 'https:' ? '443' : '80');

/** The Agent answers only requests to the target's origin; any other origin fails before dialling. */
export function createPinnedAgent(target: PinnedTarget, options: PinnedAgentOptions = {}): Agent {
  const expectedHost = target.url.hostname.replace(/^\[|\]$/g, '');
  const expectedPort = target.url.port || defaultPort(target.url.protocol);
  // A DNS name gets SNI; an IP literal gets none (RFC 6066) and is verified against its IP SAN.
  const servername = target.literal ? undefined : target.hostname;
  // The connector dials an IP literal, so Node never resolves anything; this lookup is a second lock
  // that can only ever answer the pinned address.
  const pinnedLookup = ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (opts?.all) cb(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  }) as unknown as LookupFunction;
  const base = buildConnector({
    ...(options.ca ? { ca: options.ca as string | Buffer | Array<string | Buffer> } : {}),
    lookup: pinnedLookup,
    timeout: options.connectTimeoutMs ?? 10_000,
    rejectUnauthorized: true,
  });
  return new Agent({
    ...(options.headersTimeoutMs !== undefined ? { headersTimeout: options.headersTimeoutMs } : {}),
    ...(options.bodyTimeoutMs !== undefined ? { bodyTimeout: options.bodyTimeoutMs } : {}),
    connect(opts, callback) {
      const port = opts.port || defaultPort(opts.protocol);
      if (opts.hostname !== expectedHost || opts.protocol !== target.url.protocol || port !== expectedPort) {
        callback(
          new UrlPolicyError('url.not_pinned', `this connection is pinned to ${target.audit}; a request for another origin must be validated on its own`),
          null,
        );
        return;
      }
      base({ ...opts, hostname: target.address, ...(servername ? { servername } : {}) }, callback);
    },
  });
}
