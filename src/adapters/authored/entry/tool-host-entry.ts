// The authored-tool host: a child process run under Node's permission model. It speaks the
// channel on its data pipe, imports a tool's module only when a call for it arrives (after the
// supervisor checked capability and approval), runs one call at a time, and after each call says
// what the tool left running. Child-side: imports only src/ipc/** and message types.
import { Socket } from 'node:net';
import { getHeapStatistics } from 'node:v8';
import {
  Channel,
  IpcError,
  TOOL_HOST_CHANNEL_FD_ENV,
  TOOL_HOST_PROTOCOL,
  ToHostSchema,
  type CallMessage,
  type FromHostMessage,
  type ToHostMessage,
} from '../../../ipc/index.js';
import { hostFlag, runHandler, toolCall, type ToolCall } from './tool-call.js';

const maxFrameBytes = hostFlag('max-frame-bytes', 1024 * 1024);
const maxResultBytes = hostFlag('max-result-bytes', 256 * 1024);

function countResources(): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

/** Requests in flight for a moment that the host itself causes (the import closing the module file). */
const OWN_TRANSIENT = new Set(['CloseReq']);
let baseline = new Map<string, number>();
let current: { id: string; call: ToolCall } | null = null;

const fd = Number(process.env[TOOL_HOST_CHANNEL_FD_ENV] ?? '3');
const socket = new Socket({ fd, readable: true, writable: true });
const channel: Channel<ToHostMessage, FromHostMessage> = new Channel(socket, {
  incoming: ToHostSchema,
  maxFrameBytes,
  onMessage: (m) => onMessage(m),
  // The supervisor broke the protocol or went away: nothing is left to serve.
  onError: (e: IpcError) => {
    process.exitCode = e.code === 'IPC_CLOSED' ? 0 : 70;
    process.exit();
  },
});
channel.send({ type: 'hello', protocol: TOOL_HOST_PROTOCOL, pid: process.pid });
// Measured once the channel is up: what a host with nothing to do keeps alive.
setImmediate(() => (baseline = countResources()));

function onMessage(m: ToHostMessage): void {
  switch (m.type) {
    case 'call':
      if (current) {
        channel.fail(new IpcError('IPC_UNEXPECTED', 'a call arrived while another was running'));
        return;
      }
      void run(m);
      return;
    case 'cancel':
      if (current?.id === m.id) current.call.cancel();
      return;
    case 'shutdown':
      channel.close();
      process.exit(0);
  }
}

async function run(m: CallMessage): Promise<void> {
  const call = toolCall(m, (frame) => channel.send(frame));
  current = { id: m.id, call };
  const reply = await runHandler(m, call.ctx, maxResultBytes);
  call.end();
  current = null;
  // Measured at once and sent with the reply in one write, so the worker is free again by the
  // time the caller has its answer.
  const left: string[] = [];
  for (const [k, n] of countResources()) if (!OWN_TRANSIENT.has(k)) for (let i = baseline.get(k) ?? 0; i < n; i++) left.push(k);
  // Cheap figures (µs, not the /proc read of process.memoryUsage): the heap now, the RSS peak.
  const heapUsed = getHeapStatistics().used_heap_size;
  const rss = process.resourceUsage().maxRSS * 1024;
  channel.send(reply, { type: 'idle', id: m.id, resources: left.slice(0, 256), heapUsed, rss });
}
