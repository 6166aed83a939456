// The thread tier, supervisor side: one trusted tool host per attached core, a supervised tree
// (records, marker, kill ladder, reconciliation) with the same framed channel as the process
// tier, running many calls at once on its worker threads. A deadline or cancel terminates the
// call's thread; so does a call that left work running on it (reported with the call). A host
// that does not answer the cancel within the grace, crashes or breaks the protocol is stopped
// whole, its calls fail, and the next call starts a fresh one.
import { fileURLToPath } from 'node:url';
import { allowlistedEnv } from '../../process/child-env.js';
import type { ProcessSupervisor, SupervisedTree } from '../../process/index.js';
import { SPAWNS_PER_CALL, type CallMessage, type FromHostMessage, type IpcError, type ToHostMessage } from '../../ipc/index.js';
import { AuthoredToolError } from './errors.js';
import type { ToolHostConfig } from './host-config.js';
import { HostTree, hostExitReason } from './host-tree.js';
import { answerSpawn, type CallHooks, type HostReply } from './tool-host-worker.js';

/** How the host's CANCELLED answer starts for a call no thread had taken yet. */
const NOT_STARTED = 'the call was cancelled before a thread took it';

export const THREAD_HOST_ENTRY = fileURLToPath(new URL('./entry/thread-host-entry.js', import.meta.url));

/** Why the trusted host ended a call's thread after the call (the process tier's retire reason). */
export interface ThreadRetired {
  retired: 'leaked-resources';
  /** What the call left running on its thread (resource kinds, as the process tier reports them). */
  leftRunning: string[];
}

interface Pending {
  hooks: CallHooks;
  /** ctx.agents.spawn requests of this call so far. */
  spawns: number;
  /** The host's leak report for this call, which precedes its reply. */
  leaked: string[] | null;
  resolve: (r: HostReply, leaked: string[] | null) => void;
  reject: (e: AuthoredToolError) => void;
  /** Set once a deadline or cancel was sent: the reply is then this error. */
  stopping: AuthoredToolError | null;
}

/** One host process and the calls it is running. */
class ThreadHostProcess {
  readonly tree: SupervisedTree;
  readonly ready: Promise<void>;
  readonly pending = new Map<string, Pending>();
  dead = false;
  private readonly host: HostTree;
  private settle!: { resolve: () => void; reject: (e: AuthoredToolError) => void };
  private failure: AuthoredToolError | null = null;

  constructor(
    supervisor: ProcessSupervisor,
    workspace: string,
    private readonly config: ToolHostConfig,
    private readonly onRetired: (r: ThreadRetired) => void,
  ) {
    this.ready = new Promise<void>((resolve, reject) => (this.settle = { resolve, reject }));
    this.ready.catch(() => {});
    this.host = new HostTree(
      supervisor,
      {
        command: process.execPath,
        // The main thread only relays; each worker thread gets the heap limit (its resourceLimits).
        args: [THREAD_HOST_ENTRY, `--threads=${config.threads}`, `--heap-mb=${config.heapMb}`, `--max-frame-bytes=${config.maxFrameBytes}`, `--max-result-bytes=${config.maxResultBytes}`],
        cwd: workspace,
        // Trusted is not "given everything": the supervisor's environment (provider keys) stays out.
        env: allowlistedEnv(),
      },
      config,
      'the trusted tool host',
      { onReady: () => this.settle.resolve(), onMessage: (m) => this.onMessage(m), onEnd: (err) => this.die(err) },
    );
    this.tree = this.host.tree;
  }

  get helloSeen(): boolean {
    return this.host.helloSeen;
  }

  send(m: ToHostMessage): void {
    this.host.send(m);
  }

  private onMessage(m: FromHostMessage): void {
    if (m.type === 'hello') return; // the handshake is HostTree's
    const p = this.pending.get(m.id);
    // A call stopped at its deadline may still be answered by the host: that answer is dropped.
    if (!p) return;
    switch (m.type) {
      case 'log':
        p.hooks.onLog?.(m.level, m.text);
        return;
      case 'progress':
        p.hooks.onProgress?.(m.done, m.total);
        return;
      case 'spawn': {
        const open = (): boolean => this.pending.get(m.id) === p && p.stopping === null && !this.dead;
        if (!answerSpawn(p.hooks, m, ++p.spawns, open, (f) => this.host.send(f))) this.host.fail('IPC_UNEXPECTED', `more than ${SPAWNS_PER_CALL} spawn requests in one call`);
        return;
      }
      case 'idle':
        // Sent only for a call that left work running: the host has ended that call's thread.
        p.leaked = m.resources;
        this.onRetired({ retired: 'leaked-resources', leftRunning: m.resources });
        return;
      case 'result':
      case 'error':
        this.pending.delete(m.id);
        if (p.stopping && m.type === 'error' && m.code === 'CANCELLED' && m.message.startsWith(NOT_STARTED)) {
          // Stopped while it waited for a free thread: no thread was terminated, and none had to be.
          p.reject(new AuthoredToolError(p.stopping.code, `${p.stopping.message.split(';')[0]}; it had not started: every thread was busy`));
        } else if (p.stopping) p.reject(p.stopping);
        else p.resolve(m.type === 'result' ? { ok: true, value: m.value } : { ok: false, code: m.code, message: m.message }, p.leaked);
        return;
    }
  }

