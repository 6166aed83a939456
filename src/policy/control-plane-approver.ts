// The approver of a run on the control plane (`supervisor run --store postgres://…`): each prompt
// becomes a pending row on PostgreSQL, under the lease of the run's session there, and an operator
// on any member answers it (`supervisor approvals --store …`). The answer arrives by NOTIFY, or by
// the listener's re-poll when a notification was lost. An expired request is a denial.
import {
  closeApproval,
  createOwnedSession,
  getApproval,
  requestApproval,
  type ControlPlaneListener,
  type ControlPlaneMember,
  type Lease,
} from '../control-plane/index.js';
import { approvalDecision, type ApprovalDecision } from './approval-decision.js';
import type { ApprovalRequest, Approver } from './approval-broker.js';
import { awaitAnswer, shownRequest, unshowable } from './pending-request.js';

export interface ControlPlaneApproverOptions {
  member: ControlPlaneMember;
  listener: ControlPlaneListener;
  /** How long a request waits for an answer. */
  waitMs: number;
  /** What the run's session on the control plane records about it (core, local session). */
  sessionPayload?: Record<string, unknown>;
  /** Told once per request, e.g. to print how to answer it. */
  onPending?: (id: string, request: ApprovalRequest) => void;
  /** Told when the control plane could not carry a request: the run cannot be answered any more. */
  onUnavailable?: (why: string) => void;
}

export class ControlPlaneApprover implements Approver {
  /** The control-plane session (and its lease) of each local session that asked, made on its first request. */
  private readonly leases = new Map<string, Promise<Lease>>();

  constructor(private readonly o: ControlPlaneApproverOptions) {}

  /** The control-plane sessions this approver opened, to end them with the run. */
  async openedLeases(): Promise<Lease[]> {
    const settled = await Promise.allSettled(this.leases.values());
    return settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  }

  async decide(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const refused = unshowable(request);
    if (refused) return refused;
    try {
      return await this.ask(request, signal);
    } catch (err) {
      // The control plane went away, or this member lost its place there: nobody can answer, so
      // nothing is approved, and the run is told (it stops rather than go on unanswerable).
      const why = `the control plane could not carry an approval request (${(err as Error).message})`;
      this.o.onUnavailable?.(why);
      return approvalDecision(false, 'non-interactive', `${why}; nothing was approved`);
    }
  }

  private async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const { member, listener } = this.o;
    const lease = await this.sessionFor(request.sessionId, request.principalId);
    const row = await requestApproval(member, lease, { principal: request.principalId, ...shownRequest(request), ttlMs: this.o.waitMs });
    this.o.onPending?.(row.id, request);
    let decidedBy: string | null = null;
    return awaitAnswer({
      id: row.id,
      waitMs: this.o.waitMs,
      ...(signal ? { signal } : {}),
      read: async () => {
        const now = await getApproval(member.pool, row.id);
        decidedBy = now?.decidedBy ?? null;
        return now;
      },
      close: (status) => closeApproval(member.pool, row.id, status).catch(() => undefined),
      // The listener wakes it on the answer's NOTIFY, a reconnect or its poll.
      pause: (ms, s) => listener.waitForChange(row.id, ms, s),
      answeredVia: () => `${decidedBy ? ` (${decidedBy})` : ''} (supervisor approvals ${row.id} on the control plane)`,
      howToAnswer: `supervisor approvals approve ${row.id} --store …`,
    });
  }

  /**
   * The control-plane session of local session `sessionId` (made on first use, owned by this
   * member): one per local session and member, so a session resumed by a later run (another
   * member) gets a row of its own. `described` joins its creation payload (the first call's only).
   */
  sessionFor(sessionId: string, principal: string, described: Record<string, unknown> = {}): Promise<Lease> {
    let lease = this.leases.get(sessionId);
    if (!lease) {
      lease = createOwnedSession(this.o.member, { ...this.o.sessionPayload, ...described, local_session: sessionId }, `${sessionId}@${this.o.member.id}`, principal);
      this.leases.set(sessionId, lease);
    }
    return lease;
  }
}
