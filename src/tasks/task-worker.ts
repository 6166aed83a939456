// RuntimeTaskWorker: background work of a session as supervised process trees. Output arrives
// redacted (the tree's redactor) and is kept in bounded task_logs chunks, flushed in batches; a
// cancel kills the tree, persists exit code and reason, and only then publishes completion.
// Every read is principal-scoped; the worker owns only the trees it started.
import { EventEmitter } from 'node:events';
import { StringDecoder } from 'node:string_decoder';
import type { ProcessSupervisor, SupervisedTree, TreeOutcome } from '../process/index.js';
import { isLiveRedaction, redactText } from '../redaction/index.js';
import type { RedactionSource } from '../redaction/index.js';
import { appendEvent, faultPoint, TaskStore, type Database, type PrincipalScope, type TaskRecord, type TaskStream } from '../store/index.js';

export interface TerminalTaskSpec {
  sessionId: string;
  turnId?: string | null;
  sourceTool: string;
  /** One line for people and the model: the command line. */
  summary: string;
  writeScope?: string | null;
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  timeoutMs?: number;
  /** Secret values removed from the logs (a background task never receives secret bindings). */
  redact?: RedactionSource;
  /** At most this many running tasks in the session (agent.yaml limits.max_background_tasks); none: no cap. */
  maxRunningInSession?: number;
}

/** A session already runs as many background tasks as its cap allows: nothing was started. */
export class TaskLimitError extends Error {
  readonly code = 'LIMIT_REACHED';
  constructor(readonly limit: number) {
    super(
      `this session already runs ${limit} background tasks, its limit (limits.max_background_tasks in agent.yaml); ` +
        'wait for one to end (yield_until) or cancel one (task_control), or raise limits.max_background_tasks',
    );
    this.name = 'TaskLimitError';
  }
}

/**
 * A task whose work runs inside the supervisor, by `body` under the task's signal: a delegated
 * child session (agent.spawn) or an evolve run (evolver.run). Its processes, if any, are trees the
 * body starts and ends itself.
 */
export interface InProcessTaskSpec {
  /** The task's kind: agent.spawn (a child agent) unless said (evolver.run: an evolve run). */
  kind?: 'agent.spawn' | 'evolver.run';
  sessionId: string;
  turnId?: string | null;
  sourceTool: string;
  summary: string;
  /** Requested and resolved scope, recorded before the child starts. */
  metadata: Record<string, unknown>;
  maxRunningInSession?: number;
}

/** How the work ended; `metadata` replaces the task's metadata (a child's evidence and budget used, an evolve run). */
export interface InProcessTaskEnd {
  status: 'completed' | 'failed' | 'cancelled';
  reason: string;
  logTail: string;
  childSessionId: string | null;
  metadata: Record<string, unknown>;
}

interface LiveAgent {
  task: TaskRecord;
  controller: AbortController;
  ended: Promise<TaskRecord>;
}

export interface TaskWorkerOptions {
  supervisor: ProcessSupervisor;
  db: Database;
  /** Log flush and cancel-request poll period. Default 200 ms. */
  pollMs?: number;
  /** Log bytes kept per task; the rest is in the tree's artifacts. Default 4 MiB. */
  maxLogBytes?: number;
}

const TAIL_CHARS = 4_000;
/** Chunks of one stream pending between flushes are joined up to this many characters per log row. */
const MAX_ROW_CHARS = 16_384;
const DEFAULT_TIMEOUT_MS = 60 * 60 * 1000;

interface Live {
  task: TaskRecord;
  tree: SupervisedTree;
  decoders: Record<'stdout' | 'stderr', StringDecoder>;
  pending: { stream: TaskStream; chunk: string }[];
  logged: number;
  capped: boolean;
  tail: string;
  ended: Promise<TaskRecord>;
}

export class RuntimeTaskWorker {
  readonly store: TaskStore;
  /** 'completed' (task: TaskRecord) after the row holds its end state. */
  readonly events = new EventEmitter();
  private readonly live = new Map<string, Live>();
  private readonly agents = new Map<string, LiveAgent>();
  /** Per session: tasks running or being started by this worker (what the cap counts). */
  private readonly held = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private readonly maxLogBytes: number;
  private closed = false;

  constructor(private readonly o: TaskWorkerOptions) {
    this.store = new TaskStore(o.db);
    this.maxLogBytes = o.maxLogBytes ?? 4 * 1024 * 1024;
    this.timer = setInterval(() => this.tick(), o.pollMs ?? 200);
    this.timer.unref();
  }

