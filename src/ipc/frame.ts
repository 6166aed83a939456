// Frames: a 4-byte big-endian length, then that many bytes of UTF-8 JSON. The decoder checks the
// length against the cap before it buffers a byte of the payload, so a hostile peer cannot make
// the other side allocate more than one cap's worth.
import { IpcError } from './errors.js';

export const DEFAULT_MAX_FRAME_BYTES = 1024 * 1024;
const HEADER = 4;

export function encodeFrame(message: unknown, maxFrameBytes = DEFAULT_MAX_FRAME_BYTES): Buffer {
  const json = JSON.stringify(message);
  if (json === undefined) throw new IpcError('IPC_MALFORMED', 'the message is not JSON-serializable (undefined); send a plain object');
  const len = Buffer.byteLength(json, 'utf8');
  if (len > maxFrameBytes) {
    throw new IpcError('IPC_FRAME_TOO_LARGE', `an outgoing frame of ${len} bytes exceeds the cap of ${maxFrameBytes} bytes; send less per message`);
  }
  const buf = Buffer.allocUnsafe(HEADER + len);
  buf.writeUInt32BE(len, 0);
  buf.write(json, HEADER, 'utf8');
  return buf;
}

/** Streaming decoder: push chunks, get whole payloads parsed as JSON. Throws IpcError; after that it is spent. */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private need = -1; // payload length of the frame in progress, -1 while reading a header
  private failed: IpcError | null = null;

  constructor(private readonly maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  push(chunk: Buffer): unknown[] {
    if (this.failed) throw this.failed;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const out: unknown[] = [];
    try {
      for (;;) {
        if (this.need < 0) {
          if (this.buffered < HEADER) break;
          const len = this.take(HEADER).readUInt32BE(0);
          if (len > this.maxFrameBytes) {
            throw new IpcError('IPC_FRAME_TOO_LARGE', `a frame announced ${len} bytes, over the cap of ${this.maxFrameBytes} bytes`);
          }
          this.need = len;
        }
        if (this.buffered < this.need) break;
        const payload = this.take(this.need);
        this.need = -1;
        out.push(parsePayload(payload));
      }
    } catch (err) {
      this.failed = err as IpcError;
      this.chunks = [];
      this.buffered = 0;
      throw err;
    }
    return out;
  }

  /** Bytes held for an unfinished frame (at most one header plus one cap). */
  get pending(): number {
    return this.buffered;
  }

  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) {
      // The common case: the whole piece is in the first chunk, no copy.
      const piece = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
      this.buffered -= n;
      return piece;
    }
    const all = Buffer.concat(this.chunks, this.buffered);
    const piece = all.subarray(0, n);
    this.chunks = all.length > n ? [all.subarray(n)] : [];
    this.buffered -= n;
    return piece;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function parsePayload(payload: Buffer): unknown {
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    throw new IpcError('IPC_MALFORMED', `a frame of ${payload.length} bytes is not valid UTF-8`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new IpcError('IPC_MALFORMED', `a frame of ${payload.length} bytes is not JSON (${(err as Error).message.slice(0, 120)})`);
  }
}
