// A supervisor as a member of the control plane: it registers who it is (host id, boot id, pid,
// start marker — the identity the process layer computes, passed in so this layer stays below
// process/), renews its lease on a heartbeat, and sweeps for members whose lease expired.
//
// Self-fencing: a member that has not renewed for half its lease, by its own monotonic clock, stops
// writing at once and calls `onFenced` (the process layer kills this host's trees there). Other
// members reclaim its rows only after the full lease, by the server's clock, so the stop comes
// first with half a lease to spare. The epoch check on every owner write covers what the local
// check cannot (a process paused between its check and its write).
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { archiveFinished } from './archive.js';
import { inTransaction, type ControlPlanePool } from './connect.js';
import { ControlPlaneError, MemberFencedError } from './errors.js';
import { reclaimExpiredMembers, type ReclaimedMember } from './leases.js';

export interface MemberIdentity {
  /** A stable name of the machine (hostname or an operator-given id). */
  hostId: string;
  bootId: string;
  pid: number;
  /** The process layer's serialized start marker of this process. */
  startMarker: string;
}

export interface MemberOptions {
  /** How long a lease lasts without renewal (default 6000 ms; at most 8000 so reclaim stays within 10 s). */
  leaseMs?: number;
  /** How often the lease is renewed (default leaseMs / 6). */
  heartbeatMs?: number;
  /** How often this member sweeps for expired members (default 1000 ms; 0: never). */
  reclaimEveryMs?: number;
  /** Called once when this member fences itself: kill this host's trees there. */
  onFenced?: (reason: string) => void;
  /** How often a sweep also moves finished rows to the archive tables (default 60000 ms; 0: never). */
  archiveEveryMs?: number;
  /** How long rows stay in the hot tables after they finished (default one hour). */
  archiveAfterMs?: number;
  /** Called after a sweep reclaimed something. */
  onReclaimed?: (reclaimed: ReclaimedMember[]) => void;
  /** Called when a heartbeat or sweep failed (the member keeps trying until it fences). */
  onError?: (err: unknown) => void;
  /** A fixed id (default: a random UUID). */
  id?: string;
}

/** How long a sweep waits for a row lock before giving up until the next sweep. */
const SWEEP_LOCK_TIMEOUT_MS = 1000;

/** The longest lease that keeps "reclaimed within 10 s of the last heartbeat" with a 1 s sweep. */
export const MAX_LEASE_MS = 8000;

export class ControlPlaneMember {
  readonly id: string;
  readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly reclaimEveryMs: number;
  /** performance.now() when the last successful renewal was sent. */
  private renewedAt: number;
  private fencedReason: string | null = null;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private reclaimTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private left = false;
  /** stopTimers() was called: no loop schedules itself again. */
  private timersStopped = false;
  /** performance.now() of the last archive pass (archive.ts), run from the sweep. */
  private archivedAt = performance.now();

  private constructor(
    readonly pool: ControlPlanePool,
    readonly identity: MemberIdentity,
    private readonly opts: MemberOptions,
    id: string,
    renewedAt: number,
  ) {
    this.id = id;
    this.leaseMs = opts.leaseMs ?? 6000;
    this.heartbeatMs = opts.heartbeatMs ?? Math.max(50, Math.floor(this.leaseMs / 6));
    this.reclaimEveryMs = opts.reclaimEveryMs ?? 1000;
    this.renewedAt = renewedAt;
  }

  /** Registers this supervisor and starts its heartbeat and reclaim sweeps. */
  static async join(pool: ControlPlanePool, identity: MemberIdentity, opts: MemberOptions = {}): Promise<ControlPlaneMember> {
    const leaseMs = opts.leaseMs ?? 6000;
    if (!Number.isInteger(leaseMs) || leaseMs < 200 || leaseMs > MAX_LEASE_MS) {
      throw new ControlPlaneError('CONTROL_PLANE_OPTION', `leaseMs ${leaseMs}: use an integer from 200 to ${MAX_LEASE_MS} ms, so a dead member's work is reclaimed within 10 s`);
    }
    const id = opts.id ?? randomUUID();
    const sent = performance.now();
    await pool.query(
      `INSERT INTO members (id, host_id, boot_id, pid, start_marker, lease_ms, lease_expires_at)
       VALUES ($1, $2, $3, $4, $5, $6::integer, clock_timestamp() + $6::integer * interval '1 millisecond')`,
      [id, identity.hostId, identity.bootId, identity.pid, identity.startMarker, leaseMs],
    );
    const m = new ControlPlaneMember(pool, identity, opts, id, sent);
    m.scheduleHeartbeat();
    m.scheduleReclaim();
    // A renewal can hang (the server stopped answering) and hold the heartbeat chain with it: the
    // watchdog checks the half-lease rule on its own timer.
    m.watchdog = setInterval(() => {
      try {
        m.assertWritable();
      } catch {
        /* fenced: onFenced has run */
      }
    }, Math.max(25, Math.floor(m.heartbeatMs / 2)));
    m.watchdog.unref();
    return m;
  }

