// What a member hears from the others: answers to its approval requests and cancels of its
// sessions and tasks, on one connection of its own holding LISTEN supervisor_approvals and
// supervisor_cancels. A notification wakes what it names; every (re)connect and every poll
// interval wake everything, because a notification sent while the connection was down
// (pg_terminate_backend, a restart, a network cut) is gone for good. Woken, a waiter reads its row
// again (and a watched session's cancel flag is read here), so the rows stay the only truth and a
// lost notification delays nothing by more than one poll interval.
import pg from 'pg';
import { APPROVAL_CHANNEL } from './approvals.js';
import { CANCEL_CHANNEL } from './sessions.js';

export interface ListenerOptions {
  /** How often every waiter reads its row again, notification or not (default 2000 ms). */
  pollMs?: number;
  /** The longest pause between reconnect attempts (default 2000 ms; the first is after 100 ms). */
  maxBackoffMs?: number;
  /** Told when the connection fails or ends (it is tried again). */
  onError?: (err: unknown) => void;
}

/** pg_stat_activity.application_name of the listening connection (the tests end it by this name). */
export const LISTENER_APPLICATION_NAME = 'supervisor-listener';

export class ControlPlaneListener {
  private readonly pollMs: number;
  private readonly maxBackoffMs: number;
  private client: pg.Client | null = null;
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Sessions and tasks whose cancel this member acts on: id → what to do (called once). */
  private readonly cancelWatch = new Map<string, (by: string) => void>();
  private pollTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private backoffMs = 100;
  private closed = false;
  /** Completed connects (LISTEN issued); more than one means it reconnected. */
  connects = 0;

  constructor(private readonly url: string, private readonly o: ListenerOptions = {}) {
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

  /** Calls `onCancel` once when an operator on any member cancels session or task `id` (its flag is read on every wake too). */
  watchCancel(id: string, onCancel: (by: string) => void): void {
    this.cancelWatch.set(id, onCancel);
    void this.readCancels([id]);
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
      if (!n.payload) return;
      if (n.channel === APPROVAL_CHANNEL) this.wake(n.payload);
      else if (n.channel === CANCEL_CHANNEL && this.cancelWatch.has(n.payload)) void this.readCancels([n.payload]);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${APPROVAL_CHANNEL}; LISTEN ${CANCEL_CHANNEL}`);
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
    if (this.cancelWatch.size > 0) void this.readCancels([...this.cancelWatch.keys()]);
  }

  /** Reads the cancel flags of watched sessions and tasks on the listening connection; a read that fails waits for the next wake. */
  private async readCancels(ids: string[]): Promise<void> {
    const c = this.client;
    if (!c) return;
    try {
      const r = await c.query<{ id: string; by: string | null }>(
        `SELECT id, cancel_requested_by AS by FROM sessions WHERE id = ANY($1) AND cancel_requested_at IS NOT NULL
         UNION ALL SELECT id, cancel_requested_by FROM tasks WHERE id = ANY($1) AND cancel_requested_at IS NOT NULL`,
        [ids],
      );
      for (const row of r.rows) {
        const onCancel = this.cancelWatch.get(row.id);
        if (!onCancel) continue;
        this.cancelWatch.delete(row.id);
        onCancel(row.by ?? 'an operator');
      }
    } catch (err) {
      this.o.onError?.(err);
    }
  }
}
