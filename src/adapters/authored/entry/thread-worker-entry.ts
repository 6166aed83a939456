// A worker thread of the trusted tool host: one call at a time, the same `ctx` and frames as the
// process host. Its log and progress lines, a leak report and the reply go to the host's main
// thread on this thread's own port, in order, so the main thread forwards them as they come.
// After each call it says what the call left running on this thread's event loop (timers,
// sockets, servers, child handles, pending file operations) beyond the thread's own idle
// handles; the main thread then ends the thread. Child-side: imports only src/ipc/** and message types.
import { parentPort, workerData } from 'node:worker_threads';
import { countResources, leftRunning, memoryFigures } from './host-io.js';
import { runHandler, toolCall, type ToolCall } from './tool-call.js';
import type { FromThreadMessage, ThreadWorkerData, ToThreadMessage } from './thread-host-types.js';

const data = workerData as ThreadWorkerData;
const port = parentPort!;
const post = (m: FromThreadMessage): void => port.postMessage(m);

/** What this thread keeps alive with nothing to do (its port), counted at its first call. */
let baseline: Map<string, number> | null = null;
let live: { id: string; call: ToolCall } | null = null;

port.on('message', (m: ToThreadMessage) => {
  if (m.type === 'cancel') {
    if (live?.id === m.id) live.call.cancel();
    return;
  }
  if (m.type === 'spawned') {
    if (live?.id === m.id) live.call.deliver(m);
    return;
  }
  void run(m);
});
post({ type: 'ready' });

async function run(task: Extract<ToThreadMessage, { type: 'call' }>): Promise<void> {
  baseline ??= countResources();
  const call = toolCall(task, post);
  live = { id: task.id, call };
  const reply = await runHandler(task, call.ctx, data.maxResultBytes);
  call.end();
  live = null;
  // Anything beyond the baseline is work the tool left running.
  const left = await leftRunning(baseline);
  if (left.length > 0) post({ type: 'idle', id: task.id, resources: left, ...memoryFigures() });
  post(reply);
}