  /** Stops the whole host; every call in flight fails with the first failure (or its own stop reason). */
  die(err: IpcError | AuthoredToolError | null): void {
    if (!this.failure && err) {
      this.failure = err instanceof AuthoredToolError ? err : new AuthoredToolError(err.code, `the trusted tool host broke the protocol (${err.code}): ${err.message}; it was stopped`);
    }
    if (this.dead) return;
    this.dead = true;
    this.host.close();
    void this.tree.stop('cancelled').then((o) => {
      const why = this.failure ?? new AuthoredToolError('ADAPTER_FAILED', hostExitReason('the trusted tool host', o));
      this.settle.reject(why);
      for (const p of this.pending.values()) p.reject(p.stopping ?? why);
      this.pending.clear();
    });
  }
}

/** The thread tier of one attached core: a trusted host, started on the first call, restarted after it dies. */
export class ThreadToolHost {
  private current: ThreadHostProcess | null = null;
  private seq = 0;
  private closed = false;
  /** For tests and the operator: hosts started, and threads the host ended after a call, by reason. */
  readonly stats: { started: number; retired: Partial<Record<ThreadRetired['retired'], number>> } = { started: 0, retired: {} };

  constructor(
    private readonly supervisor: ProcessSupervisor,
    private readonly workspace: string,
    readonly config: ToolHostConfig,
  ) {}

  /** The live host's pid, if one runs. */
  pid(): number | null {
    return this.current && !this.current.dead ? this.current.tree.pid : null;
  }

  /** Runs one call on a thread; rejects with AuthoredToolError (TIMEOUT, CANCELLED, ADAPTER_FAILED, IPC_*). */
  async call(msg: Omit<CallMessage, 'type' | 'id'>, hooks: CallHooks, signal: AbortSignal | undefined, deadlineMs: number): Promise<{ reply: HostReply; hostPid: number; thread?: ThreadRetired }> {
    if (this.closed) throw new AuthoredToolError('ADAPTER_FAILED', 'the trusted tool host is closed');
    if (signal?.aborted) throw new AuthoredToolError('CANCELLED', 'the call was cancelled before it started');
    const t0 = Date.now();
    const host = this.host();
    // Only a host still starting costs a promise turn.
    if (!host.helloSeen) await host.ready;
    const left = Math.max(1, deadlineMs - (Date.now() - t0));
    const id = `t${++this.seq}`;
    let leaked: string[] | null = null;
    const reply = await new Promise<HostReply>((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        clearTimeout(grace);
        signal?.removeEventListener('abort', onAbort);
      };
      const p: Pending = {
        hooks,
        spawns: 0,
        leaked: null,
        stopping: null,
        resolve: (r, l) => {
          done();
          leaked = l;
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      };
      let grace: NodeJS.Timeout | undefined;
      const stopFor = (code: 'TIMEOUT' | 'CANCELLED'): void => {
        if (p.stopping || !host.pending.has(id)) return;
        const why = code === 'TIMEOUT' ? `the tool ran past its deadline of ${left} ms` : 'the call was cancelled';
        p.stopping = new AuthoredToolError(code, `${why}; the thread that ran it was terminated`);
        host.send({ type: 'cancel', id });
        // A host that cannot stop the thread (stuck outside JavaScript) is stopped whole.
        grace = setTimeout(() => {
          p.stopping = new AuthoredToolError(code, `${why}; its thread did not stop within ${this.config.graceMs} ms, so the trusted tool host's whole tree was stopped`);
          host.die(null);
        }, this.config.graceMs);
      };
      const timer = setTimeout(() => stopFor('TIMEOUT'), left);
      const onAbort = (): void => stopFor('CANCELLED');
      signal?.addEventListener('abort', onAbort, { once: true });
      host.pending.set(id, p);
      host.send({ type: 'call', id, ...msg });
    });
    return leaked ? { reply, hostPid: host.tree.pid, thread: { retired: 'leaked-resources', leftRunning: leaked } } : { reply, hostPid: host.tree.pid };
  }

  /** Stops the host; resolves when its tree is gone. */
  async close(): Promise<void> {
    this.closed = true;
    const h = this.current;
    this.current = null;
    if (!h) return;
    h.die(new AuthoredToolError('ADAPTER_FAILED', 'the trusted tool host was closed'));
    await h.tree.done;
  }

  private host(): ThreadHostProcess {
    if (this.current && !this.current.dead) return this.current;
    try {
      this.current = new ThreadHostProcess(this.supervisor, this.workspace, this.config, (r) => {
        this.stats.retired[r.retired] = (this.stats.retired[r.retired] ?? 0) + 1;
      });
    } catch (err) {
      throw new AuthoredToolError('ADAPTER_FAILED', `the trusted tool host could not be started: ${(err as Error).message}`, { cause: err });
    }
    this.stats.started++;
    return this.current;
  }
}

