// An approver for a run without a terminal that an operator answers from another one
// (`supervisor approvals`): each prompt becomes a pending row in the store, polled until it is
// answered, it expires, or the call is cancelled. An expired request is a denial.
import { PENDING_SUMMARY_MAX, PendingApprovalStore, type Database } from '../store/index.js';
import { approvalDecision, type ApprovalDecision } from './approval-decision.js';
import type { ApprovalRequest, Approver } from './approval-broker.js';

export interface StoreApproverOptions {
  db: Database;
  /** How long a request waits for an answer. */
  waitMs: number;
  pollMs?: number;
  /** Told once per request, e.g. to print how to answer it. */
  onPending?: (id: string, request: ApprovalRequest) => void;
}

export class StoreApprover implements Approver {
  private readonly store: PendingApprovalStore;

  constructor(private readonly o: StoreApproverOptions) {
    this.store = new PendingApprovalStore(o.db);
  }

  async decide(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    // The operator approves what they are shown: an action too long to show whole is not asked.
    if (request.actionSummary.length > PENDING_SUMMARY_MAX) {
      return approvalDecision(false, 'non-interactive', `the action is ${request.actionSummary.length} characters, more than the ${PENDING_SUMMARY_MAX} an approval request shows in full; nobody was asked`);
    }
    const row = this.store.create({
      sessionId: request.sessionId,
      tool: request.toolName,
      capability: request.capability,
      summary: request.actionSummary,
      // The secrets the call binds (names only) travel with the preview another terminal is shown.
      preview: request.secrets && request.secrets.length > 0 ? `${request.preview.text}\nsecrets: ${request.secrets.join(', ')}` : request.preview.text,
      ttlMs: this.o.waitMs,
    });
    this.o.onPending?.(row.id, request);
    const deadline = Date.now() + this.o.waitMs;
    for (;;) {
      if (signal?.aborted) {
        this.store.close(row.id, 'cancelled');
        return approvalDecision(false, 'cancelled', 'the call was cancelled while waiting for approval');
      }
      const now = this.store.poll(row.id);
      if (now?.status === 'approved' || now?.status === 'denied') {
        const yes = now.status === 'approved';
        return approvalDecision(yes, 'operator', `${yes ? 'approved' : 'denied'} by the operator (supervisor approvals ${row.id})${now.remember ? ', remembered for this exact action' : ''}`, now.remember);
      }
      if (Date.now() >= deadline) {
        this.store.close(row.id, 'expired');
        return approvalDecision(false, 'timeout', `nobody answered approval request ${row.id} within ${Math.round(this.o.waitMs / 1000)} s (supervisor approvals approve ${row.id})`);
      }
      await new Promise((r) => setTimeout(r, this.o.pollMs ?? 200));
    }
  }
}
