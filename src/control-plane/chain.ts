// The per-session audit chain on PostgreSQL. Hashing, canonical JSON and verification are the
// SQLite store's own functions (store/event-chain.ts, store/chain-verify.ts): the two engines keep
// one definition of a chain. What differs is how the chain stays linear when several members append
// at once: the head row is locked (SELECT … FOR UPDATE) inside the appending transaction, so the
// next append waits for this one to commit and then extends the head it left.
import type pg from 'pg';
import { eventHash, genesisHash, prepareEvent, prepareEventJson, type AppendedEvent, type StoredEvent } from '../store/event-chain.js';
import { parseCanonicalJson } from '../store/canonical-json.js';
import { verifyChainEvents, type ChainEventRow, type ChainVerification } from '../store/chain-verify.js';
import { ChainInconsistentError, SessionNotFoundError, StoreInputError } from '../store/store-errors.js';
import type { ControlPlanePool, Queryable } from './connect.js';

/** An event to append: its payload as a value, or (a copy of a stored event) as the canonical text it is stored as. */
export type NewChainEvent = { kind: string; at?: number } & ({ payload: unknown } | { payloadJson: string });

function prepareAll(events: readonly NewChainEvent[]): { kind: string; at: number; payloadJson: string }[] {
  const now = Date.now();
  return events.map((e, i) => {
    try {
      const at = e.at ?? now;
      return { kind: e.kind, at, payloadJson: 'payloadJson' in e ? prepareEventJson(e.kind, e.payloadJson, at) : prepareEvent(e.kind, e.payload, at) };
    } catch (err) {
      if (err instanceof StoreInputError) throw new StoreInputError(`events[${i}].${err.field}`, err.reason, { cause: err });
      throw err;
    }
  });
}

/**
 * Appends events to a session's chain inside the caller's transaction (`c` has run BEGIN). Only
 * `opening` (the session's creation) may start a chain from the genesis hash. Payloads are durable
 * views, already redacted.
 */
export async function appendChainEvents(c: pg.PoolClient, sessionId: string, events: readonly NewChainEvent[], opening = false): Promise<AppendedEvent[]> {
  const prepared = prepareAll(events);
  if (prepared.length === 0) return [];
  const head = await c.query<{ seq: number; hash: string }>('SELECT seq, hash FROM chain_heads WHERE session_id = $1 FOR UPDATE', [sessionId]);
  let seq: number;
  let prevHash: string;
  const h = head.rows[0];
  if (h && !opening) {
    seq = h.seq;
    prevHash = h.hash;
  } else {
    const exists = await c.query('SELECT 1 FROM sessions WHERE id = $1', [sessionId]);
    if (!exists.rowCount) throw new SessionNotFoundError(sessionId, 'no session row and no chain head on the control plane');
    if (!opening) throw new ChainInconsistentError(sessionId, 'it has no head row on the control plane');
    if (h) throw new ChainInconsistentError(sessionId, 'it was opened already');
    seq = 0;
    prevHash = genesisHash(sessionId);
  }
  const out: AppendedEvent[] = [];
  for (const e of prepared) {
    seq++;
    const hash = eventHash(prevHash, sessionId, seq, e.kind, e.at, e.payloadJson);
    out.push({ sessionId, seq, kind: e.kind, at: e.at, prevHash, hash });
    prevHash = hash;
  }
  // Every event and the head's move in one statement: one round trip, however many events.
  const params: unknown[] = [sessionId];
  const rows = out.map((ev, i) => {
    params.push(ev.seq, ev.kind, ev.at, prepared[i]!.payloadJson, ev.prevHash, ev.hash);
    const b = 2 + i * 6;
    return `($1, $${b}::bigint, $${b + 1}, $${b + 2}::bigint, $${b + 3}, $${b + 4}, $${b + 5})`;
  });
  const last = out[out.length - 1]!;
  params.push(last.seq, last.hash, last.at);
  if (params.length > 60_000) throw new StoreInputError('events', `${out.length} events in one append is over the limit of 9,999; append them in batches`);
  try {
    await appendStatement(c, rows, params);
  } catch (err) {
    // As in the SQLite store: a row already at one of these seqs means events exist past the head.
    if ((err as { code?: string; constraint?: string }).constraint === 'runtime_events_pkey') {
      throw new ChainInconsistentError(sessionId, `an event already exists at one of seqs ${out[0]!.seq}–${last.seq}, past the head (seq ${out[0]!.seq - 1})`);
    }
    throw err;
  }
  return out;
}

