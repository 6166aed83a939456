// What the two approvers that wait for another terminal share (store-approver.ts on this
// machine's SQLite store, control-plane-approver.ts on PostgreSQL): what the operator is shown of a
// request, the refusal of one too long to show whole, and the wait for the answer.
import { PENDING_SUMMARY_MAX } from '../store/index.js';
import { approvalDecision, type ApprovalDecision } from './approval-decision.js';
import type { ApprovalRequest } from './approval-broker.js';

/** The request as a pending row holds it; the secrets the call binds (names only) travel with the preview. */
export function shownRequest(r: ApprovalRequest): { tool: string; capability: string; summary: string; preview: string } {
  return {
    tool: r.toolName,
    capability: r.capability,
    summary: r.actionSummary,
    preview: r.secrets && r.secrets.length > 0 ? `${r.preview.text}\nsecrets: ${r.secrets.join(', ')}` : r.preview.text,
  };
}

/** The operator approves what they are shown: an action too long to show whole is not asked. */
export function unshowable(r: ApprovalRequest): ApprovalDecision | null {
  if (r.actionSummary.length <= PENDING_SUMMARY_MAX) return null;
  return approvalDecision(false, 'non-interactive', `the action is ${r.actionSummary.length} characters, more than the ${PENDING_SUMMARY_MAX} an approval request shows in full; nobody was asked`);
}

/** How a pending row reads while it is waited for. */
export interface PendingState {
  status: string;
  remember: boolean;
}

/**
 * Waits for the answer to pending request `id`: the operator's yes or no (remembered if they said
 * always), a denial when `waitMs` passes (the row is closed `expired`) or when `signal` aborts
 * (closed `cancelled`). `pause` waits until the row may have changed; `where` names how to answer.
 */
export async function awaitAnswer(o: {
  id: string;
  waitMs: number;
  signal?: AbortSignal;
  read(): Promise<PendingState | undefined> | PendingState | undefined;
  close(status: 'expired' | 'cancelled'): Promise<void> | void;
  pause(ms: number, signal?: AbortSignal): Promise<void>;
  /** How the request is named in the operator's answer, e.g. "supervisor approvals ap_…". */
  answeredVia(state: PendingState): string;
  /** The command that would have answered it. */
  howToAnswer: string;
}): Promise<ApprovalDecision> {
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    if (o.signal?.aborted) {
      await o.close('cancelled');
      return approvalDecision(false, 'cancelled', 'the call was cancelled while waiting for approval');
    }
    const now = await o.read();
    if (now?.status === 'approved' || now?.status === 'denied') {
      const yes = now.status === 'approved';
      return approvalDecision(yes, 'operator', `${yes ? 'approved' : 'denied'} by the operator${o.answeredVia(now)}${now.remember ? ', remembered for this exact action' : ''}`, now.remember);
    }
    if (Date.now() >= deadline || now?.status === 'expired') {
      await o.close('expired');
      return approvalDecision(false, 'timeout', `nobody answered approval request ${o.id} within ${Math.round(o.waitMs / 1000)} s (${o.howToAnswer})`);
    }
    await o.pause(deadline - Date.now(), o.signal);
  }
}
