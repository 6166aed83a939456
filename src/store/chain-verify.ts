// Verifying a session's audit chain: recompute every hash from the genesis, check every link and
// the seq numbering, then hold the head against the newest event. The first break is reported with
// its seq and the field that is wrong, plus a diagnosis (what edit explains it) in `detail`.
import type { Database } from './database.js';
import { parseCanonicalJson } from './canonical-json.js';
import { eventHash, genesisHash } from './event-chain.js';
import { SessionNotFoundError } from './store-errors.js';

export type ChainBreakField = 'hash' | 'prev_hash' | 'seq' | 'payload' | 'head' | 'missing';

export type ChainVerification =
  | { ok: true; sessionId: string; count: number; head: string | null }
  | { ok: false; sessionId: string; seq: number; field: ChainBreakField; detail: string };

type EventRow = ChainEventRow;

// Diagnosis of a renumbered event tries other seqs near the stored one; bounded so a hostile
// store cannot make verification run for hours (the break is reported either way).
const MAX_RENUMBER_PROBES = 100_000;

/** Ids of every session the store knows of: from sessions, heads and events (rows may have been deleted). */
export function auditedSessionIds(db: Database): string[] {
  return db
    .prepare('SELECT id FROM sessions UNION SELECT session_id FROM chain_heads UNION SELECT session_id FROM runtime_events ORDER BY 1')
    .pluck()
    .all() as string[];
}

/** True if the store has any trace of the session (its row, its head or an event). */
export function sessionKnown(db: Database, sessionId: string): boolean {
  return (
    db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM sessions WHERE id = @id) OR EXISTS (SELECT 1 FROM chain_heads WHERE session_id = @id)
           OR EXISTS (SELECT 1 FROM runtime_events WHERE session_id = @id)`,
      )
      .pluck()
      .get({ id: sessionId }) === 1
  );
}

/**
 * Verifies one session's chain. Not principal-scoped: this is the operator's check over the whole
 * store (`supervisor audit verify`). Throws SessionNotFoundError if the store has no trace of it.
 */
export function verifyChain(db: Database, sessionId: string): ChainVerification {
  // One read transaction: a supervisor appending concurrently cannot move the head between our
  // reading the events and reading the head.
  return db.transaction(() => {
    if (!sessionKnown(db, sessionId)) throw new SessionNotFoundError(sessionId);
    return verifyInSnapshot(db, sessionId);
  })();
}

/** Verifies every session in the store, in id order. */
export function verifyAllChains(db: Database): ChainVerification[] {
  return auditedSessionIds(db).map((id) => verifyChain(db, id));
}

/**
 * What verification asks of a store besides the events themselves, so one verifier serves the
 * SQLite store and the PostgreSQL control plane alike (each answers from its own snapshot).
 */
export interface ChainLookups {
  /** The head row as stored, if any. */
  head(): { seq: number; hash: string } | undefined;
  /** Whether the session's own row exists. */
  sessionRowExists(): boolean;
  /** prev_hash of the event stored at `seq`, if any. */
  prevHashAt(seq: number): string | undefined;
  /** The highest seq named by an event or by the head, or null when there is neither. */
  topSeq(): number | null;
}

/** One stored event as verification reads it (the columns of runtime_events). */
export interface ChainEventRow {
  seq: number;
  kind: string;
  at: number;
  payload: string;
  prev_hash: string;
  hash: string;
}

function verifyInSnapshot(db: Database, sessionId: string): ChainVerification {
  const rows = db
    .prepare('SELECT seq, kind, at, payload, prev_hash, hash FROM runtime_events WHERE session_id = ? ORDER BY seq')
    .iterate(sessionId) as IterableIterator<EventRow>;
  return verifyChainEvents(sessionId, rows, sqliteLookups(db, sessionId));
}

function sqliteLookups(db: Database, sessionId: string): ChainLookups {
  return {
    head: () => db.prepare('SELECT seq, hash FROM chain_heads WHERE session_id = ?').get(sessionId) as { seq: number; hash: string } | undefined,
    sessionRowExists: () => db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(sessionId) !== undefined,
    prevHashAt: (seq) => db.prepare('SELECT prev_hash FROM runtime_events WHERE session_id = ? AND seq = ?').pluck().get(sessionId, seq) as string | undefined,
    topSeq: () =>
      db
        .prepare('SELECT MAX(m) FROM (SELECT MAX(seq) AS m FROM runtime_events WHERE session_id = @id UNION ALL SELECT seq FROM chain_heads WHERE session_id = @id)')
        .pluck()
        .get({ id: sessionId }) as number | null,
  };
}

/**
 * Verifies one session's events (in seq order, as stored) against its head: the engine-neutral
 * part of verifyChain. The caller reads `rows` and answers `lookups` from one consistent snapshot.
 * Lookups are asked only after `rows` was left (a SQLite iterator holds the connection).
 */
export function verifyChainEvents(sessionId: string, rows: Iterable<ChainEventRow>, lookups: ChainLookups): ChainVerification {
  const fail = (seq: number, field: ChainBreakField, detail: string): ChainVerification => ({ ok: false, sessionId, seq, field, detail });
  let expectedSeq = 1;
  let expectedPrev = genesisHash(sessionId);
  let broken: EventRow | undefined;
  for (const row of rows) {
    const intact =
      row.seq === expectedSeq &&
      row.prev_hash === expectedPrev &&
      eventHash(row.prev_hash, sessionId, row.seq, row.kind, row.at, row.payload) === row.hash &&
      parseCanonicalJson(row.payload).ok;
    if (!intact) {
      broken = row;
      break; // leaves the iterator, which frees the connection for the diagnosis queries
    }
    expectedPrev = row.hash;
    expectedSeq++;
  }
  if (broken) {
    const d = diagnose(lookups, sessionId, broken, expectedSeq, expectedPrev);
    return fail(d.seq, d.field, d.detail);
  }

  const count = expectedSeq - 1;
  const head = lookups.head();
  if (!head) {
    if (count === 0) {
      // SessionStore writes session.created with the session row, so a session without events lost them.
      if (lookups.sessionRowExists()) return fail(1, 'missing', 'the session exists but its chain is empty and it has no head: every event and the head were deleted');
      return { ok: true, sessionId, count: 0, head: null };
    }
    return fail(count, 'head', `the chain has ${count} event(s) but its head row is missing: the head was deleted`);
  }
  if (head.seq > count) {
    const gone = head.seq - count === 1 ? `event ${count + 1} is` : `events ${count + 1}–${head.seq} are`;
    return fail(count + 1, 'missing', `the head records ${head.seq} event(s) but the chain ends at seq ${count}: ${gone} missing — the newest events were deleted (or the head was rewritten)`);
  }
  if (head.seq < count) {
    return fail(head.seq + 1, 'head', `the head records ${head.seq} event(s) but the chain continues to seq ${count}: events were added after the head without moving it (inserted), or the head was rolled back`);
  }
  if (head.hash !== expectedPrev) {
    return fail(count, 'head', `the head's hash differs from the hash of the newest event (seq ${count}): the head was forged, or the newest event was replaced by a re-hashed copy`);
  }
  return { ok: true, sessionId, count, head: head.hash };
}

