// A worker thread of the trusted tool host: one call at a time, the same `ctx` and frames as the
// process host. Its log and progress lines, a leak report and the reply go to the host's main
// thread on this thread's own port, in order, so the main thread forwards them as they come.
// After each call it says what the call left running on this thread's event loop (timers,
// sockets, servers, child handles, pending file operations) beyond the thread's own idle
// handles; the main thread then ends the thread. Child-side: imports only src/ipc/** and message types.
import { getHeapStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { runHandler, toolCall, type ToolCall } from './tool-call.js';
import type { FromThreadMessage, ThreadWorkerData, ToThreadMessage } from './thread-host-types.js';

const data = workerData as ThreadWorkerData;
const port = parentPort!;
const post = (m: FromThreadMessage): void => port.postMessage(m);

/** Requests in flight for a moment that the thread itself causes (the import closing the module file). */
const OWN_TRANSIENT = new Set(['CloseReq']);
/** What this thread keeps alive with nothing to do (its port), counted at its first call. */
let baseline: Map<string, number> | null = null;
let live: { id: string; call: ToolCall } | null = null;

function countResources(): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

function leftRunning(base: Map<string, number>): string[] {
  const left: string[] = [];
  for (const [k, n] of countResources()) if (!OWN_TRANSIENT.has(k)) for (let i = base.get(k) ?? 0; i < n; i++) left.push(k);
  return left;
}

port.on('message', (m: ToThreadMessage) => {
  if (m.type === 'cancel') {
    if (live?.id === m.id) live.call.cancel();
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
  // Measured at once (~0.4 µs): anything beyond the baseline is work the tool left running. A
  // handle the tool closed is listed until the loop's close phase has run, so a suspect gets two
  // turns of the loop to go (a tool that closed its server before returning is not a leak).
  let left = leftRunning(baseline);
  for (let turn = 0; turn < 2 && left.length > 0; turn++) {
    await new Promise((resolve) => setImmediate(resolve));
    left = leftRunning(baseline);
  }
  if (left.length > 0) {
    post({ type: 'idle', id: task.id, resources: left.slice(0, 256), heapUsed: getHeapStatistics().used_heap_size, rss: process.resourceUsage().maxRSS * 1024 });
  }
  post(reply);
}