  get fenced(): boolean {
    return this.fencedReason !== null;
  }

  /**
   * Throws MemberFencedError unless this member may write now. Checked before every owner write:
   * a process that was paused past half its lease finds out here, before it sends anything.
   */
  assertWritable(): void {
    if (this.fencedReason === null && !this.left) {
      const since = performance.now() - this.renewedAt;
      if (since > this.leaseMs / 2) this.fence(`no lease renewal for ${Math.round(since)} ms, more than half the ${this.leaseMs} ms lease`);
    }
    if (this.left) throw new MemberFencedError(this.id, 'it left the control plane');
    if (this.fencedReason !== null) throw new MemberFencedError(this.id, this.fencedReason);
  }

  /** Renews the lease now. A lease that lapsed (or a member declared dead) cannot be renewed: it fences. */
  async renew(): Promise<void> {
    this.assertWritable();
    const sent = performance.now();
    const r = await this.pool.query(
      `UPDATE members SET heartbeat_at = clock_timestamp(), lease_expires_at = clock_timestamp() + lease_ms * interval '1 millisecond'
        WHERE id = $1 AND status = 'alive' AND lease_expires_at > clock_timestamp()`,
      [this.id],
    );
    if (!r.rowCount) {
      this.fence('the control plane refused the renewal: the lease had lapsed or the member was declared dead');
      throw new MemberFencedError(this.id, this.fencedReason!);
    }
    this.renewedAt = sent;
  }

  /** One reclaim sweep now (also run on a timer); returns what it reclaimed. */
  async reclaimExpired(): Promise<ReclaimedMember[]> {
    this.assertWritable();
    const reclaimed = await inTransaction(this.pool, async (c) => {
      // A row the dead member still locks (its last transaction, until the server ends it) fails
      // this sweep quickly instead of stalling it; the next sweep tries again.
      await c.query(`SET LOCAL lock_timeout = ${SWEEP_LOCK_TIMEOUT_MS}`);
      return reclaimExpiredMembers(c, this.id);
    });
    if (reclaimed.length > 0) this.opts.onReclaimed?.(reclaimed);
    return reclaimed;
  }

  /** Stops heartbeats and sweeps and marks this member `left`. Rows it still owns are reclaimed by the next sweep. */
  async leave(reason = 'it left'): Promise<void> {
    if (this.left) return;
    this.stopTimers();
    this.left = true;
    // Expire the lease now so a sweep reclaims anything left running, instead of waiting a lease.
    await this.pool.query("UPDATE members SET lease_expires_at = clock_timestamp(), end_reason = $2 WHERE id = $1 AND status = 'alive'", [this.id, reason]);
    const by = this.id;
    await inTransaction(this.pool, async (c) => {
      await reclaimExpiredMembers(c, by);
      await c.query("UPDATE members SET status = 'left', ended_at = coalesce(ended_at, clock_timestamp()) WHERE id = $1", [by]);
    });
  }

  /** Stops the timers without touching the control plane (a test, or a process about to exit). */
  stopTimers(): void {
    // A renewal or sweep in flight now must not schedule the next one when it ends.
    this.timersStopped = true;
    clearTimeout(this.heartbeatTimer);
    clearTimeout(this.reclaimTimer);
    clearInterval(this.watchdog);
  }

  private fence(reason: string): void {
    if (this.fencedReason !== null) return;
    this.fencedReason = reason;
    this.stopTimers();
    this.opts.onFenced?.(reason);
  }

  private scheduleHeartbeat(): void {
    this.heartbeatTimer = setTimeout(() => {
      this.renew()
        .catch((err: unknown) => {
          if (!(err instanceof MemberFencedError)) this.opts.onError?.(err);
        })
        .finally(() => {
          if (!this.fenced && !this.left && !this.timersStopped) this.scheduleHeartbeat();
        });
    }, this.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  /** One sweep: reclaim expired members, and when due, move finished rows to the archive. */
  private async sweep(): Promise<void> {
    await this.reclaimExpired();
    const every = this.opts.archiveEveryMs ?? 60_000;
    if (every > 0 && performance.now() - this.archivedAt >= every) {
      this.archivedAt = performance.now();
      await archiveFinished(this.pool, { olderThanMs: this.opts.archiveAfterMs ?? 3_600_000 });
    }
  }

  private scheduleReclaim(): void {
    if (this.reclaimEveryMs <= 0) return;
    this.reclaimTimer = setTimeout(() => {
      this.sweep()
        .catch((err: unknown) => {
          if (!(err instanceof MemberFencedError)) this.opts.onError?.(err);
        })
        .finally(() => {
          if (!this.fenced && !this.left && !this.timersStopped) this.scheduleReclaim();
        });
    }, this.reclaimEveryMs);
    this.reclaimTimer.unref();
  }
}
