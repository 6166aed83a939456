// The model-facing task tools: task_list, task_status, task_control (cancel only) and
// yield_until. They answer with bounded model projections: no owner ids, write scope, metadata,
// result references or logs. Another principal's task id gets exactly the answer a missing id gets.
import type { TaskRecord } from '../../store/index.js';
import { AdapterCheckError, AdapterUnavailableError, type EffectAdapter, type InvokeEnv } from '../adapter-types.js';

const MAX_LISTED = 50;

/** What the model may see of a task. */
export function modelProjection(t: TaskRecord): Record<string, unknown> {
  return {
    id: t.id,
    kind: t.kind,
    status: t.status,
    summary: t.summary.length > 200 ? `${t.summary.slice(0, 200)}…` : t.summary,
    exit_code: t.exitCode,
    reason: t.reason,
    seconds: Math.round(((t.endedAt ?? Date.now()) - t.createdAt) / 100) / 10,
  };
}

function worker(env: InvokeEnv) {
  if (!env.tasks) throw new AdapterUnavailableError('background tasks need a task worker, and this runtime has none');
  return env.tasks;
}

const notFound = (id: string) => ({ text: `no task ${JSON.stringify(id)} in this session's view; task_list shows the ids`, isError: true, detail: { found: false } });

function json(value: unknown, isError = false) {
  return { text: JSON.stringify(value, null, 2), isError, detail: {} };
}

function taskIdOf(args: unknown): string {
  return String((args as { task_id: string }).task_id);
}

const readOnly = (summary: string, target: Record<string, unknown>) => ({ checks: [], action: { kind: 'task.read', target }, summary, audit: target });

export const taskListAdapter: EffectAdapter = {
  preflight: (_e, args) => readOnly('list background tasks', { status: (args as { status?: string }).status ?? null }),
  async invoke(_e, args, env) {
    const status = (args as { status?: string }).status;
    const tasks = worker(env)
      .store.list(env.owner, { sessionId: env.owner.sessionId, limit: MAX_LISTED })
      .filter((t) => status === undefined || t.status === status);
    return { ...json({ tasks: tasks.map(modelProjection) }), detail: { count: tasks.length } };
  },
};

export const taskStatusAdapter: EffectAdapter = {
  preflight: (_e, args) => readOnly(`status of ${taskIdOf(args)}`, { task: taskIdOf(args) }),
  async invoke(_e, args, env) {
    const t = worker(env).get(env.owner, taskIdOf(args));
    // Scoped to this session too: a task of the same principal's other session is not shown here.
    if (!t || t.sessionId !== env.owner.sessionId) return notFound(taskIdOf(args));
    return json(modelProjection(t));
  },
};

export const taskControlAdapter: EffectAdapter = {
  preflight(_e, args) {
    const { command } = args as { command: string };
    if (command !== 'cancel') throw new AdapterCheckError(`task_control: command ${JSON.stringify(command.slice(0, 32))} is not supported; the supported command is "cancel"`);
    const id = taskIdOf(args);
    return { checks: [], action: { kind: 'task.control', target: { task: id, command } }, summary: `cancel ${id}`, audit: { task: id, command } };
  },
  async invoke(_e, args, env) {
    const id = taskIdOf(args);
    const w = worker(env);
    const t = w.get(env.owner, id);
    if (!t || t.sessionId !== env.owner.sessionId) return notFound(id);
    const after = await w.cancel(env.owner, id);
    return json(modelProjection(after ?? t));
  },
};

export const yieldUntilAdapter: EffectAdapter = {
  preflight(_e, args) {
    const a = args as { task_ids?: string[]; timeout_seconds?: number };
    return readOnly(`wait for ${a.task_ids?.join(', ') ?? 'any running task'}`, { tasks: a.task_ids ?? null, timeoutSeconds: a.timeout_seconds ?? 30 });
  },
  async invoke(_e, args, env) {
    const a = args as { task_ids?: string[]; timeout_seconds?: number };
    const w = worker(env);
    const ids = a.task_ids ? a.task_ids.filter((id) => w.get(env.owner, id)?.sessionId === env.owner.sessionId) : null;
    const timeoutMs = Math.min((a.timeout_seconds ?? 30) * 1000, env.deadlineMs - 500);
    const r = await w.waitAny(env.owner, env.owner.sessionId, ids, Math.max(0, timeoutMs), env.signal);
    const running = w.store.list(env.owner, { sessionId: env.owner.sessionId }).filter((t) => t.status === 'running').length;
    return { ...json({ ended: r.ended.map(modelProjection), timed_out: r.timedOut, still_running: running }), detail: { ended: r.ended.length, timedOut: r.timedOut } };
  },
};