async function appendStatement(c: pg.PoolClient, rows: string[], params: unknown[]): Promise<void> {
  const n = params.length;
  await c.query(
    `WITH inserted AS (
       INSERT INTO runtime_events (session_id, seq, kind, at, payload, prev_hash, hash) VALUES ${rows.join(', ')} RETURNING 1)
     INSERT INTO chain_heads (session_id, seq, hash, updated_at) VALUES ($1, $${n - 2}::bigint, $${n - 1}, $${n}::bigint)
     ON CONFLICT (session_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, updated_at = excluded.updated_at`,
    params,
  );
}

/**
 * Verifies one session's chain on the control plane with the SQLite store's verifier, over one
 * REPEATABLE READ snapshot (a member appending meanwhile cannot move the head between the reads).
 * Throws SessionNotFoundError if the control plane has no trace of the session.
 */
export async function verifyControlPlaneChain(pool: ControlPlanePool, sessionId: string): Promise<ChainVerification> {
  const c = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken = err; // the failed query reports it; the connection is dropped on release
  };
  c.on('error', onError);
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // An ended session's events may have moved to the archive (archive.ts): the chain is both.
    const events = await c.query<ChainEventRow>(
      `SELECT seq, kind, at, payload, prev_hash, hash FROM runtime_events WHERE session_id = $1
       UNION ALL SELECT seq, kind, at, payload, prev_hash, hash FROM runtime_events_archive WHERE session_id = $1 ORDER BY seq`,
      [sessionId],
    );
    const head = (await c.query<{ seq: number; hash: string }>('SELECT seq, hash FROM chain_heads WHERE session_id = $1', [sessionId])).rows[0];
    const rowExists = ((await c.query('SELECT 1 FROM sessions WHERE id = $1', [sessionId])).rowCount ?? 0) > 0;
    await c.query('COMMIT');
    if (!rowExists && !head && events.rows.length === 0) throw new SessionNotFoundError(sessionId);
    const prevBySeq = new Map(events.rows.map((r) => [r.seq, r.prev_hash]));
    const top = events.rows.reduce((m, r) => Math.max(m, r.seq), head?.seq ?? 0);
    return verifyChainEvents(sessionId, events.rows, {
      head: () => head,
      sessionRowExists: () => rowExists,
      prevHashAt: (seq) => prevBySeq.get(seq),
      topSeq: () => (top === 0 && !head ? null : top),
    });
  } catch (err) {
    await c.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    c.off('error', onError);
    c.release(broken);
  }
}

/** Ids of every session the control plane has a trace of (row, head or event), in order. */
export async function controlPlaneSessionIds(pool: ControlPlanePool): Promise<string[]> {
  const r = await pool.query<{ id: string }>('SELECT id FROM sessions UNION SELECT session_id FROM chain_heads UNION SELECT session_id FROM runtime_events ORDER BY 1');
  return r.rows.map((x) => x.id);
}

/**
 * The principal's sessions on the control plane, oldest first; with `only`, the one whose
 * control-plane id is `only` or whose run's local session id is `only` (its id is `local@member`).
 */
export async function principalSessionIds(pool: ControlPlanePool, principal: string, only: string | null = null): Promise<string[]> {
  const r = await pool.query<{ id: string }>(
    `SELECT id FROM sessions WHERE principal = $1 AND ($2::text IS NULL OR id = $2 OR split_part(id, '@', 1) = $2) ORDER BY created_at, id`,
    [principal, only],
  );
  return r.rows.map((x) => x.id);
}

/** A session's events after `afterSeq` (the archive included), in order, at most `limit`. */
export async function readChainEvents(q: Queryable, sessionId: string, afterSeq: number, limit: number): Promise<StoredEvent[]> {
  const r = await q.query<ChainEventRow>(
    `SELECT seq, kind, at, payload, prev_hash, hash FROM (SELECT * FROM runtime_events WHERE session_id = $1 AND seq > $2
       UNION ALL SELECT * FROM runtime_events_archive WHERE session_id = $1 AND seq > $2) e ORDER BY seq LIMIT $3`,
    [sessionId, afterSeq, limit],
  );
  return r.rows.map((x) => {
    const parsed = parseCanonicalJson(x.payload);
    return { sessionId, seq: x.seq, kind: x.kind, at: x.at, prevHash: x.prev_hash, hash: x.hash, payload: parsed.ok ? parsed.value : x.payload };
  });
}
