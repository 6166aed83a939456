// What our two MCP transports (stdio tree, pinned HTTP) share: the SDK's callbacks, the reason a
// transport closed on its own, and the close bookkeeping. stop() runs the transport's shutdown once
// (close() and every later stop() get the same promise), onclose fires at most once whether the
// peer or we ended it, and fail() records the first failure, reports it and stops without waiting.
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { McpError } from './errors.js';

export abstract class OwnedTransportBase<Outcome> implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  /** Why the transport closed on its own (a message over the bound, a bad frame), reported to the next caller. */
  failure: McpError | null = null;

  private closing: Promise<Outcome> | null = null;
  private closedNotified = false;

  abstract start(): Promise<void>;
  abstract send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;

  /** Ends the peer (the whole tree, or the session and every request); runs once, from stop(). */
  protected abstract shutdown(): Promise<Outcome>;

  /** The HTTP status a failed request got, for the connect error's text; none over stdio. */
  httpStatusOf(_err: unknown): number | null {
    return null;
  }

  /** Frees what outlives the peer (after onclose has fired); nothing by default. */
  protected async release(): Promise<void> {}

  /** True once closing has begun or the peer has gone: nothing more is sent. */
  protected get closed(): boolean {
    return this.closing !== null || this.closedNotified;
  }

  /** Closes the transport; resolves when nothing of the peer is left. Idempotent. */
  close(): Promise<void> {
    return this.stop().then(() => undefined);
  }

  /** Like close(), with what the shutdown reports (a tree's kill report) for callers that check it. */
  stop(): Promise<Outcome> {
    this.closing ??= (async () => {
      const outcome = await this.shutdown();
      this.notifyClosed();
      await this.release();
      return outcome;
    })();
    return this.closing;
  }

  /** Tells the protocol layer, once, that the connection is gone (the peer ended, or stop()). */
  protected notifyClosed(): void {
    if (this.closedNotified) return;
    this.closedNotified = true;
    this.onclose?.();
  }

  /** The transport failed by itself: remember the first reason, report it, and close (not awaited). */
  protected fail(err: McpError): void {
    this.failure ??= err;
    this.onerror?.(err);
    void this.stop();
  }
}
