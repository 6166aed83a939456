// The per-session hash chain of runtime events. Each event's hash covers the previous hash and the
// canonical JSON of {session_id, seq, kind, at, payload}; the chain starts from a genesis hash
// derived from the session id, so an event cannot be moved to another session or position
// without its hash changing. The head (newest seq and hash) is written in the same transaction to
// its own table, so that deleting the newest events leaves a head that says more than remains.
//
// Payloads are durable views: callers redact before they call. The store never sees raw secrets.
import { createHash } from 'node:crypto';
import type { Database } from './database.js';
import { canonicalJson, CanonicalJsonError, parseCanonicalJson, type JsonValue } from './canonical-json.js';
import { ChainInconsistentError, SessionNotFoundError, StoreInputError } from './store-errors.js';
import { faultAfterCommit, faultOnEvent } from './fault-injection.js';
import type { ChainEventRow } from './chain-verify.js';

/** A payload larger than this is refused: the durable view is meant to be bounded already. */
export const MAX_EVENT_PAYLOAD_BYTES = 1024 * 1024;
/** Event kinds are dotted lower-case names such as `effect.approved` or `session.created`. */
export const EVENT_KIND_PATTERN = /^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*$/;
const MAX_KIND_LENGTH = 64;

export interface AppendedEvent {
  sessionId: string;
  seq: number;
  kind: string;
  at: number;
  prevHash: string;
  hash: string;
}

export interface StoredEvent extends AppendedEvent {
  /** The durable view as it was appended. */
  payload: JsonValue;
}

