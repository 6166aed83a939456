// One call of an authored tool, as both hosts run it: the process host on its main thread, the
// trusted thread host inside one of its worker threads. The module import, the author's `ctx`, and the
// result or error frame. Child-side: imports only src/ipc/** and message types.
import { pathToFileURL } from 'node:url';
import {
  ERROR_MESSAGE_MAX,
  LOG_TEXT_MAX,
  SPAWNS_PER_CALL,
  SpawnRequestSchema,
  type CallMessage,
  type FromHostMessage,
  type SpawnedMessage,
} from '../../../ipc/index.js';

const LOGS_PER_CALL = 200;
const PROGRESS_PER_CALL = 1000;

/** A positive integer host setting from `--name=N` on the host's command line, or the fallback. */
export function hostFlag(name: string, fallback: number): number {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  const n = a ? Number(a.slice(name.length + 3)) : NaN;
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

/** Thrown by ctx.capability.require for anything the manifest does not list. */
class CapabilityError extends Error {
  readonly code = 'TOOL_CAPABILITY_DENIED';
  constructor(message: string) {
    super(message);
    this.name = 'CapabilityError';
  }
}

/** ctx.agents.spawn's failures: a bad request, too many, the call over, or the supervisor's refusal. */
class SpawnError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SpawnError';
  }
}

/** What a child agent started by ctx.agents.spawn ended with. */
export interface SpawnedAgent {
  status: string;
  answer: string;
}

/** The capability a manifest lists for ctx.agents.spawn; the session's agent.spawn grant is checked by the supervisor. */
const SPAWN_CAPABILITY = 'agent.spawn';

type Handler = (input: unknown, ctx: unknown) => unknown;
const modules = new Map<string, Promise<Handler>>();

