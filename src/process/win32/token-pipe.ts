// A Windows leader's stdio pipes: named pipes whose server end Node serves (a net.Server that
// accepts one connection) and whose client end, opened with CreateFileW and inheritable, is the
// child's stdout or stderr (inbound: the child writes) or its stdin (outbound: the supervisor
// writes). The name is random, but any local process may still try to connect to a pipe it can
// see: the supervisor writes a random 16-byte token into the client end before the child exists,
// and only the connection that starts with that token is served; any other is dropped. An outbound
// end is opened for writing only long enough to send the token; the child gets a read-only
// duplicate of it (decisions 87, 107). A data channel (the child's fd 3) is one duplex pipe, its
// child end opened overlapped, as libuv expects of a pipe it opens from an fd (decision 116).
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { Duplex, PassThrough } from 'node:stream';
import { closeHandle } from '../../../native-helpers/kernel32.js';
import { duplicateInheritable, FILE_FLAG_OVERLAPPED, GENERIC_READ, GENERIC_WRITE, openInheritable, writeAll } from '../../../native-helpers/kernel32-spawn.js';

const TOKEN_BYTES = 16;

export interface TokenPipe<S extends Duplex = PassThrough> {
  /** `\\.\pipe\...`: visible to every local process, which is why the token exists. */
  name: string;
  /** The child's end: inheritable; write-only (inbound) or read-only (outbound). The caller closes it once the child has its copy. */
  childEnd: bigint;
  /**
   * Inbound: what the child writes, token removed; outbound: what the supervisor writes to the
   * child (end() is the child's EOF). Destroying it closes the pipe.
   */
  stream: S;
}

/** The child's stdout or stderr. */
export function openInboundPipe(): TokenPipe {
  const { name, token } = newPipeName();
  const stream = serveInboundPipe(name, token);
  return { name, childEnd: openChildEnd(name, token, GENERIC_WRITE, stream), stream };
}

/** The child's stdin. */
export function openOutboundPipe(): TokenPipe {
  const { name, token } = newPipeName();
  const stream = serveOutboundPipe(name, token);
  return { name, childEnd: openChildEnd(name, token, GENERIC_READ, stream), stream };
}

/** A data channel: the child reads and writes its end (fd 3); `stream` is the supervisor's side. */
export function openChannelPipe(): TokenPipe<Duplex> {
  const { name, token } = newPipeName();
  const stream = serveChannelPipe(name, token);
  return { name, childEnd: openChildEnd(name, token, GENERIC_READ | GENERIC_WRITE, stream, FILE_FLAG_OVERLAPPED), stream };
}

function newPipeName(): { name: string; token: Buffer } {
  return { name: `\\\\.\\pipe\\supervisor-${process.pid}-${randomBytes(16).toString('hex')}`, token: randomBytes(TOKEN_BYTES) };
}

/**
 * Connects to `name` (with `flags`: overlapped for the channel), sends the token, and returns an
 * inheritable handle with `access` only: for an outbound pipe a read-only duplicate, so the child
 * cannot write into the supervisor's end.
 */
function openChildEnd(name: string, token: Buffer, access: number, stream: Duplex, flags = 0): bigint {
  let writer = 0n;
  try {
    writer = openInheritable(name, access | GENERIC_WRITE, flags);
    writeAll(writer, token);
    // Opened with exactly `access` already (write-only, or the channel's read and write).
    if ((access & GENERIC_WRITE) !== 0) return writer;
    const reader = duplicateInheritable(writer, access);
    closeHandle(writer);
    return reader;
  } catch (e) {
    if (writer !== 0n) closeHandle(writer);
    stream.destroy();
    throw e;
  }
}

/**
 * Serves the pipe `name` (listening before this returns) and reads the first connection whose
 * first bytes are `token`, without them; the others are dropped. Exported for the test that
 * connects a stranger first.
 */
export function serveInboundPipe(name: string, token: Buffer): PassThrough {
  // As large as a Linux leader's pipe: a fast writer is not held up by the copy into this stream.
  const stream = new PassThrough({ highWaterMark: 64 * 1024 });
  const holder = acceptTokenHolder(name, token, stream, (socket, rest) => {
    if (rest.length > 0) stream.write(rest);
    socket.on('error', (err) => stream.destroy(err));
    socket.pipe(stream);
  });
  // The tree destroys its stdout after the drain: the pipe and any waiting connection go with it.
  stream.on('close', () => {
    holder.stopAccepting();
    holder.dropHolder();
  });
  return stream;
}

/**
 * Serves the pipe `name` and writes what is written to the returned stream into the first
 * connection whose first bytes are `token` (what is written before it connects waits); the others
 * are dropped and get nothing. end() ends the child's stdin once it has read everything (the server
 * end closes then: the child's next read is EOF). When the child has gone (every reader closed its
 * end), further writes are discarded, not errors: that is a tree that stopped reading, as a Linux
 * leader's closed stdin would be. Exported for the test that connects strangers first.
 */
