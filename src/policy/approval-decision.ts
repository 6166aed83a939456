// The typed outcome of an approval, shared by the broker, the approvers and the cache.

/**
 * Who decided: the effective policy ('auto'/'deny'), the approval cache, a command-line rule, the
 * operator at the prompt, the absence of anyone to ask, a prompt that timed out, or a prompt that
 * was cancelled (the turn was aborted while waiting).
 */
export type ApprovalSource = 'policy' | 'cache' | 'rule' | 'operator' | 'non-interactive' | 'timeout' | 'cancelled';

export interface ApprovalDecision {
  readonly approved: boolean;
  readonly source: ApprovalSource;
  /** One line for the operator and the audit log. */
  readonly reason: string;
  /** Whether the broker may remember this decision for the exact approval key ('always'/'never'). */
  readonly cacheable: boolean;
}

export function approvalDecision(approved: boolean, source: ApprovalSource, reason: string, cacheable = false): ApprovalDecision {
  return Object.freeze({ approved, source, reason, cacheable });
}
