// A bounded GET under the URL policy, for the web_extract builtin: each hop is checked, resolved once
// and pinned (resolve.ts, pinned-agent.ts); redirects are followed by hand; the whole call, redirects
// and body included, ends at one deadline; at most maxBytes of (decoded) body are kept.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream';
import { TextDecoder } from 'node:util';
import * as zlib from 'node:zlib';
import type { Agent } from 'undici';
import { PageFetchError, UrlPolicyError, type UrlPolicyCode } from './errors.js';
import { createPinnedAgent } from './pinned-agent.js';
import { type DnsLookup, type PinnedTarget, resolvePinnedTarget } from './resolve.js';
import { type CompiledAllowlist, type NetAllowlist, auditUrl, compileAllowlist } from './url-policy.js';

export interface FetchPageOptions {
  /** Deadline for the whole call: DNS, connect, every redirect, headers and body. */
  readonly timeoutMs: number;
  /** Body bytes kept (after any content decoding); the rest is not read. */
  readonly maxBytes: number;
  readonly lookup?: DnsLookup;
  readonly allow?: NetAllowlist | CompiledAllowlist;
  readonly signal?: AbortSignal;
  /** Default 5. */
  readonly maxRedirects?: number;
  /** Extra trust anchors for HTTPS (an internal CA); the system roots are used otherwise. */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>;
}

