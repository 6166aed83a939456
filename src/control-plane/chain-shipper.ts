// A run's audit chain, anchored on the control plane (decision 124). The host's SQLite chain stays
// the run's own record, written before and with every effect on the synchronous path; the shipper
// copies what has committed there, in order, to the run's control-plane session under its lease:
// one fenced transaction per batch, so a member that lost the session (or was fenced) writes
// nothing more. Each copy keeps the event's kind and time and carries the local seq and hash
// beside the payload, so any member's operator can verify the copy (`supervisor audit verify
// --store`), and a host whose local chain was rewritten after shipping is caught by comparing the
// two. What a crash leaves unshipped is at most one interval of events; the session is then
// reclaimed as interrupted, as any dead member's is.
//
// The run's messages follow their events (decision 127): a message is copied only once the
// message.added event that vouches for it (its content's sha256) is anchored, so every copied
// message can be checked against the chain above it.
import type { ChainEventRow } from '../store/chain-verify.js';
import type { StoredMessage } from '../store/session-store.js';
import { MAX_EVENT_PAYLOAD_BYTES } from '../store/event-chain.js';
import { parseCanonicalJson } from '../store/canonical-json.js';
import { lostOwnership } from './errors.js';
import type { Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';
import { appendAsOwner } from './sessions.js';
import { PeriodicPass } from './periodic-pass.js';
import { copyMessages } from './transcripts.js';

/** The local chain's committed events after `afterSeq`, at most `limit`, in order, as stored (readEventRows). */
export type LocalChainReader = (afterSeq: number, limit: number) => ChainEventRow[];

/** The local session's committed messages with seq in (afterSeq, throughSeq], at most `limit`, in order. */
export type LocalMessageReader = (afterSeq: number, throughSeq: number, limit: number) => StoredMessage[];

/** The payload of an anchored copy: where the event sits in the host's chain, and what it said. */
export interface AnchoredPayload {
  local_session: string;
  local_seq: number;
  local_hash: string;
  /** The event's payload; left out (with its size) when the copy would exceed the event limit. */
  payload?: unknown;
  payload_bytes?: number;
}

export interface ChainShipperOptions {
  member: ControlPlaneMember;
  lease: Lease;
  /** The local session whose chain is copied. */
  localSession: string;
  read: LocalChainReader;
  /** The run's messages, copied after the events that vouch for them; absent: the chain only. */
  readMessages?: LocalMessageReader;
  /** How often committed events are shipped (default 250 ms). */
  intervalMs?: number;
  /** Events per transaction (default 200). */
  batch?: number;
  /** Called once when the copy can go on no more: the session's lease moved or the member was fenced. */
  onLost(why: string): void;
}

/** Room the wrapper takes beside the payload, with margin. */
const WRAPPER_BYTES = 512;
/** At most this many messages, and about this many bytes of them, per transaction (one message may be 4 MiB). */
const MESSAGE_BATCH = 100;
const MESSAGE_BATCH_BYTES = 8 * 1024 * 1024;

/**
 * The copy's payload (an AnchoredPayload) in canonical JSON, written around the stored event's
 * payload text: that text is canonical already (the hash was computed over it), and the wrapper's
 * keys are written in canonical order, so nothing is parsed or serialized again per event.
 */
export function anchoredPayloadJson(localSession: string, e: ChainEventRow): string {
  const bytes = Buffer.byteLength(e.payload, 'utf8');
  const where = `{"local_hash":${JSON.stringify(e.hash)},"local_seq":${e.seq},"local_session":${JSON.stringify(localSession)}`;
  return bytes + WRAPPER_BYTES <= MAX_EVENT_PAYLOAD_BYTES ? `${where},"payload":${e.payload}}` : `${where},"payload_bytes":${bytes}}`;
}

/** The message seq a message.added event vouches for, if it is one. */
function vouchedMessageSeq(e: ChainEventRow): number | null {
  if (e.kind !== 'message.added') return null;
  const parsed = parseCanonicalJson(e.payload);
  const seq = parsed.ok ? (parsed.value as { seq?: unknown } | null)?.seq : undefined;
  return typeof seq === 'number' ? seq : null;
}

/** The first messages of `rows` that fit one transaction (always at least one). */
function messageBatch(rows: StoredMessage[]): StoredMessage[] {
  let bytes = 0;
  let n = 0;
  while (n < rows.length && (n === 0 || bytes + rows[n]!.content.length <= MESSAGE_BATCH_BYTES)) bytes += rows[n++]!.content.length;
  return rows.slice(0, n);
}

export class ChainShipper {
  private shippedSeq = 0;
  /** The newest message seq whose message.added event is anchored, and the newest message copied. */
  private vouchedSeq = 0;
  private copiedMessageSeq = 0;
  private lost = false;
  private readonly passes: PeriodicPass;

  constructor(private readonly o: ChainShipperOptions) {
    this.passes = new PeriodicPass(() => this.shipAll(), o.intervalMs ?? 250);
  }

  /** The newest local seq the control plane holds. */
  get shipped(): number {
    return this.shippedSeq;
  }

  start(): void {
    this.passes.start();
  }

  /** Stops the interval and ships what is left (the run's last events: its end). */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  /** One pass: ships until the local chain has nothing newer, then the messages those events vouch for. */
  private async shipAll(): Promise<void> {
    const batch = this.o.batch ?? 200;
    while (!this.lost) {
      const events = this.o.read(this.shippedSeq, batch);
      if (events.length === 0) break;
      const shipped = await this.attempt('the audit chain could not be anchored', () =>
        appendAsOwner(this.o.member, this.o.lease, events.map((e) => ({ kind: e.kind, at: e.at, payloadJson: anchoredPayloadJson(this.o.localSession, e) }))),
      );
      if (!shipped) return;
      this.shippedSeq = events[events.length - 1]!.seq;
      for (const e of events) this.vouchedSeq = Math.max(this.vouchedSeq, vouchedMessageSeq(e) ?? 0);
    }
    await this.copyVouchedMessages();
  }

  private async copyVouchedMessages(): Promise<void> {
    const read = this.o.readMessages;
    while (read && !this.lost && this.copiedMessageSeq < this.vouchedSeq) {
      const rows = messageBatch(read(this.copiedMessageSeq, this.vouchedSeq, MESSAGE_BATCH));
      if (rows.length === 0) return;
      if (!(await this.attempt("the run's messages could not be copied", () => copyMessages(this.o.member, this.o.lease, rows)))) return;
      this.copiedMessageSeq = rows[rows.length - 1]!.seq;
    }
  }

  /** Runs one fenced write; false when it failed (a lost lease ends the copy for good, anything else is tried next pass). */
  private async attempt(what: string, write: () => Promise<void>): Promise<boolean> {
    try {
      await write();
      return true;
    } catch (err) {
      if (lostOwnership(err)) {
        this.lost = true;
        this.o.onLost(`${what}: ${(err as Error).message}`);
      }
      // Anything else (a dropped connection) is tried again on the next pass; the member's own
      // heartbeat fences it if the server stays away.
      return false;
    }
  }
}
