// An approver for a run without a terminal that an operator answers from another one
// (`supervisor approvals`): each prompt becomes a pending row in the store, polled until it is
// answered, it expires, or the call is cancelled. An expired request is a denial.
import { PendingApprovalStore, type Database } from '../store/index.js';
import type { ApprovalDecision } from './approval-decision.js';
import type { ApprovalRequest, Approver } from './approval-broker.js';
import { awaitAnswer, shownRequest, unshowable } from './pending-request.js';

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
    const refused = unshowable(request);
    if (refused) return refused;
    const row = this.store.create({ sessionId: request.sessionId, ...shownRequest(request), ttlMs: this.o.waitMs });
    this.o.onPending?.(row.id, request);
    const pollMs = this.o.pollMs ?? 200;
    return awaitAnswer({
      id: row.id,
      waitMs: this.o.waitMs,
      ...(signal ? { signal } : {}),
      read: () => this.store.poll(row.id),
      close: (status) => this.store.close(row.id, status),
      pause: (ms) => new Promise((r) => setTimeout(r, Math.max(0, Math.min(ms, pollMs)))),
      answeredVia: () => ` (supervisor approvals ${row.id})`,
      howToAnswer: `supervisor approvals approve ${row.id}`,
    });
  }
}