export interface PageResult {
  /** Where the last hop went, in audit form (scheme://host[:port]). */
  readonly finalUrl: string;
  readonly status: number;
  readonly contentType: string;
  /** The body decoded by its charset; empty for non-text content types. */
  readonly text: string;
  /** True when the body was longer than maxBytes and the rest was not read. */
  readonly truncated: boolean;
  /** Body bytes kept. */
  readonly bytes: number;
  readonly redirects: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Policy refusals on a later hop are reported as the redirect being refused, with the rule as cause.
const REFUSED_ON_REDIRECT = new Set<UrlPolicyCode>(['url.invalid', 'url.scheme', 'url.host_forbidden', 'url.address_forbidden']);
const TEXTUAL = /^(?:text\/|application\/(?:[\w.+-]*\+)?(?:xml|json)\b|application\/(?:x-)?javascript\b)/i;

function header(headers: Record<string, string | string[] | undefined>, name: string): string {
  const v = headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}

function basicAuth(url: URL): string | null {
  if (!url.username && !url.password) return null;
  const dec = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return `Basic ${Buffer.from(`${dec(url.username)}:${dec(url.password)}`).toString('base64')}`;
}

function checkOptions(o: FetchPageOptions): void {
  if (!Number.isFinite(o.timeoutMs) || o.timeoutMs <= 0) {
    throw new PageFetchError('fetch.options', `timeoutMs must be a positive number of milliseconds, got ${String(o.timeoutMs)}`);
  }
  if (!Number.isSafeInteger(o.maxBytes) || o.maxBytes <= 0) {
    throw new PageFetchError('fetch.options', `maxBytes must be a positive integer, got ${String(o.maxBytes)}`);
  }
  const r = o.maxRedirects;
  if (r !== undefined && (!Number.isSafeInteger(r) || r < 0)) {
    throw new PageFetchError('fetch.options', `maxRedirects must be an integer >= 0, got ${String(r)}`);
  }
}

export async function fetchPage(url: string | URL, options: FetchPageOptions): Promise<PageResult> {
  checkOptions(options);
  const allow = compileAllowlist(options.allow);
  const maxRedirects = options.maxRedirects ?? 5;
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  const fail = (err: unknown, where: string): never => {
    if (err instanceof UrlPolicyError || err instanceof PageFetchError) throw err;
    if (deadline.aborted) throw new PageFetchError('fetch.timeout', `${where}: no complete answer within ${options.timeoutMs} ms`, { cause: err });
    if (options.signal?.aborted) throw new PageFetchError('fetch.aborted', `${where}: cancelled`, { cause: err });
    throw classifyWireError(err, where);
  };

  let target: PinnedTarget;
  try {
    target = await resolvePinnedTarget(url, { lookup: options.lookup, allow, signal });
  } catch (err) {
    return fail(err, auditUrl(typeof url === 'string' ? url : url.href));
  }
  // Credentials in the URL go only to the origin that carried them (never across a redirect).
  const first = basicAuth(target.url);
  let credentials = first ? { origin: target.url.origin, header: first } : null;

  for (let hop = 0; ; hop++) {
    let outcome: HopOutcome;
    try {
      outcome = await oneHop(target, credentials, options, signal, hop);
    } catch (err) {
      return fail(err, target.audit);
    }
    if (outcome.kind === 'page') return outcome.page;

    const next = outcome.next;
    const from = target.audit;
    const to = auditUrl(next);
    if (hop >= maxRedirects) {
      throw new UrlPolicyError('url.too_many_redirects', `${from} redirected more than ${maxRedirects} times (last to ${to}); not followed`);
    }
    if (target.url.protocol === 'https:' && next.protocol === 'http:') {
      throw new UrlPolicyError('url.redirect_forbidden', `${from} redirected to ${to}: a downgrade from https to http is not followed`);
    }
    try {
      target = await resolvePinnedTarget(next, { lookup: options.lookup, allow, signal });
    } catch (err) {
      if (err instanceof UrlPolicyError && REFUSED_ON_REDIRECT.has(err.code)) {
        throw new UrlPolicyError('url.redirect_forbidden', `${from} redirected to a refused place (${err.message})`, { cause: err });
      }
      return fail(err, to);
    }
    const carried = basicAuth(target.url);
    if (carried) credentials = { origin: target.url.origin, header: carried };
  }
}

type HopOutcome = { kind: 'page'; page: PageResult } | { kind: 'redirect'; next: URL };

/** One request on its own pinned Agent, which is destroyed before this returns. */
async function oneHop(
  target: PinnedTarget,
  credentials: { origin: string; header: string } | null,
  options: FetchPageOptions,
  signal: AbortSignal,
  hop: number,
): Promise<HopOutcome> {
  const agent = createPinnedAgent(target, options.ca ? { ca: options.ca } : {});
  try {
    const headers: Record<string, string> = {
      'user-agent': 'isolation-supervisor (web_extract)',
      accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5',
      'accept-encoding': 'identity',
    };
    if (credentials && credentials.origin === target.url.origin) headers.authorization = credentials.header;
    const res = await agent.request({
      origin: target.url.origin,
      path: `${target.url.pathname}${target.url.search}`,
      method: 'GET',
      headers,
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const status = res.statusCode;
    const location = header(res.headers, 'location');
    if (REDIRECTS.has(status) && location) {
      discard(res.body);
      try {
        return { kind: 'redirect', next: new URL(location, target.url) };
      } catch (err) {
        throw new UrlPolicyError('url.redirect_forbidden', `${target.audit} answered ${status} with a Location that does not parse as a URL`, { cause: err });
      }
    }
    const contentType = header(res.headers, 'content-type');
    const { body, truncated } = await readBounded(res.body, header(res.headers, 'content-encoding'), options.maxBytes, target.audit);
    const textual = contentType === '' || TEXTUAL.test(contentType);
    return {
      kind: 'page',
      page: {
        finalUrl: target.audit,
        status,
        contentType,
        text: textual ? decodeText(body, contentType, truncated) : '',
        truncated,
        bytes: body.length,
        redirects: hop,
      },
    };
  } finally {
    await destroyQuietly(agent);
  }
}

/** Drops a body we will not read; undici reports that as an abort error, which is expected here. */
function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

async function destroyQuietly(agent: Agent): Promise<void> {
  try {
    await agent.destroy();
  } catch {
    // Already destroyed or failing: nothing is left to release.
  }
}

function decoderFor(encoding: string, where: string): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch (encoding.trim().toLowerCase()) {
    case '':
    case 'identity':
      return null;
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new PageFetchError('fetch.encoding', `${where}: content-encoding '${encoding.slice(0, 40)}' is not supported (gzip, deflate, br, identity are)`);
  }
}

/** Reads at most maxBytes of decoded body; stops reading (and closes the stream) past that. */
async function readBounded(body: Readable, encoding: string, maxBytes: number, where: string): Promise<{ body: Buffer; truncated: boolean }> {
  let decoder: ReturnType<typeof decoderFor>;
  try {
    decoder = decoderFor(encoding, where);
  } catch (err) {
    discard(body);
    throw err;
  }
  // pipeline destroys both ends on error or early exit; the bound applies to decoded bytes, so a
  // compression bomb stops at maxBytes too.
  const source: AsyncIterable<Buffer> = decoder ? pipeline(body, decoder, () => {}) : body;
  const chunks: Buffer[] = [];
  let total = 0;
  let truncated = false;
  for await (const chunk of source) {
    const room = maxBytes - total;
    if (chunk.length > room) {
      if (room > 0) chunks.push(chunk.subarray(0, room));
      total += Math.max(room, 0);
      truncated = true;
      break;
    }
    chunks.push(chunk);
    total += chunk.length;
  }
  if (truncated) discard(body);
  return { body: Buffer.concat(chunks, total), truncated };
}

function decodeText(body: Buffer, contentType: string, truncated: boolean): string {
  const label = /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  // A cut body may end inside a character; stream mode leaves that partial character out.
  return decoder.decode(body, { stream: truncated });
}

const TLS_CODE = /^(?:ERR_TLS_|ERR_SSL_|UNABLE_TO_|CERT_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH)/;
const CONNECT_CODE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET']);

function classifyWireError(err: unknown, where: string): PageFetchError {
  const code = String((err as { code?: unknown })?.code ?? '');
  if (TLS_CODE.test(code)) {
    return new PageFetchError('fetch.tls_failed', `${where}: TLS failed (${code}); the server's certificate is not valid for this name or not trusted`, { cause: err });
  }
  if (CONNECT_CODE.has(code)) return new PageFetchError('fetch.connect_failed', `${where}: connection failed (${code})`, { cause: err });
  return new PageFetchError('fetch.failed', `${where}: request failed${code ? ` (${code})` : ''}`, { cause: err });
}