export interface ChainHead {
  sessionId: string;
  seq: number;
  hash: string;
  updatedAt: number;
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** The prev_hash of a session's first event. */
export function genesisHash(sessionId: string): string {
  return sha256(`genesis:${sessionId}`);
}

/**
 * canonical({session_id, seq, kind, at, payload}) spelled out: the keys are already in sorted
 * order and `payloadJson` is canonical, so no second serialization of the payload is needed.
 */
export function eventEnvelope(sessionId: string, seq: number, kind: string, at: number, payloadJson: string): string {
  return `{"at":${JSON.stringify(at)},"kind":${JSON.stringify(kind)},"payload":${payloadJson},"seq":${JSON.stringify(seq)},"session_id":${JSON.stringify(sessionId)}}`;
}

/** hash = sha256(prev_hash + "\n" + canonical({session_id, seq, kind, at, payload})), lower-case hex. */
export function eventHash(prevHash: string, sessionId: string, seq: number, kind: string, at: number, payloadJson: string): string {
  return sha256(`${prevHash}\n${eventEnvelope(sessionId, seq, kind, at, payloadJson)}`);
}

interface PreparedEvent {
  kind: string;
  at: number;
  payloadJson: string;
}
type Append = (sessionId: string, events: readonly PreparedEvent[], opening: boolean) => AppendedEvent[];

// Prepared once per connection: preparing per event would cost more than the insert itself.
const appenders = new WeakMap<Database, Append>();

function appenderFor(db: Database): Append {
  const cached = appenders.get(db);
  if (cached) return cached;
  const head = db.prepare('SELECT seq, hash FROM chain_heads WHERE session_id = ?');
  const sessionExists = db.prepare('SELECT 1 FROM sessions WHERE id = ?').pluck();
  const lastSeq = db.prepare('SELECT MAX(seq) FROM runtime_events WHERE session_id = ?').pluck();
  const insert = db.prepare('INSERT INTO runtime_events (session_id, seq, kind, at, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const upsertHead = db.prepare(`INSERT INTO chain_heads (session_id, seq, hash, updated_at) VALUES (?, ?, ?, ?)
    ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, updated_at = excluded.updated_at`);
  const body = (sessionId: string, events: readonly PreparedEvent[], opening: boolean): AppendedEvent[] => {
    const h = head.get(sessionId) as { seq: number; hash: string } | undefined;
    let seq: number;
    let prevHash: string;
    if (h && !opening) {
      seq = h.seq;
      prevHash = h.hash;
    } else {
      if (sessionExists.get(sessionId) === undefined) {
        throw new SessionNotFoundError(sessionId, `no session row and no chain head in the store ${db.name}${typeof sessionId === 'string' ? '' : `; the id given is a ${typeof sessionId}`}`);
      }
      const last = lastSeq.get(sessionId) as number | null;
      // Only the session's creation opens a chain. A session without a head lost it (or all its
      // events with it): restarting from the genesis would hide that.
      if (!opening) throw new ChainInconsistentError(sessionId, last === null ? 'it has no head row and no events (both deleted?)' : `it has events up to seq ${last} but no head row`);
      if (h || last !== null) throw new ChainInconsistentError(sessionId, 'it was opened already');
      seq = 0;
      prevHash = genesisHash(sessionId);
    }
    const out: AppendedEvent[] = [];
    for (const e of events) {
      seq++;
      const hash = eventHash(prevHash, sessionId, seq, e.kind, e.at, e.payloadJson);
      try {
        insert.run(sessionId, seq, e.kind, e.at, e.payloadJson, prevHash, hash);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
          throw new ChainInconsistentError(sessionId, `an event with seq ${seq} already exists past the head (seq ${seq - 1})`);
        }
        throw err;
      }
      faultOnEvent(db, e.kind);
      out.push({ sessionId, seq, kind: e.kind, at: e.at, prevHash, hash });
      prevHash = hash;
    }
    const last = out[out.length - 1];
    if (last) upsertHead.run(sessionId, last.seq, last.hash, last.at);
    return out;
  };
  // IMMEDIATE takes the write lock before the head is read, so two processes appending to one
  // store cannot both extend the same head. Inside a caller's transaction this is a savepoint.
  const tx = db.transaction(body);
  const append: Append = (...args) => {
    // Whatever was queued for later lands first: the chain's order is the order of the calls.
    flushDeferredWrites(db);
    const appended = tx.immediate(...args);
    faultAfterCommit(db);
    return appended;
  };
  appenders.set(db, append);
  return append;
}

/** Checks kind and at, serializes the payload canonically; shared with SessionStore's own events. */
export function prepareEvent(kind: string, payload: unknown, at: number): string {
  checkKindAndAt(kind, at);
  let payloadJson: string;
  try {
    payloadJson = canonicalJson(payload);
  } catch (err) {
    if (err instanceof CanonicalJsonError) {
      throw new StoreInputError(`payload${err.path.slice(1)}`, `${err.reason} (the payload is the durable view: plain, already redacted JSON)`, { cause: err });
    }
    throw err;
  }
  return checkPayloadSize(payloadJson);
}

/**
 * prepareEvent for a payload already in canonical JSON (a copy of a stored event's, decision 124):
 * the same checks, without serializing it again. Whether it is canonical is the verifier's to say.
 */
export function prepareEventJson(kind: string, payloadJson: string, at: number): string {
  checkKindAndAt(kind, at);
  return checkPayloadSize(payloadJson);
}

function checkKindAndAt(kind: string, at: number): void {
  if (typeof kind !== 'string' || kind.length > MAX_KIND_LENGTH || !EVENT_KIND_PATTERN.test(kind)) {
    throw new StoreInputError('kind', `${JSON.stringify(kind)} is not an event kind; use dotted lower-case words of at most ${MAX_KIND_LENGTH} characters, e.g. "effect.approved"`);
  }
  if (!Number.isSafeInteger(at) || at < 0) {
    throw new StoreInputError('at', `${String(at)} is not a timestamp; pass epoch milliseconds as a non-negative integer`);
  }
}

function checkPayloadSize(payloadJson: string): string {
  const bytes = Buffer.byteLength(payloadJson, 'utf8');
  if (bytes > MAX_EVENT_PAYLOAD_BYTES) {
    throw new StoreInputError('payload', `${bytes} bytes of canonical JSON is over the ${MAX_EVENT_PAYLOAD_BYTES}-byte limit; store a bounded durable view (large output belongs in an artifact, referenced by path and digest)`);
  }
  return payloadJson;
}

/**
 * Appends one event to the session's chain in one transaction: seq = head.seq + 1, prev_hash =
 * head.hash, then the head moves to the new event. The chain was opened (seq 1, prev_hash =
 * sha256("genesis:" + sessionId)) by SessionStore.createSession with `session.created`.
 * `payload` must be the durable view — already redacted; it is hashed and stored as given.
 * Not principal-scoped: the caller (EffectRuntime, SessionStore) has checked ownership already.
 * Throws SessionNotFoundError for an unknown session, ChainInconsistentError if the chain was
 * tampered with so that it cannot be extended, StoreInputError for a bad kind, at or payload.
 */
export function appendEvent(db: Database, sessionId: string, kind: string, payload: unknown, at: number = Date.now()): AppendedEvent {
  const payloadJson = prepareEvent(kind, payload, at);
  return appenderFor(db)(sessionId, [{ kind, at, payloadJson }], false)[0]!;
}

/**
 * Appends several events in one transaction (one commit, one head update): all or none. The
 * commit is most of an append's cost, so an effect that records several steps should use this.
 * Same contract as appendEvent; every input is checked before anything is written.
 */
export function appendEvents(
  db: Database,
  sessionId: string,
  events: readonly { kind: string; payload: unknown; at?: number }[],
): AppendedEvent[] {
  const prepared = prepareAll(events);
  if (prepared.length === 0) return [];
  return appenderFor(db)(sessionId, prepared, false);
}

function prepareAll(events: readonly { kind: string; payload: unknown; at?: number }[]): PreparedEvent[] {
  const now = Date.now();
  return events.map((e, i) => {
    try {
      const at = e.at ?? now;
      return { kind: e.kind, at, payloadJson: prepareEvent(e.kind, e.payload, at) };
    } catch (err) {
      if (err instanceof StoreInputError) throw new StoreInputError(`events[${i}].${err.field}`, err.reason, { cause: err });
      throw err;
    }
  });
}

interface Queued {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Deferred writes and group commit. Writes queued here land in one transaction at the next turn
 * of the event loop (setImmediate), or earlier: any synchronous append to the chain, any
 * SessionStore write and any read of events or messages on the same connection commits the queue
 * first, so nothing written later can land before it and a reader sees its own writes. Each
 * promise settles only after its write committed (or failed): a caller never sees success for a
 * row that is not in the store. One bad write (a tampered chain, a full disk) fails alone: the
 * batch is retried one write at a time.
 */
class WriteQueue {
  private queue: Queued[] = [];
  private scheduled = false;

  constructor(private readonly db: Database) {}

  get size(): number {
    return this.queue.length;
  }

  defer<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // One turn of the event loop gathers every write made meanwhile; by then the caller has
        // usually handed the next effect to its adapter, so the commit overlaps that wait.
        setImmediate(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  /** Commits everything queued, now. A no-op inside a caller's transaction (it must not join it). */
  flush(): void {
    if (this.queue.length === 0 || this.db.inTransaction || !this.db.open) return;
    const batch = this.queue;
    this.queue = [];
    let results: unknown[] | undefined;
    if (batch.length > 1) {
      try {
        // All land together or none do.
        results = this.db.transaction(() => batch.map((q) => q.write())).immediate();
      } catch {
        results = undefined;
      }
    }
    if (results !== undefined) {
      faultAfterCommit(this.db);
      batch.forEach((q, i) => q.resolve(results![i]));
      return;
    }
    for (const q of batch) {
      try {
        const result = this.db.transaction(q.write).immediate();
        faultAfterCommit(this.db);
        q.resolve(result);
      } catch (err) {
        q.reject(err);
      }
    }
  }
}

const queues = new WeakMap<Database, WriteQueue>();

function queueFor(db: Database): WriteQueue {
  let q = queues.get(db);
  if (!q) queues.set(db, (q = new WriteQueue(db)));
  return q;
}

/** Commits the connection's deferred writes now (see WriteQueue); a no-op inside a transaction. */
export function flushDeferredWrites(db: Database): void {
  queues.get(db)?.flush();
}

/** Deferred writes of this connection not committed yet. */
export function deferredWriteCount(db: Database): number {
  return queues.get(db)?.size ?? 0;
}

/**
 * Queues `write` (synchronous, on `db`) to run in the connection's next group commit. Resolves
 * with its result once committed, rejects with what it threw.
 */
export function deferWrite<T>(db: Database, write: () => T): Promise<T> {
  return queueFor(db).defer(write);
}

/**
 * appendEvents, committed with the connection's next group commit rather than now: the effect
 * pipeline's "commit later" mode. Inputs are checked at once (a bad payload rejects before
 * anything is queued). Resolves after the events are committed.
 */
export function appendEventsDeferred(db: Database, sessionId: string, events: readonly { kind: string; payload: unknown; at?: number }[]): Promise<AppendedEvent[]> {
  return appendQueued(db, sessionId, events, 'later');
}

/**
 * appendEvents with group commit. `concurrent` says the caller knows other appends may follow in
 * this turn of the event loop (e.g. more effects are running); a lone caller commits at once.
 * Resolves after the events are committed; rejects with appendEvents' errors.
 */
export function appendEventsGrouped(
  db: Database,
  sessionId: string,
  events: readonly { kind: string; payload: unknown; at?: number }[],
  concurrent: boolean,
): Promise<AppendedEvent[]> {
  // Nobody to share a commit with (and nothing queued to go first): commit now, as appendEvents does.
  return appendQueued(db, sessionId, events, concurrent || deferredWriteCount(db) > 0 ? 'later' : 'now');
}

function appendQueued(db: Database, sessionId: string, events: readonly { kind: string; payload: unknown; at?: number }[], when: 'now' | 'later'): Promise<AppendedEvent[]> {
  let prepared: PreparedEvent[];
  try {
    prepared = prepareAll(events);
  } catch (err) {
    return Promise.reject(err);
  }
  if (prepared.length === 0) return Promise.resolve([]);
  const append = appenderFor(db);
  if (when === 'later') return queueFor(db).defer(() => append(sessionId, prepared, false));
  try {
    return Promise.resolve(append(sessionId, prepared, false));
  } catch (err) {
    return Promise.reject(err);
  }
}

/**
 * For SessionStore, which writes a row and its event atomically (inside its own transaction,
 * which better-sqlite3 turns this one into a savepoint of). `opening` is true only for the
 * session's first event: it is the one call allowed to start a chain from the genesis hash.
 */
export function appendPreparedEvent(db: Database, sessionId: string, kind: string, payloadJson: string, at: number, opening = false): AppendedEvent {
  return appenderFor(db)(sessionId, [{ kind, at, payloadJson }], opening)[0]!;
}

/** The session's head row, as stored (verifyChain says whether it can be trusted). */
export function chainHead(db: Database, sessionId: string): ChainHead | undefined {
  const r = db.prepare('SELECT seq, hash, updated_at FROM chain_heads WHERE session_id = ?').get(sessionId) as
    | { seq: number; hash: string; updated_at: number }
    | undefined;
  return r && { sessionId, seq: r.seq, hash: r.hash, updatedAt: r.updated_at };
}

/** Each stored event's hash by seq: what a copy of the chain is compared with (no payload is read). */
export function chainHashes(db: Database, sessionId: string): Map<number, string> {
  const rows = db.prepare('SELECT seq, hash FROM runtime_events WHERE session_id = ?').all(sessionId) as { seq: number; hash: string }[];
  return new Map(rows.map((r) => [r.seq, r.hash]));
}

/** Events of one session in seq order, payloads parsed. Not principal-scoped (see SessionStore.listEvents). */
export function readEvents(db: Database, sessionId: string, opts: { afterSeq?: number; limit?: number } = {}): StoredEvent[] {
  return readEventRows(db, sessionId, opts).map((r) => {
    const parsed = parseCanonicalJson(r.payload);
    return {
      sessionId,
      seq: r.seq,
      kind: r.kind,
      at: r.at,
      prevHash: r.prev_hash,
      hash: r.hash,
      // A payload that no longer parses is shown as stored text; verifyChain reports it.
      payload: parsed.ok ? parsed.value : r.payload,
    };
  });
}

/** readEvents without parsing the payloads: for a copy of the chain (decision 124), which carries the stored text. */
export function readEventRows(db: Database, sessionId: string, opts: { afterSeq?: number; limit?: number } = {}): ChainEventRow[] {
  flushDeferredWrites(db);
  const limit = Math.min(Math.max(1, Math.floor(opts.limit ?? 1000)), 10_000);
  return db
    .prepare('SELECT seq, kind, at, payload, prev_hash, hash FROM runtime_events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?')
    .all(sessionId, opts.afterSeq ?? 0, limit) as ChainEventRow[];
}
