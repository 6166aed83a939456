// A worker thread of the trusted tool host (piscina runs this module): one call per task, the
// same `ctx` and frames as the process host. Log and progress lines go to the host's main thread
// over a BroadcastChannel; the reply says how many went, so the host forwards them first.
// Child-side: imports only src/ipc/** and message types.
import { BroadcastChannel, workerData } from 'node:worker_threads';
import type { FromHostMessage } from '../../../ipc/index.js';
import { runHandler, toolCall, type ToolCall } from './tool-call.js';
import type { ThreadTask, ThreadTaskResult, ThreadWorkerData } from './thread-host-types.js';

const data = workerData as ThreadWorkerData;
const relay = new BroadcastChannel(data.relay);
const live = new Map<string, ToolCall>();
relay.onmessage = (e: unknown) => {
  const m = (e as { data?: { type?: unknown; id?: unknown } }).data;
  if (m?.type === 'cancel' && typeof m.id === 'string') live.get(m.id)?.cancel();
};

export default async function runTask(task: ThreadTask): Promise<ThreadTaskResult> {
  let relayed = 0;
  const call = toolCall(task, (frame: FromHostMessage) => {
    relayed++;
    relay.postMessage(frame);
  });
  live.set(task.id, call);
  try {
    const reply = await runHandler(task, call.ctx, data.maxResultBytes);
    return { reply, relayed };
  } finally {
    call.end();
    live.delete(task.id);
  }
}
