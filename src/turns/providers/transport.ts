// The HTTP side of a provider: one private undici Agent per provider (never the global dispatcher,
// never a proxy agent), POST with bounded retries, and errors that say what to fix. Retries happen
// only before a response is accepted: once a stream has started, text may already be on screen,
// and a second answer would not be the same answer.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request, type Dispatcher } from 'undici';
import { redactText } from '../../redaction/index.js';
import { ProviderError, type ProviderErrorCode } from './errors.js';
import { DEFAULT_RETRY, retryAfterMs, type RetryTiming } from './retry-timing.js';
import type { ProviderSettings } from './settings.js';


/** Statuses worth a second try: rate limits, overload and server errors (Anthropic's 529 included). */
const RETRY_STATUS = (s: number): boolean => s === 408 || s === 409 || s === 429 || s >= 500;
/** Connection failures worth a second try: the server restarted, dropped us, or was slow to answer. */
const RETRY_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CLOSED']);
const ERROR_BODY_BYTES = 8 * 1024;

export type ResponseData = Dispatcher.ResponseData;

export interface TransportOptions {
  settings: ProviderSettings;
  /** Request headers, the key's included; called for every attempt so a rotated key is picked up. */
  headers(): Promise<Record<string, string>>;
  /** The key's values resolved so far, for redacting a server's error text. */
  secretValues(): Buffer[];
  /** Where the key lives ("env OPENAI_KEY_SOURCE"), for the auth error. */
  keyWhere(): string | null;
  retry?: Partial<RetryTiming>;
}

export class ProviderTransport {
  readonly #agent: Agent;
  readonly #retry: RetryTiming;

  constructor(private readonly o: TransportOptions) {
    const ms = o.settings.options.timeout_seconds * 1000;
    // A private Agent: HTTP(S)_PROXY and a global dispatcher set by anything else cannot move the
    // request (or the key) elsewhere. No redirects are followed (undici's request never does).
    this.#agent = new Agent({ connect: { timeout: ms }, headersTimeout: ms, bodyTimeout: ms });
    this.#retry = { ...DEFAULT_RETRY, ...o.retry };
  }

  get where(): { provider: string; host: string } {
    return { provider: this.o.settings.provider, host: this.o.settings.host };
  }

