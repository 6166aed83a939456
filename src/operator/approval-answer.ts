// Answering a pending approval request, for every operator front end (`supervisor approvals` at a
// terminal, the `supervisor web` page): one copy of the digest of what was shown, the principal
// check, and the compare-and-swap, so a terminal and a tab, or two tabs, cannot both win.
import { createHash } from 'node:crypto';
import type { PendingApproval, PendingApprovalStore, PrincipalScope } from '../store/index.js';

/** The digest of what a request shows (tool, capability, action, preview): what --expect checks. */
export function shownDigest(r: Pick<PendingApproval, 'tool' | 'capability' | 'summary' | 'preview'>): string {
  return createHash('sha256').update(JSON.stringify([r.tool, r.capability, r.summary, r.preview]), 'utf8').digest('hex').slice(0, 16);
}

export interface ApprovalAnswer {
  id: string;
  approve: boolean;
  /** Remember the answer for this exact action (the same approval key) for the rest of the run. */
  always: boolean;
  /** The digest the operator was shown; the answer is refused if the request no longer has it. */
  expect?: string;
  /** Who answers, kept on the row so that a later answer is told who won. */
  decidedBy: string;
}

export type ApprovalAnswerOutcome =
  /** This answer decided the request. */
  | { kind: 'answered'; record: PendingApproval }
  /** Someone else decided it first (or it expired or was cancelled): the record says who and how. */
  | { kind: 'lost'; record: PendingApproval }
  /** Not the operator's, or no such request. */
  | { kind: 'not-found' }
  /** The request is not the one whose digest the operator was shown: nothing was answered. */
  | { kind: 'digest-mismatch'; digest: string };

export function answerApproval(store: PendingApprovalStore, scope: PrincipalScope, a: ApprovalAnswer): ApprovalAnswerOutcome {
  if (a.expect !== undefined) {
    const r = store.get(scope, a.id);
    if (r && r.status === 'pending' && shownDigest(r) !== a.expect.trim().toLowerCase()) return { kind: 'digest-mismatch', digest: shownDigest(r) };
  }
  const answer = store.answer(scope, a.id, a.approve, a.always, a.decidedBy);
  if (!answer) return { kind: 'not-found' };
  return answer.answered ? { kind: 'answered', record: answer.record } : { kind: 'lost', record: answer.record };
}

/** How a lost answer reads: who decided the request, and when. */
export function decidedByText(r: PendingApproval): string {
  if (r.status !== 'approved' && r.status !== 'denied') return `it is ${r.status}`;
  const at = r.decidedAt === null ? '' : ` at ${new Date(r.decidedAt).toISOString().replace('T', ' ').slice(0, 19)} UTC`;
  return `it was ${r.status} already by ${r.decidedBy ?? 'an operator'}${at}`;
}