  /**
   * Starts a background terminal task; throws WriteScopeConflictError if its scope is held.
   * Starting a tree is synchronous work (records, cgroup, spawn): starts are queued one per turn
   * of the event loop, so a burst of them never stalls everything else for long.
   */
  async startTerminal(scope: PrincipalScope, spec: TerminalTaskSpec): Promise<TaskRecord> {
    // The slot is taken before the first await, so concurrent starts cannot race past the cap.
    const cap = spec.maxRunningInSession;
    const held = this.held.get(spec.sessionId) ?? 0;
    if (cap !== undefined && held >= cap) throw new TaskLimitError(cap);
    this.held.set(spec.sessionId, held + 1);
    let started = false;
    try {
      const t = await this.startNow(scope, spec);
      started = true;
      return t;
    } finally {
      if (!started) this.release(spec.sessionId);
    }
  }

  private release(sessionId: string): void {
    const n = (this.held.get(sessionId) ?? 1) - 1;
    if (n <= 0) this.held.delete(sessionId);
    else this.held.set(sessionId, n);
  }

  private async startNow(scope: PrincipalScope, spec: TerminalTaskSpec): Promise<TaskRecord> {
    // The next start waits for this one's spawn to return (its thread, decision 59), so a burst
    // lands one leader per turn instead of several spawns' results in one turn.
    let spawned!: () => void;
    await this.turn(new Promise<void>((r) => (spawned = r)));
    try {
      return await this.startTurn(scope, spec);
    } finally {
      spawned();
    }
  }

