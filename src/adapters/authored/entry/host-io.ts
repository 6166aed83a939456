// What both tool hosts do around calls, child-side: the channel on the data pipe (hello first;
// the supervisor's protocol error or going away ends the host), and the after-call report of what
// a call left running and how big the host is. Child-side: imports only src/ipc/** and message types.
import { Socket } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import { Channel, TOOL_HOST_CHANNEL_FD_ENV, TOOL_HOST_PROTOCOL, ToHostSchema, type FromHostMessage, type IpcError, type ToHostMessage } from '../../../ipc/index.js';

/** The framed channel to the supervisor on fd 3 (or SUPERVISOR_CHANNEL_FD); says hello at once. */
export function openHostChannel(maxFrameBytes: number, onMessage: (m: ToHostMessage) => void): Channel<ToHostMessage, FromHostMessage> {
  const fd = Number(process.env[TOOL_HOST_CHANNEL_FD_ENV] ?? '3');
  const socket = new Socket({ fd, readable: true, writable: true });
  const channel: Channel<ToHostMessage, FromHostMessage> = new Channel(socket, {
    incoming: ToHostSchema,
    maxFrameBytes,
    onMessage,
    // The supervisor broke the protocol or went away: nothing is left to serve.
    onError: (e: IpcError) => {
      process.exitCode = e.code === 'IPC_CLOSED' ? 0 : 70;
      process.exit();
    },
  });
  return channel;
}

/** Sends the hello (after the host's own set-up, so the supervisor's first call finds it ready). */
export function sayHello(channel: Channel<ToHostMessage, FromHostMessage>): void {
  channel.send({ type: 'hello', protocol: TOOL_HOST_PROTOCOL, pid: process.pid });
}

/** Requests in flight for a moment that the host itself causes (the import closing the module file). */
const OWN_TRANSIENT = new Set(['CloseReq']);

/** Active resources of this thread's event loop, by kind (process.getActiveResourcesInfo is per thread). */
export function countResources(): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

function leftBeyond(base: ReadonlyMap<string, number>): string[] {
  const left: string[] = [];
  for (const [k, n] of countResources()) if (!OWN_TRANSIENT.has(k)) for (let i = base.get(k) ?? 0; i < n; i++) left.push(k);
  return left;
}

/**
 * What a call left running beyond `base` (at most 256 kinds). Measured at once (~0.4 µs); a
 * handle the tool closed stays listed until the loop's close phase has run, so a suspect gets two
 * turns of the loop to go (a tool that closed its server before returning is not a leak).
 */
export async function leftRunning(base: ReadonlyMap<string, number>): Promise<string[]> {
  let left = leftBeyond(base);
  for (let turn = 0; turn < 2 && left.length > 0; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    left = leftBeyond(base);
  }
  return left.slice(0, 256);
}

/** Cheap figures (µs, not the /proc read of process.memoryUsage): the heap now, the RSS peak. */
export function memoryFigures(): { heapUsed: number; rss: number } {
  return { heapUsed: getHeapStatistics().used_heap_size, rss: process.resourceUsage().maxRSS * 1024 };
}
