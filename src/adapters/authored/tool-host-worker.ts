// One warm tool host: a supervised tree with a data pipe, a handshake, and one call at a time.
// Anything the child does wrong on the channel ends it with a typed error; its death fails the
// call in flight and nothing else.
import { allowlistedEnv } from '../../process/child-env.js';
import type { ProcessSupervisor, SupervisedTree, TreeOutcome } from '../../process/index.js';
import { Channel, IpcError, TOOL_HOST_PROTOCOL, FromHostSchema, type CallMessage, type FromHostMessage, type ToHostMessage } from '../../ipc/index.js';
import { AuthoredToolError } from './errors.js';
import type { ToolHostConfig } from './host-config.js';
import { hostArgs, hostBindPaths, type HostSpec } from './host-launch.js';
import { sandboxCommand } from '../../process/index.js';

export type HostReply = { ok: true; value: unknown } | { ok: false; code: string; message: string };

export interface CallHooks {
  onLog?: (level: 'info' | 'warn' | 'error', text: string) => void;
  onProgress?: (done: number, total?: number) => void;
}

/** Why a worker left the pool, for tests and the operator view. */
export type RetireReason = 'max-calls' | 'leaked-resources' | 'memory' | 'crash' | 'protocol' | 'timeout' | 'cancelled' | 'closed';

interface Pending {
  id: string;
  hooks: CallHooks;
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
  private readonly channel: Channel<FromHostMessage, ToHostMessage>;
  private helloSeen = false;
  private pending: Pending | null = null;
  private failure: AuthoredToolError | null = null;
  private readySettle!: { resolve: () => void; reject: (e: AuthoredToolError) => void };
  private seq = 0;
  private gone = false;
  private startTimer: NodeJS.Timeout;
  /** Called once per call when the worker may serve again (true) or must go (false). */
  onIdle: (w: ToolHostWorker, reusable: boolean) => void = () => {};

  constructor(supervisor: ProcessSupervisor, spec: HostSpec, private readonly config: ToolHostConfig) {
    this.ready = new Promise<void>((resolve, reject) => (this.readySettle = { resolve, reject }));
    this.ready.catch(() => {});
    const launch =
      spec.tier === 'sandbox'
        ? // The same host and flags inside the OS sandbox: read-only binds of what it reads, no writes,
          // its own pid (and, unless granted, network) namespace, dying with the supervisor.
          sandboxCommand({
            command: process.execPath,
            args: hostArgs(spec, config),
            readOnlyPaths: hostBindPaths(spec),
            writablePaths: [],
            cwd: spec.workspace,
            network: spec.network,
            env: allowlistedEnv(),
            protectedPaths: [supervisor.stateDir],
          })
        : { command: process.execPath, args: hostArgs(spec, config), cwd: spec.workspace, env: allowlistedEnv() };
    this.tree = supervisor.spawnTree({
      command: launch.command,
      args: launch.args,
      cwd: launch.cwd,
      env: launch.env,
      channel: true,
      // Tails only: a tool printing a gigabyte costs a pipe's worth of memory and no disk.
      artifacts: false,
      tailChars: 2_000,
      graceMs: config.graceMs,
      drainAfterExitMs: 200,
    });
    const stream = this.tree.channel;
    if (!stream) throw new AuthoredToolError('ADAPTER_FAILED', 'the tool host was started without its data pipe');
    this.channel = new Channel(stream, {
      incoming: FromHostSchema,
      maxFrameBytes: config.maxFrameBytes,
      onMessage: (m) => this.onMessage(m),
      onError: (e) => this.die(e.code === 'IPC_CLOSED' ? null : e, e.code === 'IPC_CLOSED' ? 'crash' : 'protocol'),
    });
    this.startTimer = setTimeout(() => {
      if (!this.helloSeen) this.die(new AuthoredToolError('ADAPTER_FAILED', `the tool host for ${spec.toolName} did not start within ${config.startTimeoutMs} ms`), 'crash');
    }, config.startTimeoutMs);
    void this.tree.done.then((o) => {
      clearTimeout(this.startTimer);
      this.die(new AuthoredToolError('ADAPTER_FAILED', exitReason(o)), 'crash');
    });
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
        this.channel.send({ type: 'cancel', id });
        const why = code === 'TIMEOUT' ? `the tool ran past its deadline of ${deadlineMs} ms` : 'the call was cancelled';
        // The call is answered by die() once the whole tree is gone: nothing of it outlives the answer.
        this.failure = new AuthoredToolError(code, `${why}; its worker's process tree was stopped`);
        void this.retire(code === 'TIMEOUT' ? 'timeout' : 'cancelled', code === 'TIMEOUT' ? 'timeout' : 'cancelled');
      };
      const timer = setTimeout(() => stopFor('TIMEOUT'), deadlineMs);
      const onAbort = (): void => stopFor('CANCELLED');
      if (signal?.aborted) return stopFor('CANCELLED');
      signal?.addEventListener('abort', onAbort, { once: true });
      this.channel.send({ type: 'call', id, ...msg });
    });
  }

  /** Stops the whole tree; resolves when it is gone. */
  async retire(reason: RetireReason, stop: 'cancelled' | 'timeout' = 'cancelled'): Promise<TreeOutcome> {
    this.retired ??= reason;
    return this.tree.stop(stop);
  }

  private onMessage(m: FromHostMessage): void {
    if (!this.helloSeen) {
      if (m.type !== 'hello') return this.protocol('IPC_VERSION', `the tool host's first message was '${m.type}', not hello`);
      if (m.protocol !== TOOL_HOST_PROTOCOL) return this.protocol('IPC_VERSION', `the tool host speaks protocol ${m.protocol}; this supervisor speaks ${TOOL_HOST_PROTOCOL}`);
      this.helloSeen = true;
      clearTimeout(this.startTimer);
      this.readySettle.resolve();
      return;
    }
    if (m.type === 'hello') return this.protocol('IPC_UNEXPECTED', 'a second hello');
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
    this.channel.fail(new IpcError(code, message));
  }

  /** The worker is finished: fail the call in flight (with the first failure), stop the tree, tell the pool. */
  private die(err: IpcError | AuthoredToolError | null, reason: RetireReason): void {
    if (!this.failure && err) {
      this.failure = err instanceof AuthoredToolError ? err : new AuthoredToolError(err.code, `the tool host broke the protocol (${err.code}): ${err.message}; it was stopped`);
    }
    this.retired ??= reason;
    this.channel.close();
    // Wait for the tree to be gone, so the reason can say how it ended (heap limit, signal).
    void this.tree.stop('cancelled').then((o) => {
      const why = this.failure ?? new AuthoredToolError('ADAPTER_FAILED', exitReason(o));
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

function exitReason(o: TreeOutcome): string {
  const how = o.signal ? `was killed by ${o.signal}` : `exited with code ${o.exitCode}`;
  const oom = /heap out of memory|Allocation failed/i.test(o.stderr.tail) ? ' (out of memory: the heap limit was reached)' : '';
  const tail = o.stderr.tail.trim().split('\n').slice(-3).join(' | ').slice(0, 300);
  return `the tool host ${how}${oom}${tail ? `; stderr ends: ${tail}` : ''}`;
}
