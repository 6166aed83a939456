// The trusted tool host (thread tier): one child process of the supervisor, speaking the same
// channel on its data pipe, that runs calls of operator-trusted tools concurrently on its own
// worker threads (one call per thread at a time). It protects the supervisor's memory and its
// crashes from the tools, not the tools from each other nor the machine from them. A cancel
// terminates the thread running the call and a fresh one takes its place; so does a call that
// left work running on its thread. Child-side: imports only src/ipc/** and message types.
import { Worker } from 'node:worker_threads';
import {
  ERROR_MESSAGE_MAX,
  IpcError,
  type CallMessage,
  type FromHostMessage,
  type ToHostMessage,
} from '../../../ipc/index.js';
import type { FromThreadMessage, ThreadWorkerData, ToThreadMessage } from './thread-host-types.js';
import { openHostChannel, sayHello } from './host-io.js';
import { hostFlag } from './tool-call.js';

const maxFrameBytes = hostFlag('max-frame-bytes', 1024 * 1024);
const maxResultBytes = hostFlag('max-result-bytes', 256 * 1024);
const threads = hostFlag('threads', 2);
const heapMb = hostFlag('heap-mb', 256);

const WORKER_URL = new URL('./thread-worker-entry.js', import.meta.url);
const workerData: ThreadWorkerData = { maxResultBytes };

interface Job {
  m: CallMessage;
  thread: Thread | null;
  /** A cancel arrived: the answer is CANCELLED, sent once the thread has exited. */
  cancelled: boolean;
  /** The leak report of this call, forwarded with its reply. */
  leaked: FromHostMessage | null;
}

interface Thread {
  worker: Worker;
  job: Job | null;
  /** Ran its module (a thread that dies before that is not restarted in a loop). */
  ready: boolean;
  /** Ended by this host (cancel, deadline, leak): its exit is expected. */
  ending: boolean;
  error: unknown;
}

const live = new Set<Thread>();
/** Free threads, the most recently used last: it is taken first (warm code, a CPU likely awake). */
const idle: Thread[] = [];
const queue: Job[] = [];
const jobs = new Map<string, Job>();
/** A fresh thread died before running its module: start threads again only when a call needs one. */
let bootFailed = false;

const channel = openHostChannel(maxFrameBytes, (m) => onMessage(m));
for (let i = 0; i < threads; i++) idle.push(startThread());
sayHello(channel);

function onMessage(m: ToHostMessage): void {
  switch (m.type) {
    case 'call': {
      if (jobs.has(m.id)) {
        channel.fail(new IpcError('IPC_UNEXPECTED', `a second call with the id '${m.id}' while the first runs`));
        return;
      }
      const job: Job = { m, thread: null, cancelled: false, leaked: null };
      jobs.set(m.id, job);
      const t = idle.pop() ?? (live.size < threads ? startThread() : null);
      if (t) run(t, job);
      else queue.push(job);
      return;
    }
    case 'cancel': {
      const job = jobs.get(m.id);
      if (!job || job.cancelled) return;
      job.cancelled = true;
      const t = job.thread;
      if (!t) {
        // Still queued (every thread busy): nothing ran, nothing to terminate.
        queue.splice(queue.indexOf(job), 1);
        finish(job, { type: 'error', id: m.id, code: 'CANCELLED', message: 'the call was cancelled before a thread took it' });
        return;
      }
      // The tool's ctx.signal first, then the thread itself. The answer waits for the thread's
      // exit, so a thread stuck where termination cannot reach (a blocking system call) is never
      // reported stopped: the supervisor then stops this whole host after its grace.
      post(t, { type: 'cancel', id: m.id });
      end(t);
      return;
    }
    case 'spawned': {
      // The answer to a ctx.agents.spawn of a call still on its thread; else it is dropped.
      const t = jobs.get(m.id)?.thread;
      if (t) post(t, m);
      return;
    }
    case 'shutdown':
      channel.close();
      process.exit(0);
  }
}

function startThread(): Thread {
  const worker = new Worker(WORKER_URL, {
    workerData,
    // Per thread: a runaway allocation ends that thread (ERR_WORKER_OUT_OF_MEMORY), not the host.
    resourceLimits: { maxOldGenerationSizeMb: heapMb },
  });
  const t: Thread = { worker, job: null, ready: false, ending: false, error: null };
  live.add(t);
  worker.on('message', (f: FromThreadMessage) => fromThread(t, f));
  worker.on('error', (err) => (t.error ??= err));
  worker.on('exit', (code) => exited(t, code));
  return t;
}

function post(t: Thread, m: ToThreadMessage): void {
  t.worker.postMessage(m);
}

function run(t: Thread, job: Job): void {
  t.job = job;
  job.thread = t;
  const m = job.m;
  post(t, { type: 'call', id: m.id, tool: m.tool, input: m.input, secrets: m.secrets });
}

function fromThread(t: Thread, f: FromThreadMessage): void {
  if (f.type === 'ready') {
    t.ready = true;
    bootFailed = false;
    return;
  }
  const job = t.job;
  // Lines of a cancelled call, or anything after its reply, are dropped.
  if (!job || job.cancelled || f.type === 'hello' || f.id !== job.m.id) return;
  switch (f.type) {
    case 'log':
    case 'progress':
    case 'spawn':
      channel.send(f);
      return;
    case 'idle':
      job.leaked = f;
      return;
    case 'result':
    case 'error':
      t.job = null;
      if (job.leaked) {
        // Work left running on this thread (an interval, a server): no later call may share its
        // event loop. The thread is ended and replaced; the supervisor learns why with the reply.
        end(t);
        finish(job, job.leaked, f);
        return;
      }
      finish(job, f);
      release(t);
      return;
  }
}

/** A thread is free: the next queued call, else the idle list. */
function release(t: Thread): void {
  const next = queue.shift();
  if (next) run(t, next);
  else idle.push(t);
}

/** Ends a thread on purpose (a fresh one takes its place at once, serving the queue first). */
function end(t: Thread): void {
  if (t.ending) return;
  t.ending = true;
  drop(t);
  void t.worker.terminate();
  replenish();
}

function drop(t: Thread): void {
  live.delete(t);
  const i = idle.indexOf(t);
  if (i >= 0) idle.splice(i, 1);
}

function replenish(): void {
  while (live.size < threads && !bootFailed) {
    const fresh = startThread();
    release(fresh);
  }
}

function exited(t: Thread, code: number): void {
  drop(t);
  const job = t.job;
  t.job = null;
  if (job) finish(job, job.cancelled ? cancelledReply(job.m.id) : threadFailure(job.m.id, t.error ?? new Error(`worker exited with code: ${code}`)));
  if (t.ending) return;
  if (!t.ready) {
    // Died before running its module: starting another now would only die the same way.
    bootFailed = true;
    for (const q of queue.splice(0)) finish(q, threadFailure(q.m.id, t.error ?? new Error(`a worker thread could not start (exit code ${code})`)));
    return;
  }
  replenish();
}

function finish(job: Job, ...frames: FromHostMessage[]): void {
  if (!jobs.delete(job.m.id)) return;
  channel.send(...frames);
}

function cancelledReply(id: string): FromHostMessage {
  return { type: 'error', id, code: 'CANCELLED', message: 'the call was cancelled; the thread that ran it was terminated' };
}

function threadFailure(id: string, err: unknown): FromHostMessage {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' && /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(e.code) ? e.code : 'THREAD_FAILED';
  const message = `the tool's thread failed: ${typeof e.message === 'string' ? e.message : String(err)}`;
  return { type: 'error', id, code, message: message.slice(0, ERROR_MESSAGE_MAX) };
}
