// One warm tool host: a supervised tree with a data pipe, a handshake, and one call at a time.
// Anything the child does wrong on the channel ends it with a typed error; its death fails the
// call in flight and nothing else.
import type { ProcessSupervisor, SupervisedTree, TreeOutcome } from '../../process/index.js';
import { SPAWN_ANSWER_MAX, SPAWNS_PER_CALL, type CallMessage, type FromHostMessage, type IpcError, type SpawnAnswer, type SpawnFrame, type SpawnRequest, type ToHostMessage } from '../../ipc/index.js';
import { AuthoredToolError } from './errors.js';
import type { ToolHostConfig } from './host-config.js';
import { hostLaunch, type HostSpec } from './host-launch.js';
import { HostTree, hostExitReason } from './host-tree.js';

export type HostReply = { ok: true; value: unknown } | { ok: false; code: string; message: string };

export interface CallHooks {
  onLog?: (level: 'info' | 'warn' | 'error', text: string) => void;
  onProgress?: (done: number, total?: number) => void;
  /** The call's ctx.agents.spawn: the supervisor runs it as an agent.spawn effect and answers. */
  onSpawn?: (request: SpawnRequest) => Promise<SpawnAnswer>;
}

/**
 * One ctx.agents.spawn of a call in flight: asks the hook and frames its answer for the host, if
 * the call is still open when the child ends. A hook that throws is an answer too (never a crash).
 * Returns false for a request past SPAWNS_PER_CALL, which the host refuses itself: a protocol breach.
 */
export function answerSpawn(hooks: CallHooks, m: SpawnFrame, asked: number, stillOpen: () => boolean, send: (m: ToHostMessage) => void): boolean {
  if (asked > SPAWNS_PER_CALL) return false;
  const ask = hooks.onSpawn
    ? hooks.onSpawn(m.request)
    : Promise.resolve<SpawnAnswer>({ ok: false, status: 'AGENT_SPAWN_UNAVAILABLE', text: 'this call cannot start agents' });
  void ask
    .catch((err: unknown): SpawnAnswer => ({ ok: false, status: 'AGENT_SPAWN_FAILED', text: err instanceof Error ? err.message : String(err) }))
    .then((a) => {
      if (stillOpen()) send({ type: 'spawned', id: m.id, seq: m.seq, ok: a.ok, status: a.status.slice(0, 64) || 'AGENT_SPAWN_FAILED', text: a.text.slice(0, SPAWN_ANSWER_MAX) });
    });
  return true;
}

/** Why a worker left the pool, for tests and the operator view. */
export type RetireReason = 'max-calls' | 'leaked-resources' | 'memory' | 'crash' | 'protocol' | 'timeout' | 'cancelled' | 'closed';

interface Pending {
  id: string;
  hooks: CallHooks;
  /** ctx.agents.spawn requests of this call so far. */
  spawns: number;
  resolve: (r: HostReply) => void;
  reject: (e: AuthoredToolError) => void;
  replied: boolean;
}

let workerSeq = 0;

export class ToolHostWorker {
  readonly id = `w${++workerSeq}`;
  readonly tree: SupervisedTree;
  /** Resolves when the host said hello; rejects if it never does. */
  readonly ready: Promise<void>;
  calls = 0;
  retired: RetireReason | null = null;
  /** The resources the tool left running after its last call (a reason to retire). */
  leftRunning: readonly string[] = [];
  private readonly host: HostTree;
  private readonly name: string;
  private pending: Pending | null = null;
  private failure: AuthoredToolError | null = null;
  private readySettle!: { resolve: () => void; reject: (e: AuthoredToolError) => void };
  private seq = 0;
  private gone = false;
  /** Called once per call when the worker may serve again (true) or must go (false). */
  onIdle: (w: ToolHostWorker, reusable: boolean) => void = () => {};

  constructor(supervisor: ProcessSupervisor, spec: HostSpec, private readonly config: ToolHostConfig) {
    this.ready = new Promise<void>((resolve, reject) => (this.readySettle = { resolve, reject }));
    this.ready.catch(() => {});
    // The same host and flags in both tiers, inside the OS sandbox: read-only binds of what it
    // reads, no writes, its own pid namespace, dying with the supervisor (host-launch.ts).
    const launch = hostLaunch(spec, config, supervisor.stateDir);
    this.name = `the tool host for ${spec.toolName}`;
    this.host = new HostTree(supervisor, launch, config, this.name, {
      onReady: () => this.readySettle.resolve(),
      onMessage: (m) => this.onMessage(m),
      onEnd: (err, why) => this.die(err, why),
    });
    this.tree = this.host.tree;
  }

  get busy(): boolean {
    return this.pending !== null;
  }

  get alive(): boolean {
    return this.retired === null;
  }