/** The tool's handler; its module is imported once per host (or thread) and kept. */
export function handlerOf(entryPath: string): Promise<Handler> {
  let p = modules.get(entryPath);
  if (!p) {
    p = import(pathToFileURL(entryPath).href).then((m: Record<string, unknown>) => {
      const h = m.handler ?? (m.default as Record<string, unknown> | undefined)?.handler ?? m.default;
      if (typeof h !== 'function') throw Object.assign(new Error(`${entryPath} exports no handler; export async function handler(input, ctx)`), { code: 'TOOL_NO_HANDLER' });
      return h as Handler;
    }, (err: unknown) => {
      // Node 20's ESM SyntaxError names no file or line; the supervisor finds them (node --check).
      if (err instanceof SyntaxError) throw Object.assign(new Error(err.message), { code: 'TOOL_SYNTAX_ERROR' });
      throw err;
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

/** Where the call's log and progress lines go (the channel, or the thread host's relay). */
export type CallOutput = (frame: FromHostMessage) => void;

export interface ToolCall {
  readonly ctx: object;
  /** Aborts ctx.signal (creating it aborted if the tool never looked at it). */
  cancel(): void;
  /** After the reply: later log and progress lines are dropped, spawns still waiting fail. */
  end(): void;
  /** The supervisor's answer to one ctx.agents.spawn request of this call. */
  deliver(m: SpawnedMessage): void;
}

/** The author's `ctx` for one call. The AbortController is made only if the tool reads ctx.signal. */
export function toolCall(m: Pick<CallMessage, 'id' | 'tool' | 'secrets'>, out: CallOutput): ToolCall {
  let ended = false;
  let cancelled = false;
  let abort: AbortController | null = null;
  let logs = 0;
  let progress = 0;
  let spawns = 0;
  const waiting = new Map<number, { resolve(a: SpawnedAgent): void; reject(e: Error): void }>();
  const dispatch = m.tool.dispatchCapability;
  const caps = Object.freeze([...m.tool.capabilities]);
  const requireListed = (c: string): void => {
    if (c === dispatch) throw new CapabilityError(`'${c}' is this tool's dispatch capability; the session's grants decide dispatch, a tool cannot require it`);
    if (!listed(caps, c)) throw new CapabilityError(`'${c.slice(0, 200)}' is not in the manifest's capabilities (${caps.join(', ') || 'none'}); add it to tool.yaml capabilities`);
  };
  /** ctx.agents.spawn: the manifest must list agent.spawn; the supervisor runs delegate_task's pipeline. */
  const spawn = (request: unknown): Promise<SpawnedAgent> => {
    try {
      requireListed(SPAWN_CAPABILITY);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    if (ended) return Promise.reject(new SpawnError('TOOL_SPAWN_AFTER_END', 'ctx.agents.spawn after the call returned'));
    if (spawns >= SPAWNS_PER_CALL) return Promise.reject(new SpawnError('TOOL_SPAWN_LIMIT', `at most ${SPAWNS_PER_CALL} ctx.agents.spawn requests per call`));
    const parsed = SpawnRequestSchema.safeParse(request);
    if (!parsed.success) {
      const why = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`).join('; ');
      return Promise.reject(new SpawnError('TOOL_SPAWN_INVALID', `ctx.agents.spawn({ agent, task, toolsets?, tools?, grants? }): ${why}`));
    }
    const seq = ++spawns;
    return new Promise<SpawnedAgent>((resolve, reject) => {
      waiting.set(seq, { resolve, reject });
      out({ type: 'spawn', id: m.id, seq, request: parsed.data });
    });
  };
  const ctx = Object.freeze({
    get signal(): AbortSignal {
      if (!abort) {
        abort = new AbortController();
        if (cancelled) abort.abort(new Error('cancelled'));
      }
      return abort.signal;
    },
    secrets: Object.freeze({ ...m.secrets }),
    log(text: unknown, level: 'info' | 'warn' | 'error' = 'info'): void {
      if (ended || logs > LOGS_PER_CALL) return;
      logs++;
      const t = logs > LOGS_PER_CALL ? `(log limit of ${LOGS_PER_CALL} lines reached; further lines dropped)` : String(text).slice(0, LOG_TEXT_MAX);
      out({ type: 'log', id: m.id, level: level === 'warn' || level === 'error' ? level : 'info', text: t });
    },
    progress(done: unknown, total?: unknown): void {
      if (ended || ++progress > PROGRESS_PER_CALL) return;
      if (typeof done !== 'number' || !Number.isFinite(done) || done < 0) return;
      const t = typeof total === 'number' && Number.isFinite(total) && total >= 0 ? { total } : {};
      out({ type: 'progress', id: m.id, done, ...t });
    },
    capability: Object.freeze({
      require(cap: unknown): void {
        requireListed(String(cap));
      },
    }),
    agents: Object.freeze({ spawn }),
  });
  return {
    ctx,
    cancel() {
      cancelled = true;
      abort?.abort(new Error('cancelled'));
    },
    end() {
      ended = true;
      for (const w of waiting.values()) w.reject(new SpawnError('TOOL_SPAWN_AFTER_END', 'the call returned before the child agent answered'));
      waiting.clear();
    },
    deliver(a) {
      const w = waiting.get(a.seq);
      if (!w) return;
      waiting.delete(a.seq);
      if (a.ok) w.resolve({ status: a.status, answer: a.text });
      else w.reject(new SpawnError(a.status, a.text));
    },
  };
}

/** Imports the tool if needed and runs the handler; never throws: the reply is a frame. */
export async function runHandler(m: Pick<CallMessage, 'id' | 'tool' | 'input'>, ctx: object, maxResultBytes: number): Promise<FromHostMessage> {
  try {
    const handler = await handlerOf(m.tool.entryPath);
    return resultFrame(m.id, await handler(m.input, ctx), maxResultBytes);
  } catch (err) {
    return errorFrame(m.id, err);
  }
}

export function resultFrame(id: string, value: unknown, maxResultBytes: number): FromHostMessage {
  let json: string | undefined;
  try {
    json = JSON.stringify(value === undefined ? null : value);
  } catch (err) {
    return { type: 'error', id, code: 'TOOL_RESULT_INVALID', message: `the handler's result is not JSON-serializable: ${(err as Error).message}`.slice(0, ERROR_MESSAGE_MAX) };
  }
  json ??= 'null';
  const bytes = json.length <= maxResultBytes / 3 ? json.length : Buffer.byteLength(json, 'utf8');
  if (bytes > maxResultBytes) {
    return { type: 'error', id, code: 'TOOL_RESULT_TOO_LARGE', message: `the handler's result is ${bytes} bytes of JSON, over the limit of ${maxResultBytes}; return less, or write it to a file` };
  }
  // Parsed back so what crosses the channel is exactly the JSON (no toJSON surprises, no undefined).
  return { type: 'result', id, value: JSON.parse(json) as unknown };
}

export function errorFrame(id: string, err: unknown): FromHostMessage {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  const code = typeof e.code === 'string' && /^[A-Za-z][A-Za-z0-9_.]{0,63}$/.test(e.code) ? e.code : 'TOOL_ERROR';
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { type: 'error', id, code, message: message.slice(0, ERROR_MESSAGE_MAX) };
}
