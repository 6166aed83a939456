// Warm tool hosts per tool and permission set. A call takes an idle worker, or starts one while
// the pool is under its size, or waits. A worker that leaked work, grew too big, served its
// quota, crashed or broke the protocol is replaced; the next call never sees it.
import type { ProcessSupervisor } from '../../process/index.js';
import type { CallMessage } from '../../ipc/index.js';
import { AuthoredToolError } from './errors.js';
import type { ToolHostConfig } from './host-config.js';
import type { HostSpec } from './host-launch.js';
import { ToolHostWorker, type CallHooks, type HostReply, type RetireReason } from './tool-host-worker.js';

export interface PoolCallResult {
  reply: HostReply;
  workerId: string;
  workerPid: number;
}

export interface PoolStats {
  started: number;
  live: number;
  idle: number;
  retired: Partial<Record<RetireReason, number>>;
}

export class ToolHostPool {
  private readonly idle: ToolHostWorker[] = [];
  private readonly workers = new Set<ToolHostWorker>();
  private readonly waiters: { resolve: (w: ToolHostWorker) => void; reject: (e: unknown) => void }[] = [];
  private closed = false;
  readonly stats: PoolStats = { started: 0, live: 0, idle: 0, retired: {} };

  constructor(
    private readonly supervisor: ProcessSupervisor,
    readonly spec: HostSpec,
    readonly config: ToolHostConfig,
  ) {}

  /** Runs one call on a worker; rejects with AuthoredToolError (TIMEOUT, CANCELLED, ADAPTER_FAILED, IPC_*). */
  async call(msg: Omit<CallMessage, 'type' | 'id'>, hooks: CallHooks, signal: AbortSignal | undefined, deadlineMs: number): Promise<PoolCallResult> {
    const t0 = Date.now();
    const worker = await this.acquire(signal, deadlineMs);
    const left = Math.max(1, deadlineMs - (Date.now() - t0));
    const reply = await worker.call(msg, hooks, signal, left);
    return { reply, workerId: worker.id, workerPid: worker.tree.pid };
  }

  /** Live worker pids (for tests and the operator). */
  pids(): number[] {
    return [...this.workers].map((w) => w.tree.pid);
  }

  /** Stops every worker; resolves when all trees are gone. */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.reject(new AuthoredToolError('ADAPTER_FAILED', 'the tool host pool was closed'));
    await Promise.all([...this.workers].map((w) => w.retire('closed')));
  }

  private async acquire(signal: AbortSignal | undefined, deadlineMs: number): Promise<ToolHostWorker> {
    if (this.closed) throw new AuthoredToolError('ADAPTER_FAILED', 'the tool host pool is closed');
    const w = this.idle.pop();
    if (w) {
      this.stats.idle = this.idle.length;
      return w;
    }
    if (this.workers.size < this.config.poolSize) return this.start();
    return new Promise<ToolHostWorker>((resolve, reject) => {
      const waiter = {
        resolve: (x: ToolHostWorker) => {
          cleanup();
          resolve(x);
        },
        reject: (e: unknown) => {
          cleanup();
          reject(e);
        },
      };
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
      };
      const onAbort = (): void => waiter.reject(new AuthoredToolError('CANCELLED', 'the call was cancelled while it waited for a free tool host'));
      const timer = setTimeout(() => waiter.reject(new AuthoredToolError('TIMEOUT', `no tool host was free within the deadline of ${deadlineMs} ms (pool size ${this.config.poolSize})`)), deadlineMs);
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private async start(): Promise<ToolHostWorker> {
    let w: ToolHostWorker;
    try {
      w = new ToolHostWorker(this.supervisor, this.spec, this.config);
    } catch (err) {
      throw new AuthoredToolError('ADAPTER_FAILED', `the tool host for ${this.spec.toolName} could not be started: ${(err as Error).message}`, { cause: err });
    }
    this.stats.started++;
    this.workers.add(w);
    this.stats.live = this.workers.size;
    w.onIdle = (x, reusable) => this.onIdle(x, reusable);
    await w.ready;
    return w;
  }

  private onIdle(w: ToolHostWorker, reusable: boolean): void {
    if (reusable && !this.closed) {
      const next = this.waiters.shift();
      if (next) next.resolve(w);
      else this.idle.push(w);
      this.stats.idle = this.idle.length;
      return;
    }
    if (!this.workers.delete(w)) return;
    const i = this.idle.indexOf(w);
    if (i >= 0) this.idle.splice(i, 1);
    const r = w.retired ?? 'crash';
    this.stats.retired[r] = (this.stats.retired[r] ?? 0) + 1;
    this.stats.live = this.workers.size;
    this.stats.idle = this.idle.length;
    if (this.closed || r === 'closed') return;
    // A replacement starts now, so the next call finds a warm host; a waiter gets it first.
    const next = this.waiters.shift();
    this.start().then(
      (fresh) => (next ? next.resolve(fresh) : this.onIdle(fresh, true)),
      (err) => next?.reject(err),
    );
  }
}
