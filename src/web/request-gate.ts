// The checks every request to the operator's page passes before anything reads the store
// (docs/security-model.md, *The web page*). A browser is a confused deputy: any page it shows may
// send requests to 127.0.0.1, with our cookie (cookies ignore ports), by DNS rebinding (a foreign
// name resolving to 127.0.0.1, so a foreign Host), or as a "simple" text/plain POST that needs no
// preflight. So: the Host must be the bound address, a mutation must carry this page's Origin (a
// missing one is refused: the MCP Inspector's mistake), Sec-Fetch-Site same-origin where the
// browser sends it, a JSON content type, and the CSRF token only this page's script holds.
// Nothing here ever answers with CORS headers.
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The header the page's script sends its CSRF token in (a custom header also forces a preflight). */
export const CSRF_HEADER = 'x-supervisor-csrf';

export class GateRefusal extends Error {
  override readonly name = 'GateRefusal';
  constructor(readonly reason: string) {
    super(reason);
  }
}

export interface GateOrigin {
  /** `127.0.0.1:PORT`, what the Host header must be. */
  host: string;
  /** `http://127.0.0.1:PORT`, what the Origin header of a mutation must be. */
  origin: string;
}

/** Equal strings in time independent of where they differ (tokens). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? undefined : v);

/**
 * On a UNIX socket there is no bound address to compare with: a browser reaches the socket through
 * a forward the operator made (`ssh -L 8080:SOCKET`, a local proxy), at a loopback address and a
 * port this server cannot know. The Host must be a loopback literal (`localhost`, `127.0.0.1`,
 * `[::1]`, with or without a port): a rebound DNS name is always a name of the attacker's, so it
 * is still refused. The page's origin is then `http://` + that Host, which a mutation's Origin must
 * equal (decision 95).
 */
export function socketGate(req: IncomingMessage): GateOrigin {
  const host = one(req.headers.host);
  if (host === undefined || !/^(?:localhost|127\.0\.0\.1|\[::1\])(?::[1-9][0-9]{0,4})?$/.test(host)) {
    throw new GateRefusal(`Host ${JSON.stringify(host ?? null)} is not a loopback address (localhost, 127.0.0.1 or [::1], optionally with a port)`);
  }
  return { host, origin: `http://${host}` };
}

/** Every request: the Host is the bound address (a rebound DNS name is refused). */
export function checkHost(req: IncomingMessage, g: GateOrigin): void {
  const host = one(req.headers.host);
  if (host !== g.host) throw new GateRefusal(`Host ${JSON.stringify(host ?? null)} is not ${g.host}`);
}

/** Every API request: a browser that says where the request comes from must say same-origin. */
export function checkFetchSite(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new GateRefusal(`Sec-Fetch-Site ${JSON.stringify(site)} is not same-origin`);
}

/** A mutation: this page's Origin (present), a JSON body. */
export function checkMutation(req: IncomingMessage, g: GateOrigin): void {
  const origin = one(req.headers.origin);
  if (origin === undefined) throw new GateRefusal('a mutating request without an Origin header');
  if (origin !== g.origin) throw new GateRefusal(`Origin ${JSON.stringify(origin)} is not ${g.origin}`);
  checkFetchSite(req);
  const type = (one(req.headers['content-type']) ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new GateRefusal(`Content-Type ${JSON.stringify(req.headers['content-type'] ?? null)} is not application/json`);
}

/** The cookie named `name`, if the request carries exactly one. */
export function cookieValue(req: IncomingMessage, name: string): string | undefined {
  const header = one(req.headers.cookie);
  if (!header) return undefined;
  const found = header
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p.startsWith(`${name}=`))
    .map((p) => p.slice(name.length + 1));
  return found.length === 1 ? found[0] : undefined;
}

/** The CSRF header, if present once. */
export function csrfHeader(req: IncomingMessage): string | undefined {
  return one(req.headers[CSRF_HEADER]);
}
