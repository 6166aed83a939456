// What an operator's page is sent about a request or a session: every text field through the one
// sanitiser (decision 55), so untrusted text (an action, an argument preview, a core path) cannot
// redraw or reorder what the operator reads, in a browser as at a terminal. The preview is already
// bounded and field-redacted by the run that asked (src/policy/); nothing raw is stored to send.
import { displayText } from '../redaction/index.js';
import type { PendingApproval, SessionRecord } from '../store/index.js';
import { shownDigest } from './approval-answer.js';

export interface ApprovalView {
  id: string;
  sessionId: string;
  tool: string;
  capability: string;
  action: string;
  preview: string;
  digest: string;
  status: string;
  remember: boolean;
  createdAt: number;
  expiresAt: number;
  decidedAt: number | null;
  decidedBy: string | null;
}

export function approvalView(r: PendingApproval): ApprovalView {
  return {
    id: r.id,
    sessionId: r.sessionId,
    tool: displayText(r.tool),
    capability: displayText(r.capability),
    action: displayText(r.summary),
    preview: displayText(r.preview),
    digest: shownDigest(r),
    status: r.status,
    remember: r.remember,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    decidedAt: r.decidedAt,
    decidedBy: r.decidedBy === null ? null : displayText(r.decidedBy),
  };
}

export interface SessionView {
  id: string;
  status: string;
  core: string;
  runtime: string;
  principal: string;
  createdAt: number;
  endedAt: number | null;
  endReason: string | null;
}

export function sessionView(s: SessionRecord): SessionView {
  return {
    id: s.id,
    status: s.status,
    core: displayText(s.coreDir),
    runtime: displayText(s.runtime),
    principal: displayText(s.principal),
    createdAt: s.createdAt,
    endedAt: s.endedAt,
    endReason: s.endReason === null ? null : displayText(s.endReason),
  };
}
