// One pipe read by libuv straight into the supervisor's own buffers (a Socket with `onread`,
// decision 117) instead of through Node's stream, which reads 64 KiB at a time into a fresh buffer
// and costs a round through the stream machinery per read. A producer that fills its buffer is read
// 1 MiB at a time into a small ring of reused buffers. A read handed on by reference is *lent*: its
// buffer is read into again only after the consumer released it (its bytes are in the artifact), so
// bytes the redactor passed are never overwritten while they wait to be written. The buffer being
// read into is never a lent one: with every other buffer lent, reading waits for a release.
import { Socket, type SocketConstructorOpts } from 'node:net';

/** The first buffer: enough for a producer that prints now and then, small for a tree that idles (two per tree). */
const FIRST_BYTES = 16 * 1024;
/** Once a read fills its buffer the producer is fast: its reads take up to this much. */
const FAST_BYTES = 1024 * 1024;
/**
 * Buffers per pipe at most, the one being read into included. With all the others lent the pipe
 * waits (the producer fills it meanwhile) until one is released: a fresh 1 MiB buffer per read
 * costs more than the read (decision 77).
 */
const MAX_BUFFERS = 4;
/** A shorter read is copied out, its buffer read into again at once: lending it would hold 1 MiB for a line. */
const LEND_MIN = 32 * 1024;
/**
 * After a short read from a producer that once filled a buffer, or of at least SETTLE_MIN bytes,
 * the pipe is read again only after this long: the producer catches up with the reader, and
 * without the wait every write it makes (8 KiB for head or cat) wakes the loop for one callback,
 * one redaction pass, one capture step, and the 16 KiB buffer is never filled, so never outgrown.
 */
const SETTLE_MS = 1;
/** Smaller reads from a pipe not yet fast are a program printing now and then: no wait (the drain gathers those). */
const SETTLE_MIN = 4096;

/**
 * A copy of `buf` in memory of its own: what a consumer keeps of a lent chunk. allocUnsafe + copy
 * (a memcpy): Buffer.from(buf) took up to 4x as long for an 8 KiB read here.
 */
export function copyOf(buf: Buffer): Buffer {
  const copy = Buffer.allocUnsafe(buf.length);
  buf.copy(copy);
  return copy;
}

/**
 * Takes one read. `release` is given when `chunk` is a view of a lent buffer: call it once nothing
 * refers to the chunk any more. Returns false to stop reading until resume().
 */
export type ChunkSink = (chunk: Buffer, release: (() => void) | undefined) => boolean;

export class PipeReader {
  /** The pipe; its stream side yields no data, but 'close' and 'error' are the stream's. */
  readonly socket: Socket;
  private sink: ChunkSink | null = null;
  /** The buffer the next read lands in; never lent while armed. */
  private armed: Buffer = Buffer.allocUnsafe(FIRST_BYTES);
  /** Buffers of the current size that nothing refers to. */
  private spare: Buffer[] = [];
  private allocated = 1;
  private size = FIRST_BYTES;
  private closed = false;
  /** The sink asked for no more (until resume()). */
  private held = false;
  /** Every buffer but the armed one is lent: no read until one is released. */
  private starved = false;
  /** The wait after a short read (SETTLE_MS). */
  private settling: NodeJS.Timeout | undefined;

  /** Takes over `fd` (a pipe's read end); nothing is read before start(). */
  constructor(fd: number) {
    // `onread` and `manualStart` are Socket options Node documents for connect() but @types/node
    // leaves out of the constructor's type.
    const options = {
      fd,
      readable: true,
      writable: false,
      manualStart: true,
      onread: { buffer: () => this.armed, callback: (n: number) => this.take(n) },
    };
    this.socket = new Socket(options as SocketConstructorOpts);
    this.socket.once('close', () => {
      this.closed = true;
      this.spare = [];
      clearTimeout(this.settling);
    });
  }

  /** Starts reading into `sink`. */
  start(sink: ChunkSink): void {
    this.sink = sink;
    this.socket.resume();
  }

  /** Reads again after the sink returned false. */
  resume(): void {
    this.held = false;
    this.wake();
  }

  /** Reads again unless something still holds the reads: the sink, a settle wait, no spare buffer. */
  private wake(): void {
    if (!this.closed && !this.held && !this.starved && this.settling === undefined) this.socket.resume();
  }

  /** One read of `n` bytes into the armed buffer; false stops reading. */
  private take(n: number): boolean {
    const buf = this.armed;
    // A full buffer means more was waiting: read the rest in larger pieces from now on.
    if (n === buf.length && this.size < FAST_BYTES) this.size = FAST_BYTES;
    const outgrown = buf.length < this.size;
    const next = n >= LEND_MIN || outgrown ? this.spareBuffer() : null;
    let more: boolean;
    if (next !== null && n >= LEND_MIN) {
      this.armed = next;
      more = this.sink!(buf.subarray(0, n), this.lend(buf));
    } else {
      if (next !== null) {
        // The first, small buffer is outgrown: its bytes are copied and it is let go.
        this.armed = next;
        this.allocated--;
      }
      more = this.sink!(copyOf(buf.subarray(0, n)), undefined);
    }
    if (!more) this.held = true;
    if (this.spare.length === 0 && this.allocated >= MAX_BUFFERS) this.starved = true;
    if (this.held || this.starved) return false;
    if (n < LEND_MIN && (this.size === FAST_BYTES || n >= SETTLE_MIN)) {
      this.settle();
      return false;
    }
    return true;
  }

  private settle(): void {
    this.settling = setTimeout(() => {
      this.settling = undefined;
      this.wake();
    }, SETTLE_MS);
  }

  private spareBuffer(): Buffer | null {
    const b = this.spare.pop();
    if (b !== undefined) return b;
    if (this.allocated >= MAX_BUFFERS) return null;
    this.allocated++;
    return Buffer.allocUnsafe(this.size);
  }

  /** The release of one loan; a second call does nothing (two loans of one buffer would mix reads). */
  private lend(buf: Buffer): () => void {
    let out = true;
    return () => {
      if (!out) return;
      out = false;
      // A buffer of an outgrown size is left to the collector, as are all once the pipe closed.
      if (!this.closed && buf.length === this.size) this.spare.push(buf);
      else this.allocated--;
      if (this.starved) {
        this.starved = false;
        this.wake();
      }
    };
  }
}