  /**
   * POSTs `body` as JSON until an attempt gets a 2xx, then hands the response to `consume` (which
   * reads it whole). Throws ProviderError; `signal` aborts the request and any wait between attempts.
   */
  async post<T>(body: unknown, signal: AbortSignal | undefined, consume: (res: ResponseData, attempts: number) => Promise<T>): Promise<T> {
    const { settings } = this.o;
    const payload = JSON.stringify(body);
    const max = settings.options.max_attempts;
    let last = '';
    let lastStatus: number | null = null;
    for (let attempt = 1; attempt <= max; attempt++) {
      this.checkCancelled(signal, attempt - 1);
      let res: ResponseData;
      try {
        res = await request(settings.endpoint, {
          method: 'POST',
          dispatcher: this.#agent,
          headers: { 'content-type': 'application/json', ...(await this.o.headers()) },
          body: payload,
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        this.checkCancelled(signal, attempt);
        const code = errorCode(err);
        if (code === 'ENOTFOUND') throw this.error('provider.unavailable', `cannot resolve ${settings.host}; check model.base_url`, null, attempt);
        if (!RETRY_CODES.has(code)) throw this.error('provider.unavailable', `the request failed (${code || 'unknown error'}); check model.base_url`, null, attempt);
        last = describeCode(code, settings.options.timeout_seconds);
        lastStatus = null;
        if (attempt < max) await this.wait(this.backoff(attempt), signal, attempt);
        continue;
      }
      if (res.statusCode >= 200 && res.statusCode < 300) return await this.consumeOrCut(res, signal, attempt, consume);
      const text = await boundedText(res.body);
      lastStatus = res.statusCode;
      if (res.statusCode === 401 || res.statusCode === 403) throw this.authError(res.statusCode, attempt);
      if (res.statusCode >= 300 && res.statusCode < 400) {
        const to = locationHost(res.headers.location);
        throw this.error('provider.request', `the endpoint answered ${res.statusCode}, a redirect${to ? ` to ${to}` : ''}; redirects are not followed (the key would travel with them): set model.base_url to the final URL`, res.statusCode, attempt);
      }
      const message = this.serverMessage(text);
      if (!RETRY_STATUS(res.statusCode)) {
        if (isContextExceeded(text)) throw this.error('provider.context_exceeded', `the conversation no longer fits the model's context window (${res.statusCode}${message ? `: ${message}` : ''}); start a new session or use a model with a larger window`, res.statusCode, attempt);
        throw this.error('provider.request', `the endpoint refused the request with ${res.statusCode}${message ? `: ${message}` : ''}; check model.model, model.base_url and model.options`, res.statusCode, attempt);
      }
      last = `${res.statusCode}${message ? ` (${message})` : ''}`;
      if (attempt === max) break;
      const asked = retryAfterMs(res.headers);
      if (asked !== null && asked > this.#retry.maxRetryAfterMs) {
        throw this.error('provider.unavailable', `answered ${last} and asks to wait ${Math.ceil(asked / 1000)} s, longer than the ${this.#retry.maxRetryAfterMs / 1000} s the supervisor waits; try again later`, res.statusCode, attempt);
      }
      await this.wait(asked ?? this.backoff(attempt), signal, attempt);
    }
    throw this.error('provider.unavailable', `still failing after ${max} attempt(s); the last: ${last}. Try again later, or raise model.options.max_attempts`, lastStatus, max);
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** Reads the accepted response; a broken connection or a silent server is a cut stream, an abort a cancel. */
  private async consumeOrCut<T>(res: ResponseData, signal: AbortSignal | undefined, attempt: number, consume: (res: ResponseData, attempts: number) => Promise<T>): Promise<T> {
    try {
      return await consume(res, attempt);
    } catch (err) {
      this.checkCancelled(signal, attempt);
      if (err instanceof ProviderError) throw err;
      const code = errorCode(err);
      const why = code === 'UND_ERR_BODY_TIMEOUT' ? `the stream was silent for ${this.o.settings.options.timeout_seconds} s` : `the connection broke (${code || 'unknown error'})`;
      throw this.error('provider.stream_cut', `${why} before the model's turn was complete; run the turn again`, res.statusCode, attempt);
    } finally {
      // Whatever consume did not read is dropped, so the connection is not left half-read.
      if (!res.body.destroyed) res.body.destroy();
    }
  }

  /** Exponential backoff with equal jitter: half the step fixed, half random, so retries spread out. */
  private backoff(attempt: number): number {
    const step = Math.min(this.#retry.maxDelayMs, this.#retry.baseDelayMs * 2 ** (attempt - 1));
    return step / 2 + Math.random() * (step / 2);
  }

  private async wait(ms: number, signal: AbortSignal | undefined, attempts: number): Promise<void> {
    try {
      await sleep(ms, undefined, signal ? { signal } : {});
    } catch {
      this.checkCancelled(signal, attempts);
    }
  }

  private checkCancelled(signal: AbortSignal | undefined, attempts: number): void {
    if (signal?.aborted) throw this.error('provider.cancelled', 'the turn was cancelled; the request was aborted', null, attempts);
  }

  private authError(status: number, attempts: number): ProviderError {
    // The server's body is left out: some servers echo (part of) the key they refused.
    const secret = this.o.settings.keySecret;
    const fix =
      secret === null
        ? 'no key is configured: add api_key: { secret: NAME } to model in agent.yaml and declare NAME under secrets:'
        : `the key from secret ${secret}${this.o.keyWhere() ? ` (${this.o.keyWhere()})` : ''} was refused; check that value, and that it may use model ${this.o.settings.model}`;
    return this.error('provider.auth', `${status} ${status === 401 ? 'Unauthorized' : 'Forbidden'}: ${fix}`, status, attempts);
  }

  error(code: ProviderErrorCode, detail: string, status: number | null, attempts: number): ProviderError {
    return new ProviderError(code, { ...this.where, status, attempts }, detail);
  }

  /** A server's error text, bounded, on one line, with the key (in any encoding) removed. */
  serverMessage(text: string): string {
    let msg = text;
    try {
      const j = JSON.parse(text) as { error?: { message?: unknown; type?: unknown } | string; message?: unknown };
      const m = typeof j.error === 'string' ? j.error : (j.error?.message ?? j.message);
      const type = typeof j.error === 'object' && typeof j.error?.type === 'string' ? `${j.error.type}: ` : '';
      if (typeof m === 'string') msg = type + m;
    } catch {
      // not JSON: the text itself
    }
    msg = msg.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
    if (msg.length > 300) msg = `${msg.slice(0, 300)}…`;
    const secrets = this.o.secretValues();
    if (secrets.length === 0) return msg;
    try {
      return redactText(msg, secrets);
    } catch {
      return '(the server\'s message could not be redacted and is left out)';
    }
  }
}

function errorCode(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : '';
}

function describeCode(code: string, timeoutS: number): string {
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return `no response within ${timeoutS} s`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return `could not connect within ${timeoutS} s`;
  if (code === 'ECONNREFUSED') return 'connection refused (is the server running?)';
  return `connection failed (${code})`;
}

function isContextExceeded(text: string): boolean {
  return /context_length_exceeded|context length|context window|prompt is too long|too many tokens|maximum context/i.test(text);
}

function locationHost(loc: string | string[] | undefined): string | null {
  const v = Array.isArray(loc) ? loc[0] : loc;
  if (!v) return null;
  try {
    return new URL(v).host || null;
  } catch {
    return null;
  }
}

async function boundedText(body: ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  try {
    for await (const c of body) {
      const b = Buffer.from(c as Uint8Array);
      chunks.push(b);
      n += b.length;
      if (n >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // a body that breaks while we read an error is still an error; what we have is enough
  } finally {
    if (!body.destroyed) body.destroy();
  }
  return Buffer.concat(chunks).subarray(0, ERROR_BODY_BYTES).toString('utf8');
}
