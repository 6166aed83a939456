// What an operator's page is sent about a request or a session: every text field through the one
// sanitiser (decision 55), so untrusted text (an action, an argument preview, a core path) cannot
// redraw or reorder what the operator reads, in a browser as at a terminal. The preview is already
// bounded and field-redacted by the run that asked (src/policy/); nothing raw is stored to send.
import { displayText } from '../redaction/index.js';
import type { ChainVerification, ListedApproval, PendingApproval, SessionRecord, StoredEvent, TaskLogChunk, TaskRecord } from '../store/index.js';
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
  /** A child agent's request: the delegation chain of its session, root first (empty otherwise). */
  delegated: string[];
}

export function approvalView(r: PendingApproval | ListedApproval): ApprovalView {
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
    delegated: 'chain' in r && r.chain.length > 1 ? r.chain : [],
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
  /** On the control plane: the machine and pid of the member that owns it. */
  host?: string;
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

export interface EventView {
  seq: number;
  kind: string;
  at: number;
  /** The event's durable view (already redacted when appended), as indented JSON, sanitised. */
  text: string;
}

export function eventView(e: StoredEvent): EventView {
  return { seq: e.seq, kind: displayText(e.kind), at: e.at, text: displayText(JSON.stringify(e.payload, null, 2), { keep: 'log' }) };
}

export interface TaskView {
  id: string;
  sessionId: string;
  kind: string;
  tool: string;
  status: string;
  summary: string;
  exitCode: number | null;
  reason: string | null;
  createdAt: number;
  endedAt: number | null;
}

export function taskView(t: TaskRecord): TaskView {
  return {
    id: t.id,
    sessionId: t.sessionId,
    kind: displayText(t.kind),
    tool: displayText(t.sourceTool),
    status: t.status,
    summary: displayText(t.summary),
    exitCode: t.exitCode,
    reason: t.reason === null ? null : displayText(t.reason),
    createdAt: t.createdAt,
    endedAt: t.endedAt,
  };
}

export interface LogChunkView {
  seq: number;
  stream: string;
  at: number;
  /** Redacted when stored; newline and tab kept (a log is multi-line), every other hidden character escaped. */
  text: string;
}

export function logChunkView(c: TaskLogChunk): LogChunkView {
  return { seq: c.seq, stream: c.stream, at: c.at, text: displayText(c.chunk, { keep: 'log' }) };
}

/** `audit verify` for one session, as the page shows it: intact with its count and head, or the broken event named. */
export function chainView(r: ChainVerification): { ok: boolean; text: string } {
  return r.ok
    ? { ok: true, text: `intact: ${r.count} event(s), head ${r.head ?? '(none)'}` }
    : { ok: false, text: `BROKEN at event ${r.seq}, field ${r.field}: ${displayText(r.detail)}` };
}
