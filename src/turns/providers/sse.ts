// A server-sent events reader over a response body (the WHATWG event stream format, as both APIs
// send it): `event:` and `data:` fields, events ended by a blank line, comments ignored. Bounded,
// since the body comes from the network: one event and the whole stream have a size limit.
import { StringDecoder } from 'node:string_decoder';

export interface SseEvent {
  event: string;
  data: string;
}

export interface SseLimits {
  maxEventBytes: number;
  maxStreamBytes: number;
}
export const DEFAULT_SSE_LIMITS: SseLimits = { maxEventBytes: 8 * 1024 * 1024, maxStreamBytes: 64 * 1024 * 1024 };

export class SseFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SseFormatError';
  }
}

/**
 * Yields each complete event. An event still open when the body ends is dropped, as the format
 * says; the caller notices the missing end of the turn. Throws SseFormatError past a limit.
 */
export async function* readSse(body: AsyncIterable<Uint8Array | string>, limits: SseLimits = DEFAULT_SSE_LIMITS): AsyncGenerator<SseEvent> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let total = 0;
  let event = '';
  let data: string[] = [];
  let dataBytes = 0;
  let first = true;
  // pending[0..scanned) holds no line break: a long line arriving in many chunks is scanned once.
  let scanned = 0;
  for await (const chunk of body) {
    const bytes = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    total += bytes;
    if (total > limits.maxStreamBytes) throw new SseFormatError(`the stream exceeds ${limits.maxStreamBytes} bytes`);
    pending += typeof chunk === 'string' ? chunk : decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    if (first && pending.length > 0) {
      if (pending.charCodeAt(0) === 0xfeff) pending = pending.slice(1);
      first = false;
    }
    let start = 0;
    for (;;) {
      const nl = nextBreak(pending, Math.max(start, scanned));
      if (nl === null) break;
      const line = pending.slice(start, nl.at);
      start = nl.at + nl.len;
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n') };
        event = '';
        data = [];
        dataBytes = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') {
        dataBytes += Buffer.byteLength(value) + 1;
        if (dataBytes > limits.maxEventBytes) throw new SseFormatError(`one event exceeds ${limits.maxEventBytes} bytes`);
        data.push(value);
      }
    }
    pending = pending.slice(start);
    scanned = Math.max(0, pending.length - 1);
    if (Buffer.byteLength(pending) > limits.maxEventBytes) throw new SseFormatError(`one line exceeds ${limits.maxEventBytes} bytes`);
  }
}

/** The next line break at or after `from`: \r\n, \n or \r. A \r at the very end may be half of \r\n, so it waits. */
function nextBreak(s: string, from: number): { at: number; len: number } | null {
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 10) return { at: i, len: 1 };
    if (c === 13) {
      if (i + 1 === s.length) return null;
      return { at: i, len: s.charCodeAt(i + 1) === 10 ? 2 : 1 };
    }
  }
  return null;
}
