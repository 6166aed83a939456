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
import { ControlPlaneError, MemberFencedError, OwnershipLostError } from './errors.js';
import type { Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';
import { appendAsOwner } from './sessions.js';

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
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private lost = false;

  constructor(private readonly o: ChainShipperOptions) {}

  /** The newest local seq the control plane holds. */
  get shipped(): number {
    return this.shippedSeq;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.o.intervalMs ?? 250);
    this.timer.unref();
  }

  /** Stops the interval and ships what is left (the run's last events: its end). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.tick();
  }

  /** One shipping pass, never two at once; a pass ships until the local chain has nothing newer. */
  private tick(): Promise<void> {
    this.inFlight ??= this.shipAll().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  private async shipAll(): Promise<void> {
    const batch = this.o.batch ?? 200;
    while (!this.lost) {
      const events = this.o.read(this.shippedSeq, batch);
      if (events.length === 0) return;
      try {
        await appendAsOwner(this.o.member, this.o.lease, events.map((e) => ({ kind: e.kind, at: e.at, payload: anchoredPayload(e) })));
      } catch (err) {
        if (err instanceof OwnershipLostError || err instanceof MemberFencedError || (err instanceof ControlPlaneError && err.code === 'MEMBER_LEASE_LAPSED')) {
          this.lost = true;
          this.o.onLost(`the audit chain could not be anchored: ${err.message}`);
        }
        // Anything else (a dropped connection) is tried again on the next pass; the member's own
        // heartbeat fences it if the server stays away.
        return;
      }
      this.shippedSeq = events[events.length - 1]!.seq;
    }
  }
}