interface Diagnosis {
  seq: number;
  field: ChainBreakField;
  detail: string;
}

function diagnose(lookups: ChainLookups, sessionId: string, row: EventRow, expectedSeq: number, expectedPrev: string): Diagnosis {
  const selfHash = (prev: string, seq: number) => eventHash(prev, sessionId, seq, row.kind, row.at, row.payload);
  const consistent = selfHash(row.prev_hash, row.seq) === row.hash;
  const writtenAs = consistent ? null : originalSeq(lookups, row, selfHash);

  if (row.seq < expectedSeq) {
    return {
      seq: row.seq,
      field: 'seq',
      detail: `an event is stored at seq ${row.seq}, before the first event (seq 1)` + (writtenAs === null ? ': it was inserted' : `; it was written as seq ${writtenAs} and renumbered`),
    };
  }
  if (writtenAs !== null) {
    return { seq: row.seq, field: 'seq', detail: `the event stored at seq ${row.seq} was written as seq ${writtenAs}: events were renumbered or reordered` };
  }
  if (row.seq > expectedSeq) {
    const gone = row.seq - expectedSeq === 1 ? `event ${expectedSeq} is` : `events ${expectedSeq}–${row.seq - 1} are`;
    return { seq: expectedSeq, field: 'missing', detail: `${gone} missing (the next stored event is seq ${row.seq}): deleted from the middle of the chain` };
  }
  const payload = parseCanonicalJson(row.payload);
  if (!payload.ok) {
    return { seq: row.seq, field: 'payload', detail: `the stored payload is ${payload.reason}: it was edited after it was written` };
  }
  if (consistent) {
    // The row hashes correctly over its own prev_hash, but that is not the previous event's hash.
    const before = row.seq === 1 ? 'the genesis hash of this session' : `the hash of event ${row.seq - 1}`;
    return {
      seq: row.seq,
      field: 'prev_hash',
      detail: `prev_hash is not ${before}: this event (or the one before it) was replaced by a re-hashed forgery, or inserted`,
    };
  }
  if (row.prev_hash !== expectedPrev && selfHash(expectedPrev, row.seq) === row.hash) {
    return { seq: row.seq, field: 'prev_hash', detail: 'the prev_hash column was edited: the event hashes correctly only over the previous event’s real hash' };
  }
  // Contents versus hash: if the next event (or the head) still links to the stored hash, the hash
  // is original and the kind, at or payload columns were edited.
  const next = lookups.prevHashAt(row.seq + 1);
  const linked = next ?? lookups.head()?.hash;
  if (linked === row.hash) {
    return {
      seq: row.seq,
      field: 'hash',
      detail: `kind, at or payload of event ${row.seq} was edited: its contents no longer match its hash, which ${next !== undefined ? `event ${row.seq + 1}` : 'the head'} still links to`,
    };
  }
  return { seq: row.seq, field: 'hash', detail: `the stored hash of event ${row.seq} matches neither its contents nor the next link: the event or its hash was rewritten` };
}

/** The seq this event was hashed at, if it is not where it is stored now (renumbering, swaps). */
function originalSeq(lookups: ChainLookups, row: EventRow, selfHash: (prev: string, seq: number) => string): number | null {
  const top = lookups.topSeq();
  const limit = Math.max(top ?? 0, row.seq) + 1;
  let probes = 0;
  for (let d = 1; probes < MAX_RENUMBER_PROBES && (row.seq - d >= 1 || row.seq + d <= limit); d++) {
    for (const s of [row.seq - d, row.seq + d]) {
      if (s < 1 || s > limit) continue;
      probes++;
      if (selfHash(row.prev_hash, s) === row.hash) return s;
    }
  }
  return null;
}
