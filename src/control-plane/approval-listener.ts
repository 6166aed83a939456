// Hearing answers to this member's approval requests: one connection of its own holding
// LISTEN supervisor_approvals. A notification wakes the request it names; every (re)connect and
// every poll interval wake them all, because a notification sent while the connection was down
// (pg_terminate_backend, a restart, a network cut) is gone for good. Waiters read the row again
// when woken, so the row stays the only truth and a lost notification delays an answer by at most
// one poll interval.
import pg from 'pg';
import { APPROVAL_CHANNEL } from './approvals.js';

export interface ApprovalListenerOptions {
  /** How often every waiter reads its row again, notification or not (default 2000 ms). */
  pollMs?: number;
  /** The longest pause between reconnect attempts (default 2000 ms; the first is after 100 ms). */
  maxBackoffMs?: number;
  /** Told when the connection fails or ends (it is tried again). */
  onError?: (err: unknown) => void;
}

/** pg_stat_activity.application_name of the listening connection (the tests end it by this name). */
export const LISTENER_APPLICATION_NAME = 'supervisor-approval-listener';

export class ApprovalListener {
  private readonly pollMs: number;
  private readonly maxBackoffMs: number;
  private client: pg.Client | null = null;
  private readonly waiters = new Map<string, Set<() => void>>();
  private pollTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = 100;
  private closed = false;
  /** Completed connects (LISTEN issued); more than one means it reconnected. */
  connects = 0;

  constructor(private readonly url: string, private readonly o: ApprovalListenerOptions = {}) {
    this.pollMs = o.pollMs ?? 2000;
    this.maxBackoffMs = o.maxBackoffMs ?? 2000;
  }

  /** Connects and listens; resolves after the first LISTEN (or throws why it could not). */
  async start(): Promise<void> {
    this.pollTimer = setInterval(() => this.wakeAll(), this.pollMs);
    this.pollTimer.unref();
    await this.connect();
  }

  /**
   * Resolves when `id` may have changed: its notification, a (re)connect, a poll tick, `ms`
   * passing, or `signal` aborting. The caller reads the row again either way.
   */
  waitForChange(id: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiters.get(id) ?? new Set();
      this.waiters.set(id, set);
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.retryTimer);
    this.wakeAll();
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({ connectionString: this.url, application_name: LISTENER_APPLICATION_NAME, connectionTimeoutMillis: 5000 });
    // A connection the server ends emits 'error' and then 'end'; both lead to one reconnect.
    let lost = false;
    const onLost = (err?: unknown): void => {
      if (lost) return;
      lost = true;
      if (err) this.o.onError?.(err);
      if (this.client === c) this.client = null;
      this.scheduleReconnect();
    };
    c.on('error', onLost);
    c.on('end', () => onLost());
    c.on('notification', (n) => {
      if (n.channel === APPROVAL_CHANNEL && n.payload) this.wake(n.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${APPROVAL_CHANNEL}`);
    } catch (err) {
      c.removeAllListeners('end');
      await c.end().catch(() => {});
      if (this.connects === 0) throw err;
      onLost(err);
      return;
    }
    if (this.closed) {
      await c.end().catch(() => {});
      return;
    }
    this.client = c;
    this.connects++;
    this.backoffMs = 100;
    // Whatever was answered while nobody listened is read now.
    this.wakeAll();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed) void this.connect();
    }, wait);
    this.retryTimer.unref();
  }

  private wake(id: string): void {
    for (const done of [...(this.waiters.get(id) ?? [])]) done();
  }

  private wakeAll(): void {
    for (const id of [...this.waiters.keys()]) this.wake(id);
  }
}
