// The authored-tool host: a child process run under Node's permission model. It speaks the
// channel on its data pipe, imports a tool's module only when a call for it arrives (after the
// supervisor checked capability and approval), runs one call at a time, and after each call says
// what the tool left running. Child-side: imports only src/ipc/** and message types.
import { Socket } from 'node:net';
import { pathToFileURL } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import {
  Channel,
  ERROR_MESSAGE_MAX,
  IpcError,
  LOG_TEXT_MAX,
  TOOL_HOST_CHANNEL_FD_ENV,
  TOOL_HOST_PROTOCOL,
  ToHostSchema,
  type CallMessage,
  type FromHostMessage,
  type ToHostMessage,
} from '../../../ipc/index.js';

const LOGS_PER_CALL = 200;
const PROGRESS_PER_CALL = 1000;

function flag(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  const n = a ? Number(a.slice(name.length + 3)) : NaN;
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
const maxFrameBytes = flag('max-frame-bytes', 1024 * 1024);
const maxResultBytes = flag('max-result-bytes', 256 * 1024);

/** Thrown by ctx.capability.require for anything the manifest does not list. */
class CapabilityError extends Error {
  readonly code = 'TOOL_CAPABILITY_DENIED';
  constructor(message: string) {
    super(message);
    this.name = 'CapabilityError';
  }
}

type Handler = (input: unknown, ctx: unknown) => unknown;
const modules = new Map<string, Promise<Handler>>();

function handlerOf(entryPath: string): Promise<Handler> {
  let p = modules.get(entryPath);
  if (!p) {
    p = import(pathToFileURL(entryPath).href).then((m: Record<string, unknown>) => {
      const h = m.handler ?? (m.default as Record<string, unknown> | undefined)?.handler ?? m.default;
      if (typeof h !== 'function') throw Object.assign(new Error(`${entryPath} exports no handler; export async function handler(input, ctx)`), { code: 'TOOL_NO_HANDLER' });
      return h as Handler;
    });
    // A module that failed to load is tried again on the next call (it may have been a transient read).
    p.catch(() => modules.delete(entryPath));
    modules.set(entryPath, p);
  }
  return p;
}

/** Whole-segment match: exact, or a listed `prefix*` whose prefix ends at a separator. */
function listed(list: readonly string[], cap: string): boolean {
  return list.some((g) => g === cap || (g.endsWith('*') && /[.:]$/.test(g.slice(0, -1)) && cap.startsWith(g.slice(0, -1))));
}

function countResources(): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) m.set(r, (m.get(r) ?? 0) + 1);
  return m;
}

/** Requests in flight for a moment that the host itself causes (the import closing the module file). */
const OWN_TRANSIENT = new Set(['CloseReq']);
let baseline = new Map<string, number>();
let current: { id: string; abort: AbortController } | null = null;

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
      if (current?.id === m.id) current.abort.abort(new Error('cancelled'));
      return;
    case 'shutdown':
      channel.close();
      process.exit(0);
  }
}

async function run(m: CallMessage): Promise<void> {
  const abort = new AbortController();
  current = { id: m.id, abort };
  let logs = 0;
  let progress = 0;
  const dispatch = m.tool.dispatchCapability;
  const caps = Object.freeze([...m.tool.capabilities]);
  const ctx = Object.freeze({
    signal: abort.signal,
    secrets: Object.freeze({ ...m.secrets }),
    log(text: unknown, level: 'info' | 'warn' | 'error' = 'info'): void {
      if (current?.id !== m.id || logs > LOGS_PER_CALL) return;
      logs++;
      const t = logs > LOGS_PER_CALL ? `(log limit of ${LOGS_PER_CALL} lines reached; further lines dropped)` : String(text).slice(0, LOG_TEXT_MAX);
      channel.send({ type: 'log', id: m.id, level: level === 'warn' || level === 'error' ? level : 'info', text: t });
    },
    progress(done: unknown, total?: unknown): void {
      if (current?.id !== m.id || ++progress > PROGRESS_PER_CALL) return;
      if (typeof done !== 'number' || !Number.isFinite(done) || done < 0) return;
      const t = typeof total === 'number' && Number.isFinite(total) && total >= 0 ? { total } : {};
      channel.send({ type: 'progress', id: m.id, done, ...t });
    },
    capability: Object.freeze({
      require(cap: unknown): void {
        const c = String(cap);
        if (c === dispatch) throw new CapabilityError(`'${c}' is this tool's dispatch capability; the session's grants decide dispatch, a tool cannot require it`);
        if (!listed(caps, c)) throw new CapabilityError(`'${c.slice(0, 200)}' is not in the manifest's capabilities (${caps.join(', ') || 'none'}); add it to tool.yaml capabilities`);
      },
    }),
  });
  let reply: FromHostMessage;
  try {
    const handler = await handlerOf(m.tool.entryPath);
    const value = await handler(m.input, ctx);
    reply = resultFrame(m.id, value);
  } catch (err) {
    reply = errorFrame(m.id, err);
  }
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

function resultFrame(id: string, value: unknown): FromHostMessage {
  let json: string | undefined;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    return { type: 'error', id, code: 'TOOL_RESULT_INVALID', message: `the handler's result is not JSON-serializable: ${(err as Error).message}`.slice(0, ERROR_MESSAGE_MAX) };
  }
  const bytes = Buffer.byteLength(json ?? 'null', 'utf8');
  if (bytes > maxResultBytes) {
    return { type: 'error', id, code: 'TOOL_RESULT_TOO_LARGE', message: `the handler's result is ${bytes} bytes of JSON, over the limit of ${maxResultBytes}; return less, or write it to a file` };
  }
  return { type: 'result', id, value: JSON.parse(json ?? 'null') as unknown };
}

function errorFrame(id: string, err: unknown): FromHostMessage {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  const code = typeof e.code === 'string' && /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(e.code) ? e.code : 'TOOL_ERROR';
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { type: 'error', id, code, message: message.slice(0, ERROR_MESSAGE_MAX) };
}
