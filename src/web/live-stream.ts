// Live updates over Server-Sent Events. EventSource cannot send headers, so the stream is
// authenticated by the session cookie alone and carries only what changed (kind, id, state: no
// text); the page fetches what it shows with its CSRF token. Each event's id is the change's seq in
// the store's operator feed (SQLite migration 10, control-plane migration 7), so a reconnecting
// EventSource's Last-Event-ID resumes exactly after the last change it saw: a reconnect misses
// nothing. The feed is read through the operator's port, one look at a time.
import type { ServerResponse } from 'node:http';
import type { OperatorStore } from '../operator/operator-store.js';

export interface LiveStreamOptions {
  /** How often the feed's head is read (one indexed row): a bound on how late a change is sent. */
  pollMs: number;
  /**
   * Told once when looks at the feed start failing (a control plane gone for a while; each tick
   * tries again), and once with null when they work again: one line per outage, not one per tick.
   */
  onError: (err: unknown | null) => void;
  /** A stream ends after this long and the browser reconnects with Last-Event-ID (tests shorten it). */
  maxStreamMs: number;
  heartbeatMs: number;
  /** At most this many open streams; one more is refused (503), bounding what a page can hold open. */
  maxStreams: number;
}

interface Stream {
  res: ServerResponse;
  seq: number;
  endAt: number;
}

export class LiveStreams {
  private readonly streams = new Set<Stream>();
  private readonly poll: NodeJS.Timeout;
  private readonly beat: NodeJS.Timeout;
  private head: number;
  /** One look at the feed at a time: a slow server is not asked again while it answers. */
  private looking = false;
  /** Whether the last look failed (the outage was reported). */
  private failing = false;

  private constructor(private readonly store: OperatorStore, head: number, private readonly o: LiveStreamOptions) {
    this.head = head;
    this.poll = setInterval(() => void this.tick(), o.pollMs);
    this.beat = setInterval(() => this.heartbeat(), o.heartbeatMs);
    this.poll.unref();
    this.beat.unref();
  }

  static async start(store: OperatorStore, o: LiveStreamOptions): Promise<LiveStreams> {
    return new LiveStreams(store, await store.feedHead(), o);
  }

  get full(): boolean {
    return this.streams.size >= this.o.maxStreams;
  }

  /** Starts a stream that sends every change after `after` (the Last-Event-ID, or the page's state seq). */
  async open(res: ServerResponse, after: number, headers: Record<string, string>): Promise<void> {
    const continuous = await this.store.feedContinuousAfter(after);
    const head = continuous ? after : await this.store.feedHead();
    res.writeHead(200, { ...headers, 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.write('retry: 1000\n\n');
    const s: Stream = { res, seq: head, endAt: Date.now() + this.o.maxStreamMs };
    this.streams.add(s);
    // The browser went away (a closed tab, a reconnect): nothing more is written to it.
    res.on('close', () => this.streams.delete(s));
    // Older changes were dropped from the feed: the page reloads its lists, then follows from here.
    if (!continuous) res.write(`id: ${s.seq}\nevent: reset\ndata: {}\n\n`);
    await this.send(s);
  }

  close(): void {
    clearInterval(this.poll);
    clearInterval(this.beat);
    for (const s of this.streams) this.end(s);
  }

  /** The one way a stream stops being written: out of the set first, then ended. */
  private end(s: Stream): void {
    this.streams.delete(s);
    if (!s.res.writableEnded) s.res.end();
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    for (const s of this.streams) if (now >= s.endAt) this.end(s);
    if (this.looking) return;
    this.looking = true;
    try {
      const head = await this.store.feedHead();
      if (this.failing) {
        this.failing = false;
        this.o.onError(null);
      }
      if (head === this.head) return;
      this.head = head;
      for (const s of this.streams) await this.send(s);
    } catch (err) {
      if (!this.failing) this.o.onError(err);
      this.failing = true;
    } finally {
      this.looking = false;
    }
  }

  private async send(s: Stream): Promise<void> {
    for (;;) {
      const changes = await this.store.changesAfter(s.seq);
      if (!this.streams.has(s)) return;
      for (const c of changes) {
        s.res.write(`id: ${c.seq}\nevent: change\ndata: ${JSON.stringify({ seq: c.seq, kind: c.kind, ref: c.ref, sessionId: c.sessionId, status: c.status })}\n\n`);
        s.seq = c.seq;
      }
      if (changes.length < 500) return;
    }
  }

  private heartbeat(): void {
    for (const s of this.streams) s.res.write(': keep-alive\n\n');
  }
}
