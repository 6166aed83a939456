// What both providers share: their settings, their transport, and reading a response body in
// either of the two forms (an event stream or one JSON document), with format errors typed.
import type { ProviderError } from './errors.js';
import type { ProviderSettings } from './settings.js';
import { readSse, SseFormatError, type SseEvent } from './sse.js';
import type { ProviderTransport, ResponseData } from './transport.js';

export interface ProviderContext {
  settings: ProviderSettings;
  transport: ProviderTransport;
}

type Fail = (code: ProviderError['code'], detail: string) => ProviderError;

const MAX_JSON_BYTES = 64 * 1024 * 1024;

/** The response's server-sent events; a format error becomes provider.bad_stream. */
export async function* streamEvents(res: ResponseData, fail: Fail): AsyncGenerator<SseEvent> {
  try {
    for await (const ev of readSse(res.body)) yield ev;
  } catch (err) {
    if (err instanceof SseFormatError) throw fail('provider.bad_stream', `the event stream is malformed: ${err.message}`);
    throw err;
  }
}

/** One JSON object as the whole body (bounded). */
export async function readJsonBody(res: ResponseData, fail: Fail): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of res.body) {
    const b = Buffer.from(c as Uint8Array);
    n += b.length;
    if (n > MAX_JSON_BYTES) throw fail('provider.bad_stream', `the response exceeds ${MAX_JSON_BYTES} bytes`);
    chunks.push(b);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    const ct = String(res.headers['content-type'] ?? 'none');
    throw fail('provider.bad_stream', `the response is neither an event stream nor JSON (content-type ${ct}, ${n} bytes); check model.base_url`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail('provider.bad_stream', 'the response is not a JSON object');
  return v as Record<string, unknown>;
}