export function serveOutboundPipe(name: string, token: Buffer): PassThrough {
  const stream = new PassThrough({ highWaterMark: 64 * 1024 });
  const discard = (): void => {
    stream.unpipe();
    stream.resume();
  };
  const holder = acceptTokenHolder(name, token, stream, (socket) => {
    // The child never writes (its handle is read-only); reading is how the end of every reader is seen.
    socket.resume();
    socket.on('error', discard);
    socket.on('close', discard);
    // The socket's end() flushes (waits until the child read it all); only the close is its EOF.
    socket.on('finish', () => socket.destroy());
    stream.pipe(socket);
  });
  stream.on('close', () => {
    holder.stopAccepting();
    // Ended: the holder still flushes the last bytes and closes itself. Destroyed: it goes now.
    if (!stream.readableEnded) holder.dropHolder();
  });
  return stream;
}

/**
 * Serves the pipe `name` as a duplex stream: what the token holder writes after its token is read
 * from it, what is written to it goes to the holder (what is written before it connects waits).
 * Strangers are dropped and get nothing. It ends and closes once the holder's end has closed (the
 * child, and every process that inherited the end, exited) and what it wrote has been read, as a
 * socket of Node's spawn() does. Exported for the test that races strangers for it.
 */
export function serveChannelPipe(name: string, token: Buffer): Duplex {
  const channel = new HolderStream();
  const holder = acceptTokenHolder(name, token, channel, (socket, rest) => channel.attach(socket, rest));
  channel.on('close', () => {
    holder.stopAccepting();
    holder.dropHolder();
  });
  return channel;
}

/**
 * A duplex over a socket that connects after the stream is handed out (the token holder's):
 * writes and the end wait for it; reads follow it with its backpressure. Not half-open: the
 * holder's EOF ends the stream both ways, so it closes as a child's pipe socket does.
 */
class HolderStream extends Duplex {
  private socket: Socket | null = null;
  private readonly waiting: Array<() => void> = [];

  constructor() {
    super({ allowHalfOpen: false, highWaterMark: 64 * 1024 });
  }

  attach(socket: Socket, rest: Buffer): void {
    this.socket = socket;
    if (rest.length > 0) this.push(rest);
    socket.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.on('end', () => this.push(null));
    socket.on('error', (err) => this.destroy(err));
    // acceptTokenHolder paused it, and a _read() that came before it was attached asked for nothing:
    // flow now, until push() says the buffer is full.
    socket.resume();
    for (const go of this.waiting.splice(0)) go();
  }

  override _read(): void {
    this.socket?.resume();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    if (this.socket === null) this.waiting.push(() => this._write(chunk, _encoding, done));
    else this.socket.write(chunk, done);
  }

  override _final(done: (err?: Error | null) => void): void {
    if (this.socket === null) this.waiting.push(() => this._final(done));
    // After the holder's EOF the socket may have ended its side itself (it is not half-open either).
    else if (this.socket.writableEnded || this.socket.destroyed) done();
    else this.socket.end(done);
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    this.socket?.destroy();
    done(err);
  }
}

/**
 * Listens on `name` and calls `onHolder` with the first connection whose first bytes are `token`
 * (and what followed them); then stops accepting. Every other connection is destroyed. A server
 * error destroys `stream`. stopAccepting() ends the server and every connection but the holder's;
 * dropHolder() destroys the holder's.
 */
function acceptTokenHolder(name: string, token: Buffer, stream: Duplex, onHolder: (socket: Socket, rest: Buffer) => void): { stopAccepting(): void; dropHolder(): void } {
  const server = createServer();
  const candidates = new Set<Socket>();
  let verified: Socket | null = null;
  const stopAccepting = (): void => {
    if (server.listening) server.close();
    for (const s of candidates) if (s !== verified) s.destroy();
    candidates.clear();
  };
  server.on('error', (err) => stream.destroy(err));
  server.on('connection', (socket) => {
    candidates.add(socket);
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      if (head.length < token.length) return;
      socket.off('data', onData);
      socket.pause();
      if (verified !== null || !timingSafeEqual(head.subarray(0, token.length), token)) {
        candidates.delete(socket);
        socket.destroy();
        return;
      }
      verified = socket;
      stopAccepting();
      onHolder(socket, head.subarray(token.length));
    };
    socket.on('data', onData);
    socket.on('error', () => candidates.delete(socket));
    // A connection that ends before its token is not ours (or ours failed: the stream then never ends, the tree's drain bounds it).
    socket.on('end', () => {
      if (socket !== verified) candidates.delete(socket);
    });
  });
  server.listen(name);
  return { stopAccepting, dropHolder: () => verified?.destroy() };
}