  private async startTurn(scope: PrincipalScope, spec: TerminalTaskSpec): Promise<TaskRecord> {
    if (this.closed) throw new Error('the task worker is closed; start a new session');
    const task = this.store.create(scope, {
      sessionId: spec.sessionId,
      turnId: spec.turnId ?? null,
      kind: 'terminal.exec',
      sourceTool: spec.sourceTool,
      // The summary is the command line: a row of the store, so it is redacted like the task's output.
      summary: summaryFor(spec),
      writeScope: spec.writeScope ?? null,
    }, this.o.supervisor.owner);
    let live: Live | undefined;
    const onChunk = (stream: 'stdout' | 'stderr') => (c: Buffer) => {
      if (live) this.collect(live, stream, live.decoders[stream].write(c));
    };
    let tree: SupervisedTree;
    try {
      // The leader's spawn runs off the event loop (decision 59); the task row exists already.
      tree = await this.o.supervisor.spawnTreeAsync({
        command: spec.command,
        args: spec.args,
        cwd: spec.cwd,
        env: spec.env,
        timeoutMs: spec.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        redact: spec.redact ?? [],
        onStdout: onChunk('stdout'),
        onStderr: onChunk('stderr'),
      });
    } catch (err) {
      this.store.finish(task.id, { status: 'failed', exitCode: null, signal: null, reason: `did not start: ${(err as Error).message}`, logTail: '' });
      throw err;
    }
    live = {
      task,
      tree,
      decoders: { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') },
      pending: [],
      logged: 0,
      capped: false,
      tail: '',
      ended: Promise.resolve(task),
    };
    const l = live;
    this.live.set(task.id, l);
    this.store.setSpawn(task.id, tree.spawnId, null);
    faultPoint(this.o.db, 'task-running');
    l.ended = tree.done.then((outcome) => this.complete(scope, l, outcome));
    return this.store.get(scope, task.id)!;
  }

  /**
   * Starts an in-process task (agent.spawn, evolver.run): the row (running, with its metadata) first, then `body` under the
   * task's signal, which cancel, an operator's cancel request and close() abort. `body` must end
   * everything the child owns before it resolves: the row is finished only after it has, so a task
   * never completes while its descendants live. Returns the row and its end.
   */
  startInProcess(scope: PrincipalScope, spec: InProcessTaskSpec, body: (task: TaskRecord, signal: AbortSignal) => Promise<InProcessTaskEnd>): { task: TaskRecord; ended: Promise<TaskRecord> } {
    if (this.closed) throw new Error('the task worker is closed; start a new session');
    const cap = spec.maxRunningInSession;
    const held = this.held.get(spec.sessionId) ?? 0;
    if (cap !== undefined && held >= cap) throw new TaskLimitError(cap);
    const task = this.store.create(scope, { sessionId: spec.sessionId, turnId: spec.turnId ?? null, kind: spec.kind ?? 'agent.spawn', sourceTool: spec.sourceTool, summary: spec.summary }, this.o.supervisor.owner);
    this.held.set(spec.sessionId, held + 1);
    this.store.setDelegation(task.id, null, spec.metadata);
    const controller = new AbortController();
    const finish = (end: InProcessTaskEnd): TaskRecord => {
      this.agents.delete(task.id);
      this.release(spec.sessionId);
      const status = end.status === 'cancelled' && this.closed ? 'interrupted' : end.status;
      const reason = status === 'interrupted' ? `the run that owned it ended (${end.reason})` : end.reason;
      this.store.setDelegation(task.id, end.childSessionId, end.metadata);
      this.store.finish(task.id, { status, exitCode: null, signal: null, reason, logTail: end.logTail.slice(-TAIL_CHARS) });
      const done = this.store.get(scope, task.id)!;
      try {
        appendEvent(this.o.db, done.sessionId, 'task.completed', { task_id: done.id, kind: done.kind, status: done.status, reason: done.reason, child_session: done.childSessionId });
      } catch {
        // The task's own row is the record (see complete()).
      }
      this.events.emit('completed', done);
      return done;
    };
    const ended = body(task, controller.signal).then(finish, (err: unknown) =>
      finish({ status: controller.signal.aborted ? 'cancelled' : 'failed', reason: `the child failed: ${(err as Error)?.message ?? String(err)}`.slice(0, 2000), logTail: '', childSessionId: null, metadata: spec.metadata }),
    );
    this.agents.set(task.id, { task, controller, ended });
    return { task, ended };
  }

  get(scope: PrincipalScope, id: string): TaskRecord | undefined {
    return this.store.get(scope, id);
  }

  private queue: Promise<void> = Promise.resolve();

  /** Resolves on a turn of the event loop of its own, after every start queued before it; the next waits for `until` as well. */
  private turn(until: Promise<void>): Promise<void> {
    const next = this.queue.then(() => new Promise<void>((r) => setImmediate(r)));
    this.queue = next.then(() => until);
    return next;
  }

  /** Kills the task's tree and resolves after its end state is persisted and published. */
  async cancel(scope: PrincipalScope, id: string): Promise<TaskRecord | undefined> {
    const t = this.store.get(scope, id);
    if (!t) return undefined;
    const agent = this.agents.get(id);
    if (agent) {
      agent.controller.abort();
      return agent.ended;
    }
    const l = this.live.get(id);
    if (!l) {
      // Owned by another process (or ended): ask its owner through the store.
      return t.status === 'running' ? this.store.requestCancel(scope, id) : t;
    }
    await l.tree.stop('cancelled');
    return l.ended;
  }

  /**
   * Waits until any of `ids` (default: the session's running tasks) has ended, or `timeoutMs`
   * passed, or `signal` aborted. Ids of other principals are treated as missing.
   */
  async waitAny(scope: PrincipalScope, sessionId: string, ids: readonly string[] | null, timeoutMs: number, signal?: AbortSignal): Promise<{ ended: TaskRecord[]; timedOut: boolean }> {
    const wanted = (ids ?? this.store.list(scope, { sessionId }).filter((t) => t.status === 'running').map((t) => t.id))
      .map((id) => this.store.get(scope, id))
      .filter((t): t is TaskRecord => t !== undefined);
    const endedNow = wanted.filter((t) => t.status !== 'running');
    if (endedNow.length > 0 || wanted.length === 0) return { ended: endedNow, timedOut: false };
    const set = new Set(wanted.map((t) => t.id));
    return new Promise((resolve) => {
      const finish = (ended: TaskRecord[], timedOut: boolean): void => {
        clearTimeout(timer);
        clearInterval(poll);
        this.events.off('completed', onDone);
        signal?.removeEventListener('abort', onAbort);
        resolve({ ended, timedOut });
      };
      const onDone = (t: TaskRecord): void => {
        if (set.has(t.id)) finish([t], false);
      };
      const onAbort = (): void => finish([], true);
      const timer = setTimeout(() => finish([], true), Math.max(0, timeoutMs));
      // A task owned by another process ends without an event here: poll the store as well.
      const poll = setInterval(() => {
        for (const id of set) {
          const t = this.store.get(scope, id);
          if (t && t.status !== 'running') return finish([t], false);
        }
      }, 250);
      this.events.on('completed', onDone);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Stops every live task: killed, marked interrupted (the run that owned them is ending). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const all = [...this.live.values()];
    const agents = [...this.agents.values()];
    // Children first (each closes its own descendants), with the trees in parallel.
    for (const a of agents) a.controller.abort();
    await Promise.all(all.map((l) => l.tree.stop('cancelled').catch(() => undefined)));
    await Promise.all([...all.map((l) => l.ended.catch(() => undefined)), ...agents.map((a) => a.ended.catch(() => undefined))]);
    clearInterval(this.timer);
    this.flush();
  }

  get running(): number {
    return this.live.size + this.agents.size;
  }

  private collect(l: Live, stream: TaskStream, text: string): void {
    if (text === '') return;
    l.tail = (l.tail + text).slice(-TAIL_CHARS);
    if (l.capped) return;
    const bytes = Buffer.byteLength(text, 'utf8');
    if (l.logged + bytes > this.maxLogBytes) {
      l.capped = true;
      l.pending.push({ stream: 'note', chunk: `[log limit of ${this.maxLogBytes} bytes reached; the full output is in the task's artifacts]` });
      return;
    }
    l.logged += bytes;
    // Output read between two flushes of the same stream becomes one row (one insert instead of one
    // per pipe read: 200 tasks printing lines made the flush the largest SQLite cost, decision 59).
    const last = l.pending[l.pending.length - 1];
    if (last !== undefined && last.stream === stream && last.chunk.length + text.length <= MAX_ROW_CHARS) last.chunk += text;
    else l.pending.push({ stream, chunk: text });
  }

  private tick(): void {
    this.flush();
    // Operators cancel from another terminal through the store.
    for (const id of this.store.cancelRequests()) {
      const l = this.live.get(id);
      if (l) void l.tree.stop('cancelled');
      this.agents.get(id)?.controller.abort();
    }
  }

  /** One transaction for every task's pending chunks. */
  private flush(only?: Live): void {
    const batch: { taskId: string; stream: TaskStream; chunk: string }[] = [];
    for (const l of only ? [only] : this.live.values()) {
      for (const p of l.pending.splice(0)) batch.push({ taskId: l.task.id, ...p });
    }
    this.store.appendLogs(batch);
  }

  private complete(scope: PrincipalScope, l: Live, outcome: TreeOutcome): TaskRecord {
    for (const s of ['stdout', 'stderr'] as const) this.collect(l, s, l.decoders[s].end());
    this.flush(l);
    this.live.delete(l.task.id);
    this.release(l.task.sessionId);
    const status =
      outcome.reason === 'cancelled' ? (this.closed ? 'interrupted' : 'cancelled') : outcome.reason === 'exited' && outcome.exitCode === 0 ? 'completed' : 'failed';
    const reason =
      outcome.reason === 'exited' ? (outcome.signal ? `killed by ${outcome.signal}` : `exit code ${outcome.exitCode}`) : this.closed && outcome.reason === 'cancelled' ? 'the run that owned it ended' : outcome.reason;
    // Persist first, then publish: a waiter never sees a completion the store does not hold.
    this.store.finish(l.task.id, { status, exitCode: outcome.exitCode, signal: outcome.signal, reason, logTail: l.tail });
    if (outcome.artifacts) this.store.setSpawn(l.task.id, outcome.spawnId, outcome.artifacts.root);
    const done = this.store.get(scope, l.task.id)!;
    try {
      appendEvent(this.o.db, done.sessionId, 'task.completed', { task_id: done.id, kind: done.kind, status: done.status, exit_code: done.exitCode, reason: done.reason });
    } catch {
      // The task's own row is the record; a session whose chain cannot be extended is reported by audit verify.
    }
    this.events.emit('completed', done);
    return done;
  }
}

/** The task's summary with the secrets its output is redacted of; a set that cannot be redacted withholds it. */
function summaryFor(spec: TerminalTaskSpec): string {
  const source = spec.redact ?? [];
  const secrets = (isLiveRedaction(source) ? source.values() : source).filter((v) => v.length > 0);
  if (secrets.length === 0) return spec.summary;
  try {
    return redactText(spec.summary, secrets);
  } catch {
    return '[summary withheld: it could not be safely redacted]';
  }
}
