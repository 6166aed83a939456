// A run's audit chain, anchored on the control plane (decision 124). The host's SQLite chain stays
// the run's own record, written before and with every effect on the synchronous path; the shipper
// copies what has committed there, in order, to the run's control-plane session under its lease:
// one fenced transaction per batch, so a member that lost the session (or was fenced) writes
// nothing more. Each copy keeps the event's kind and time and carries the local seq and hash
// beside the payload, so any member's operator can verify the copy (`supervisor audit verify
// --store`), and a host whose local chain was rewritten after shipping is caught by comparing the
// two. What a crash leaves unshipped is at most one interval of events; the session is then
// reclaimed as interrupted, as any dead member's is.
import type { StoredEvent } from '../store/event-chain.js';
import { MAX_EVENT_PAYLOAD_BYTES } from '../store/event-chain.js';
import { canonicalJson } from '../store/canonical-json.js';
import { lostOwnership } from './errors.js';
import type { Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';
import { appendAsOwner } from './sessions.js';
import { PeriodicPass } from './periodic-pass.js';

/** The local chain's committed events after `afterSeq`, at most `limit`, in order. */
export type LocalChainReader = (afterSeq: number, limit: number) => StoredEvent[];

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
  read: LocalChainReader;
  /** How often committed events are shipped (default 250 ms). */
  intervalMs?: number;
  /** Events per transaction (default 200). */
  batch?: number;
  /** Called once when the copy can go on no more: the session's lease moved or the member was fenced. */
  onLost(why: string): void;
}

/** Room the wrapper takes beside the payload, with margin. */
const WRAPPER_BYTES = 512;

export function anchoredPayload(e: StoredEvent): AnchoredPayload {
  const base = { local_session: e.sessionId, local_seq: e.seq, local_hash: e.hash };
  const bytes = Buffer.byteLength(canonicalJson(e.payload));
  return bytes + WRAPPER_BYTES <= MAX_EVENT_PAYLOAD_BYTES ? { ...base, payload: e.payload } : { ...base, payload_bytes: bytes };
}

export class ChainShipper {
  private shippedSeq = 0;
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

  /** One pass: ships until the local chain has nothing newer. */
  private async shipAll(): Promise<void> {
    const batch = this.o.batch ?? 200;
    while (!this.lost) {
      const events = this.o.read(this.shippedSeq, batch);
      if (events.length === 0) return;
      try {
        await appendAsOwner(this.o.member, this.o.lease, events.map((e) => ({ kind: e.kind, at: e.at, payload: anchoredPayload(e) })));
      } catch (err) {
        if (lostOwnership(err)) {
          this.lost = true;
          this.o.onLost(`the audit chain could not be anchored: ${(err as Error).message}`);
        }
        // Anything else (a dropped connection) is tried again on the next pass; the member's own
        // heartbeat fences it if the server stays away.
        return;
      }
      this.shippedSeq = events[events.length - 1]!.seq;
    }
  }
}