  /** Sends one call; resolves with the tool's result or error, rejects with an AuthoredToolError. */
  call(msg: Omit<CallMessage, 'type' | 'id'>, hooks: CallHooks, signal: AbortSignal | undefined, deadlineMs: number): Promise<HostReply> {
    if (this.pending || this.retired) return Promise.reject(new AuthoredToolError('ADAPTER_FAILED', `worker ${this.id} is not available`));
    const id = `c${++this.seq}`;
    this.calls++;
    return new Promise<HostReply>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      this.pending = {
        id,
        hooks,
        spawns: 0,
        replied: false,
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      const stopFor = (code: 'TIMEOUT' | 'CANCELLED'): void => {
        const p = this.pending;
        if (!p || p.id !== id || p.replied || this.failure) return;
        this.host.send({ type: 'cancel', id });
        const why = code === 'TIMEOUT' ? `the tool ran past its deadline of ${deadlineMs} ms` : 'the call was cancelled';
        // The call is answered by die() once the whole tree is gone: nothing of it outlives the answer.
        this.failure = new AuthoredToolError(code, `${why}; its worker's process tree was stopped`);
        void this.retire(code === 'TIMEOUT' ? 'timeout' : 'cancelled', code === 'TIMEOUT' ? 'timeout' : 'cancelled');
      };
      const timer = setTimeout(() => stopFor('TIMEOUT'), deadlineMs);
      const onAbort = (): void => stopFor('CANCELLED');
      if (signal?.aborted) return stopFor('CANCELLED');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.host.send({ type: 'call', id, ...msg });
    });
  }

  /** Stops the whole tree; resolves when it is gone. */
  async retire(reason: RetireReason, stop: 'cancelled' | 'timeout' = 'cancelled'): Promise<TreeOutcome> {
    this.retired ??= reason;
    return this.tree.stop(stop);
  }

  private onMessage(m: FromHostMessage): void {
    if (m.type === 'hello') return; // the handshake is HostTree's
    const p = this.pending;
    if (!p || m.id !== p.id) return this.protocol('IPC_UNEXPECTED', `a '${m.type}' for call id '${m.id}', which is not the call in flight`);
    switch (m.type) {
      case 'log':
        if (p.replied) return this.protocol('IPC_UNEXPECTED', 'a log after the result');
        p.hooks.onLog?.(m.level, m.text);
        return;
      case 'progress':
        if (p.replied) return this.protocol('IPC_UNEXPECTED', 'progress after the result');
        p.hooks.onProgress?.(m.done, m.total);
        return;
      case 'spawn': {
        if (p.replied) return this.protocol('IPC_UNEXPECTED', 'a spawn request after the result');
        const open = (): boolean => this.pending === p && !p.replied && this.retired === null;
        if (!answerSpawn(p.hooks, m, ++p.spawns, open, (f) => this.host.send(f))) return this.protocol('IPC_UNEXPECTED', `more than ${SPAWNS_PER_CALL} spawn requests in one call`);
        return;
      }
      case 'result':
      case 'error':
        if (p.replied) return this.protocol('IPC_UNEXPECTED', 'a second reply to one call');
        p.replied = true;
        p.resolve(m.type === 'result' ? { ok: true, value: m.value } : { ok: false, code: m.code, message: m.message });
        return;
      case 'idle': {
        if (!p.replied) return this.protocol('IPC_UNEXPECTED', 'idle before the reply');
        this.pending = null;
        this.leftRunning = m.resources;
        if (m.resources.length > 0) this.retired = 'leaked-resources';
        else if (this.calls >= this.config.maxCallsPerWorker) this.retired = 'max-calls';
        else if (m.heapUsed / MB > this.config.heapMb * 0.75 || m.rss / MB > this.config.rssMb) this.retired = 'memory';
        if (this.retired) {
          this.gone = true;
          void this.tree.stop('cancelled');
        }
        this.onIdle(this, this.retired === null);
        return;
      }
    }
  }

  private protocol(code: IpcError['code'], message: string): void {
    this.host.fail(code, message);
  }

  /** The worker is finished: fail the call in flight (with the first failure), stop the tree, tell the pool. */
  private die(err: IpcError | AuthoredToolError | null, reason: RetireReason): void {
    if (!this.failure && err) {
      this.failure = err instanceof AuthoredToolError ? err : new AuthoredToolError(err.code, `the tool host broke the protocol (${err.code}): ${err.message}; it was stopped`);
    }
    this.retired ??= reason;
    this.host.close();
    // Wait for the tree to be gone, so the reason can say how it ended (heap limit, signal).
    void this.tree.stop('cancelled').then((o) => {
      const why = this.failure ?? new AuthoredToolError('ADAPTER_FAILED', hostExitReason(this.name, o));
      this.readySettle.reject(why);
      const p = this.pending;
      this.pending = null;
      if (p && !p.replied) p.reject(why);
      if (!this.gone) {
        this.gone = true;
        this.onIdle(this, false);
      }
    });
  }
}

const MB = 1024 * 1024;
