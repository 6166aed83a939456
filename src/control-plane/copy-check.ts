// What a run's copies on the control plane are worth (decisions 124, 127, 129), checked from any
// machine without the run's host, from one read of the copy's chain and one of its messages:
// - the anchors: each copied event's local seq and hash, for the host's own comparison;
// - the links: the copies in local seq order from 1, none missing, each kind, time and payload
//   hashing with the previous copy's local hash to the local hash it carries, so a copy edited
//   there (a message's digest included) must have every later local hash recomputed too, and then
//   differs from the host's chain when the two are compared;
// - the transcript: every copied message is the one its anchored message.added names (its id and
//   its content's sha256);
// - where its run's session came from, when it was imported from another copy (decision 129).
// `audit verify --store` reports all of it; a resume elsewhere refuses a copy that fails any of it.
import { createHash } from 'node:crypto';
import { canonicalJson } from '../store/canonical-json.js';
import { eventHash, genesisHash, type StoredEvent } from '../store/event-chain.js';
import type { AnchoredPayload } from './chain-shipper.js';
import { readChainEvents } from './chain.js';
import type { Queryable } from './connect.js';

/** One event of a control-plane chain that anchors a host's local event. */
export interface AnchorRow {
  localSession: string;
  localSeq: number;
  localHash: string;
}

/** Whether a session's copies still form the host's chain. */
export interface AnchorLinkCheck {
  /** Copies checked. */
  anchors: number;
  /** The first local seq whose copy breaks the chain; null: none. */
  breakAt: number | null;
  why: string | null;
}

/** What a session's copied messages are worth against its chain. */
export interface TranscriptCheck {
  messages: number;
  /** The first copied message (by seq) whose content or id its anchored chain event does not vouch for; null: none. */
  differsAt: number | null;
  why: string | null;
}

export interface CopyCheck {
  anchors: AnchorRow[];
  links: AnchorLinkCheck;
  transcript: TranscriptCheck;
  /** Messages its chain vouches for, copied or not (a host that stopped leaves the last ones uncopied). */
  vouchedMessages: number;
  /** The copy this run's session was imported from, as its first copied event says; null: none. */
  importedFrom: string | null;
}

/** An event's payload as a copy of a host event, if it is one. */
function anchorOf(e: StoredEvent): (AnchoredPayload & { payload?: unknown }) | null {
  const a = e.payload as Partial<AnchoredPayload> | null;
  return a && typeof a.local_session === 'string' && typeof a.local_seq === 'number' && typeof a.local_hash === 'string' ? (a as AnchoredPayload) : null;
}

/** Checks a session's copies on the control plane: one read of its chain (the archive included), one of its messages. */
export async function checkCopies(q: Queryable, sessionId: string): Promise<CopyCheck> {
  const events = await readChainEvents(q, sessionId, 0, Number.MAX_SAFE_INTEGER);
  const copies = events.flatMap((e) => {
    const a = anchorOf(e);
    return a ? [{ e, a }] : [];
  });
  const first = copies[0]?.a.payload as { imported_from?: { session?: unknown } } | undefined;
  return {
    anchors: copies.map(({ a }) => ({ localSession: a.local_session, localSeq: a.local_seq, localHash: a.local_hash })),
    links: linkBreak(copies),
    ...(await transcriptCheck(q, sessionId, copies)),
    importedFrom: typeof first?.imported_from?.session === 'string' ? first.imported_from.session : null,
  };
}

function linkBreak(copies: readonly { e: StoredEvent; a: AnchoredPayload }[]): AnchorLinkCheck {
  let prev: { seq: number; hash: string } | null = null;
  let anchors = 0;
  for (const { e, a } of copies) {
    anchors++;
    const broken = (why: string): AnchorLinkCheck => ({ anchors, breakAt: a.local_seq, why });
    const expectedSeq: number = (prev?.seq ?? 0) + 1;
    if (a.local_seq !== expectedSeq) return broken(`the copy of local seq ${a.local_seq} follows ${prev?.seq ?? 'nothing'}: the copy of ${expectedSeq} is missing or out of order`);
    // A copy whose payload was left out for its size is taken at its word.
    if (a.payload !== undefined) {
      let payloadJson: string;
      try {
        payloadJson = canonicalJson(a.payload);
      } catch {
        return broken('its payload is not canonical JSON');
      }
      const hash = eventHash(prev?.hash ?? genesisHash(a.local_session), a.local_session, a.local_seq, e.kind, e.at, payloadJson);
      if (hash !== a.local_hash) return broken('its kind, time or payload does not hash to the local hash it carries: the copy was edited');
    }
    prev = { seq: a.local_seq, hash: a.local_hash };
  }
  return { anchors, breakAt: null, why: null };
}

async function transcriptCheck(q: Queryable, sessionId: string, copies: readonly { e: StoredEvent; a: AnchoredPayload }[]): Promise<{ transcript: TranscriptCheck; vouchedMessages: number }> {
  const vouched = new Map<number, { id: unknown; sha256: unknown }>();
  for (const { e, a } of copies) {
    const inner = e.kind === 'message.added' ? (a.payload as { seq?: unknown; message_id?: unknown; content_sha256?: unknown } | undefined) : undefined;
    if (inner && typeof inner.seq === 'number') vouched.set(inner.seq, { id: inner.message_id, sha256: inner.content_sha256 });
  }
  const rows = await q.query<{ seq: number; message_id: string; content: string }>('SELECT seq, message_id, content FROM session_messages WHERE session_id = $1 ORDER BY seq', [sessionId]);
  const result = (differsAt: number | null, why: string | null) => ({ transcript: { messages: rows.rows.length, differsAt, why }, vouchedMessages: vouched.size });
  for (const r of rows.rows) {
    const v = vouched.get(r.seq);
    const why =
      v === undefined
        ? 'no anchored message.added event names it'
        : v.id !== r.message_id
          ? `its id ${r.message_id} is not the id ${String(v.id)} its chain event names`
          : v.sha256 !== createHash('sha256').update(r.content, 'utf8').digest('hex')
            ? 'its content does not hash to the content_sha256 of its chain event'
            : null;
    if (why !== null) return result(r.seq, why);
  }
  return result(null, null);
}
