// The authored-tool host: a child process run under Node's permission model. It speaks the
// channel on its data pipe, imports a tool's module only when a call for it arrives (after the
// supervisor checked capability and approval), runs one call at a time, and after each call says
// what the tool left running. Child-side: imports only src/ipc/** and message types.
import { IpcError, type CallMessage, type ToHostMessage } from '../../../ipc/index.js';
import { countResources, leftRunning, memoryFigures, openHostChannel, sayHello } from './host-io.js';
import { hostFlag, runHandler, toolCall, type ToolCall } from './tool-call.js';

const maxFrameBytes = hostFlag('max-frame-bytes', 1024 * 1024);
const maxResultBytes = hostFlag('max-result-bytes', 256 * 1024);

let baseline = new Map<string, number>();
let current: { id: string; call: ToolCall } | null = null;

const channel = openHostChannel(maxFrameBytes, (m) => onMessage(m));
sayHello(channel);
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
    case 'spawned':
      if (current?.id === m.id) current.call.deliver(m);
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
  // Sent with the reply in one write, so the worker is free again by the time the caller has its answer.
  const resources = await leftRunning(baseline);
  channel.send(reply, { type: 'idle', id: m.id, resources, ...memoryFigures() });
}
