// The trusted tool host (thread tier): one child process of the supervisor, speaking the same
// channel on its data pipe, that runs calls of operator-trusted tools concurrently on a piscina
// pool of worker threads. It protects the supervisor's memory and its crashes from the tools, not
// the tools from each other nor the machine from them. A cancel terminates the thread running the
// call (piscina replaces it). Child-side: imports only src/ipc/** and message types.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { BroadcastChannel, type Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import {
  Channel,
  ERROR_MESSAGE_MAX,
  IpcError,
  TOOL_HOST_CHANNEL_FD_ENV,
  TOOL_HOST_PROTOCOL,
  ToHostSchema,
  type CallMessage,
  type FromHostMessage,
  type ToHostMessage,
} from '../../../ipc/index.js';
import type { ThreadTaskResult, ThreadWorkerData } from './thread-host-types.js';
import { hostFlag } from './tool-call.js';

const maxFrameBytes = hostFlag('max-frame-bytes', 1024 * 1024);
const maxResultBytes = hostFlag('max-result-bytes', 256 * 1024);
const threads = hostFlag('threads', 2);
const heapMb = hostFlag('heap-mb', 256);

/** Calls in flight, by id: how many relayed lines arrived, and the reply waiting for the rest. */
interface Running {
  /** piscina takes an EventEmitter as the signal: far cheaper per call than an AbortController. */
  abort: EventEmitter & { aborted: boolean };
  arrived: number;
  waiting: { reply: FromHostMessage; relayed: number } | null;
  /** The thread(s) piscina took out of the pool when this call was cancelled. */
  dropped: Worker[];
}
const running = new Map<string, Running>();

const relayName = `supervisor-thread-host-${process.pid}-${randomUUID()}`;
const relay = new BroadcastChannel(relayName);
relay.onmessage = (e: unknown) => {
  const frame = (e as { data: FromHostMessage }).data;
  if (frame.type !== 'log' && frame.type !== 'progress') return;
  const r = running.get(frame.id);
  if (!r) return;
  channel.send(frame);
  r.arrived++;
  if (r.waiting && r.arrived >= r.waiting.relayed) finish(frame.id, r.waiting.reply);
};

const workerData: ThreadWorkerData = { relay: relayName, maxResultBytes };
const pool = new Piscina({
  filename: new URL('./thread-worker-entry.js', import.meta.url).href,
  minThreads: threads,
  maxThreads: threads,
  idleTimeout: Number.MAX_SAFE_INTEGER,
  // Per thread: a runaway allocation ends that thread (ERR_WORKER_OUT_OF_MEMORY), not the host.
  resourceLimits: { maxOldGenerationSizeMb: heapMb },
  workerData,
});

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

function onMessage(m: ToHostMessage): void {
  switch (m.type) {
    case 'call':
      if (running.has(m.id)) {
        channel.fail(new IpcError('IPC_UNEXPECTED', `a second call with the id '${m.id}' while the first runs`));
        return;
      }
      start(m);
      return;
    case 'cancel': {
      const r = running.get(m.id);
      if (!r) return;
      // The tool's ctx.signal first, then the thread itself: piscina drops a running task's thread
      // from the pool and terminates it. The answer waits until that thread has really exited, so a
      // thread stuck where termination cannot reach (a blocking system call) is never reported
      // stopped: the supervisor then stops this whole host after its grace.
      relay.postMessage({ type: 'cancel', id: m.id });
      const before = pool.threads;
      r.abort.aborted = true;
      r.abort.emit('abort');
      const after = new Set(pool.threads);
      r.dropped = before.filter((w) => !after.has(w));
      return;
    }
    case 'shutdown':
      channel.close();
      process.exit(0);
  }
}

function start(m: CallMessage): void {
  const r: Running = { abort: Object.assign(new EventEmitter(), { aborted: false }), arrived: 0, waiting: null, dropped: [] };
  running.set(m.id, r);
  const task = { id: m.id, tool: m.tool, input: m.input, secrets: m.secrets };
  (pool.run(task, { signal: r.abort }) as Promise<ThreadTaskResult>).then(
    (out) => {
      if (r.arrived >= out.relayed) finish(m.id, out.reply);
      else {
        r.waiting = out;
        // A line lost between threads must not hold the reply forever.
        setTimeout(() => finish(m.id, out.reply), 1000).unref();
      }
    },
    (err: unknown) => {
      const reply = threadFailure(m.id, err, r.abort.aborted);
      void Promise.all(r.dropped.map(exited)).then(() => finish(m.id, reply));
    },
  );
}

/** Resolves once the thread is gone (a Worker's threadId turns -1 when it has exited). */
function exited(w: Worker): Promise<void> {
  if (w.threadId === -1) return Promise.resolve();
  return new Promise((resolve) => w.once('exit', () => resolve()));
}

function finish(id: string, reply: FromHostMessage): void {
  if (!running.delete(id)) return;
  channel.send(reply);
}

function threadFailure(id: string, err: unknown, cancelled: boolean): FromHostMessage {
  if (cancelled) return { type: 'error', id, code: 'CANCELLED', message: 'the call was cancelled; the thread that ran it was terminated' };
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' && /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(e.code) ? e.code : 'THREAD_FAILED';
  const message = `the tool's thread failed: ${typeof e.message === 'string' ? e.message : String(err)}`;
  return { type: 'error', id, code, message: message.slice(0, ERROR_MESSAGE_MAX) };
}
