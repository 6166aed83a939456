// A typed channel over any Duplex (a pipe to a child, or fd 3 inside it): frames in, validated
// messages out. The first protocol error is final: the channel stops reading, reports it once,
// and the owner ends the peer. It knows nothing about calls; ids and the handshake live above it.
import type { Duplex } from 'node:stream';
import type { ZodType, ZodTypeDef } from 'zod';
import { IpcError } from './errors.js';
import { DEFAULT_MAX_FRAME_BYTES, encodeFrame, FrameDecoder } from './frame.js';

export interface ChannelOptions<In> {
  /** Schema of what this side receives. */
  incoming: ZodType<In, ZodTypeDef, unknown>;
  maxFrameBytes?: number;
  onMessage: (message: In) => void;
  /** Called once, with the first protocol error or the close of the pipe. */
  onError: (error: IpcError) => void;
}

export class Channel<In, Out> {
  private readonly decoder: FrameDecoder;
  private readonly maxFrameBytes: number;
  private ended = false;

  constructor(
    private readonly stream: Duplex,
    private readonly o: ChannelOptions<In>,
  ) {
    this.maxFrameBytes = o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES;
    this.decoder = new FrameDecoder(this.maxFrameBytes);
    stream.on('data', this.onData);
    stream.on('error', (err) => this.fail(new IpcError('IPC_CLOSED', `the channel failed: ${err.message}`, { cause: err })));
    stream.on('close', () => this.fail(new IpcError('IPC_CLOSED', 'the channel closed')));
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Writes the messages' frames in one write; false once the channel has failed (they are dropped). */
  send(...messages: Out[]): boolean {
    if (this.ended) return false;
    const frames = messages.map((m) => encodeFrame(m, this.maxFrameBytes));
    this.stream.write(frames.length === 1 ? frames[0]! : Buffer.concat(frames));
    return true;
  }

  /** Stops reading and closes the pipe without reporting an error. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.stream.off('data', this.onData);
    this.stream.destroy();
  }

  private readonly onData = (chunk: Buffer): void => {
    if (this.ended) return;
    let payloads: unknown[];
    try {
      payloads = this.decoder.push(chunk);
    } catch (err) {
      this.fail(err instanceof IpcError ? err : new IpcError('IPC_MALFORMED', String(err)));
      return;
    }
    for (const p of payloads) {
      if (this.ended) return;
      const r = this.o.incoming.safeParse(p);
      if (!r.success) {
        const first = r.error.issues[0];
        const where = first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid';
        this.fail(new IpcError('IPC_MALFORMED', `a frame does not match the protocol (${where.slice(0, 200)})`));
        return;
      }
      this.o.onMessage(r.data);
    }
  };

  /** Ends the channel and reports `error` (once): the owner decides what happens to the peer. */
  fail(error: IpcError): void {
    if (this.ended) return;
    this.ended = true;
    this.stream.off('data', this.onData);
    this.stream.destroy();
    this.o.onError(error);
  }
}
