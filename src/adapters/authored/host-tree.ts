// Starting a tool host, for both tiers: a supervised tree with a data pipe (no artifacts, a short
// tail, the configured grace), the zod-checked channel over it, and the hello handshake under the
// start timeout. What a host does with its calls, and how it dies, stays with its owner
// (tool-host-worker.ts: one call at a time; thread-host.ts: many, by id).
import type { ProcessSupervisor, SupervisedTree, TreeOutcome } from '../../process/index.js';
import { Channel, FromHostSchema, IpcError, TOOL_HOST_PROTOCOL, type FromHostMessage, type ToHostMessage } from '../../ipc/index.js';
import { AuthoredToolError } from './errors.js';
import type { ToolHostConfig } from './host-config.js';

export interface HostLaunch {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
}

export interface HostTreeEvents {
  /** The host said hello in this supervisor's protocol. */
  onReady(): void;
  /** Every message after the hello (a second hello is a protocol error, reported by onEnd). */
  onMessage(m: FromHostMessage): void;
  /**
   * The host is finished: the channel closed (null, 'crash'), broke the protocol (IpcError,
   * 'protocol'), the host did not start in time or its tree ended (AuthoredToolError, 'crash').
   * May be called more than once; the owner keeps the first.
   */
  onEnd(err: IpcError | AuthoredToolError | null, why: 'crash' | 'protocol'): void;
}

export class HostTree {
  readonly tree: SupervisedTree;
  helloSeen = false;
  private readonly channel: Channel<FromHostMessage, ToHostMessage>;
  private readonly startTimer: NodeJS.Timeout;

  /** `name` says which host in errors: "the tool host", "the trusted tool host". */
  constructor(supervisor: ProcessSupervisor, launch: HostLaunch, config: ToolHostConfig, private readonly name: string, private readonly ev: HostTreeEvents) {
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
    if (!stream) throw new AuthoredToolError('ADAPTER_FAILED', `${name} was started without its data pipe`);
    this.channel = new Channel(stream, {
      incoming: FromHostSchema,
      maxFrameBytes: config.maxFrameBytes,
      onMessage: (m) => this.onFrame(m),
      onError: (e) => ev.onEnd(e.code === 'IPC_CLOSED' ? null : e, e.code === 'IPC_CLOSED' ? 'crash' : 'protocol'),
    });
    this.startTimer = setTimeout(() => {
      if (!this.helloSeen) ev.onEnd(new AuthoredToolError('ADAPTER_FAILED', `${name} did not start within ${config.startTimeoutMs} ms`), 'crash');
    }, config.startTimeoutMs);
    void this.tree.done.then((o) => {
      clearTimeout(this.startTimer);
      ev.onEnd(new AuthoredToolError('ADAPTER_FAILED', hostExitReason(name, o)), 'crash');
    });
  }

  /** Writes the messages in one write; false once the channel has failed. */
  send(...messages: ToHostMessage[]): boolean {
    return this.channel.send(...messages);
  }

  /** Ends the channel with a protocol error (reported through onEnd once). */
  fail(code: IpcError['code'], message: string): void {
    this.channel.fail(new IpcError(code, message));
  }

  /** Stops reading and closes the pipe, reporting nothing. */
  close(): void {
    clearTimeout(this.startTimer);
    this.channel.close();
  }

  private onFrame(m: FromHostMessage): void {
    if (!this.helloSeen) {
      if (m.type !== 'hello') return this.fail('IPC_VERSION', `${this.name}'s first message was '${m.type}', not hello`);
      if (m.protocol !== TOOL_HOST_PROTOCOL) return this.fail('IPC_VERSION', `${this.name} speaks protocol ${m.protocol}; this supervisor speaks ${TOOL_HOST_PROTOCOL}`);
      this.helloSeen = true;
      clearTimeout(this.startTimer);
      this.ev.onReady();
      return;
    }
    if (m.type === 'hello') return this.fail('IPC_UNEXPECTED', `a second hello from ${this.name}`);
    this.ev.onMessage(m);
  }
}

/** How a host's tree ended, for the call it failed: signal or code, the heap limit, stderr's end. */
export function hostExitReason(name: string, o: TreeOutcome): string {
  const how = o.signal ? `was killed by ${o.signal}` : `exited with code ${o.exitCode}`;
  const oom = /heap out of memory|Allocation failed/i.test(o.stderr.tail) ? ' (out of memory: the heap limit was reached)' : '';
  const tail = o.stderr.tail.trim().split('\n').slice(-3).join(' | ').slice(0, 300);
  return `${name} ${how}${oom}${tail ? `; stderr ends: ${tail}` : ''}`;
}
