// The page's credentials. The printed URL carries a one-time launch token in its fragment (never
// sent to a server, never in a log or a Referer); the page's script exchanges it, once, for an
// HttpOnly SameSite=Strict session cookie and a CSRF token that only the script holds. All three
// live in this process's memory only: they die with `supervisor web`.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { cookieValue, csrfHeader, GateRefusal, sameSecret } from './request-gate.js';

const secret = (): string => randomBytes(32).toString('base64url');

export interface WebSession {
  cookie: string;
  csrf: string;
}

export class WebAuth {
  private launchToken: string | null = secret();
  private session: WebSession | null = null;

  /** The cookie's name carries the port: cookies ignore ports, so two pages must not clobber each other's. */
  constructor(readonly cookieName: string) {}

  /** The token for the printed URL; null once exchanged. */
  get token(): string | null {
    return this.launchToken;
  }

  /** The one exchange: a replayed or wrong token is refused, and nothing is issued. */
  exchange(token: unknown): WebSession {
    if (typeof token !== 'string' || this.launchToken === null || !sameSecret(token, this.launchToken)) {
      throw new GateRefusal(this.launchToken === null ? 'the one-time token was already exchanged' : 'a wrong one-time token');
    }
    this.launchToken = null;
    this.session = { cookie: secret(), csrf: secret() };
    return this.session;
  }

  /** `Set-Cookie` for the session: HttpOnly (the script never reads it), SameSite=Strict, this path only. */
  setCookie(s: WebSession): string {
    return `${this.cookieName}=${s.cookie}; HttpOnly; SameSite=Strict; Path=/`;
  }

  /** A request of the page: its session cookie (reads over SSE, which cannot send headers, stop here). */
  checkCookie(req: IncomingMessage): void {
    const c = cookieValue(req, this.cookieName);
    if (this.session === null || c === undefined || !sameSecret(c, this.session.cookie)) throw new GateRefusal('no valid session cookie');
  }

  /** A request of the page's script: the cookie and the CSRF header. */
  checkScript(req: IncomingMessage): void {
    this.checkCookie(req);
    const t = csrfHeader(req);
    if (t === undefined || !sameSecret(t, this.session!.csrf)) throw new GateRefusal('a missing or wrong CSRF token');
  }
}
