// One of a Windows leader's output pipes: a named pipe whose server end Node reads (a net.Server
// that accepts one connection) and whose client end, opened with CreateFileW and inheritable, is
// the child's stdout or stderr. The name is random, but any local process may still try to connect
// to a pipe it can see: the supervisor writes a random 16-byte token into its own end before the
// child exists, and only the connection that starts with that token is read; any other is dropped.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { closeHandle } from '../../../native-helpers/kernel32.js';
import { GENERIC_WRITE, openInheritable, writeAll } from '../../../native-helpers/kernel32-spawn.js';

const TOKEN_BYTES = 16;

export interface InboundPipe {
  /** `\\.\pipe\...`: visible to every local process, which is why the token exists. */
  name: string;
  /** The child's end: inheritable, write-only. The caller closes it once the child has its copy. */
  childEnd: bigint;
  /** What the child writes, token removed; destroying it closes the pipe. */
  stream: PassThrough;
}

export function openInboundPipe(): InboundPipe {
  const name = `\\\\.\\pipe\\supervisor-${process.pid}-${randomBytes(16).toString('hex')}`;
  const token = randomBytes(TOKEN_BYTES);
  const stream = serveTokenPipe(name, token);
  let childEnd = 0n;
  try {
    childEnd = openInheritable(name, GENERIC_WRITE);
    writeAll(childEnd, token);
  } catch (e) {
    if (childEnd !== 0n) closeHandle(childEnd);
    stream.destroy();
    throw e;
  }
  return { name, childEnd, stream };
}

/**
 * Serves the pipe `name` (listening before this returns) and reads the first connection whose
 * first bytes are `token`, without them; the others are dropped. Exported for the test that
 * connects a stranger first.
 */
export function serveTokenPipe(name: string, token: Buffer): PassThrough {
  // As large as a Linux leader's pipe: a fast writer is not held up by the copy into this stream.
  const stream = new PassThrough({ highWaterMark: 64 * 1024 });
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
      if (head.length > token.length) stream.write(head.subarray(token.length));
      socket.on('error', (err) => stream.destroy(err));
      socket.pipe(stream);
    };
    socket.on('data', onData);
    socket.on('error', () => candidates.delete(socket));
    // A connection that ends before its token is not ours (or ours failed: the stream then never ends, the tree's drain bounds it).
    socket.on('end', () => {
      if (socket !== verified) candidates.delete(socket);
    });
  });
  // The tree destroys its stdout after the drain: the pipe and any waiting connection go with it.
  stream.on('close', () => {
    stopAccepting();
    verified?.destroy();
  });
  server.listen(name);
  return stream;
}
