// The operator's port on the PostgreSQL control plane (decision 125): every member's sessions,
// their copied chains (decision 124), the work queue's tasks and the requests waiting there, for
// the local principal; a task's cancel goes to the member that holds it, and its log is the copy
// its run made there (decision 127). Process trees and delegations stay on the machine that runs
// them (only that host's supervisor signals its trees): here they read as empty, and
// `hostLocalNote` says so where the operator looks for them.
import type { ControlPlaneApproval, ControlPlanePool, ListedSession, ListedTask } from '../control-plane/index.js';
import type { OperatorStore } from './operator-store.js';
import type { ApprovalAnswer, ApprovalAnswerOutcome } from './approval-answer.js';
import { shownDigest } from './approval-answer.js';
import { approvalView, chainView, eventView, logChunkView, type SessionView, type TaskView } from './operator-views.js';
import { displayText } from '../redaction/index.js';
import { SessionNotFoundError } from '../store/index.js';

type ControlPlane = typeof import('../control-plane/index.js');

export const HOST_LOCAL_NOTE = 'process trees and delegations stay on the machine that runs them: open supervisor web there to see them or cancel a tree';

/** A control-plane session as the page shows one, with the machine and pid that owns it. */
export function controlPlaneSessionView(s: ListedSession, principal: string): SessionView {
  const core = typeof s.created.core === 'string' ? s.created.core : '';
  const runtime = typeof s.created.runtime === 'string' ? s.created.runtime : '';
  const owner = s.host === null ? 'no owner' : `${s.host} pid ${s.pid}${s.memberStatus === 'alive' ? '' : ` (member ${s.memberStatus})`}`;
  return {
    id: s.id,
    status: s.status,
    core: displayText(core),
    runtime: displayText(runtime),
    principal: displayText(principal),
    createdAt: s.createdAt,
    endedAt: s.endedAt,
    endReason: s.endReason === null ? null : displayText(s.endReason),
    host: displayText(owner),
  };
}

/** A work-queue task as the page shows one: who runs it and how often it was tried. */
export function controlPlaneTaskView(t: ListedTask): TaskView {
  const runner = t.host === null ? 'not claimed' : `${t.host} pid ${t.pid}`;
  return {
    id: t.id,
    sessionId: t.sessionId,
    kind: displayText(t.kind),
    tool: '',
    status: t.status,
    summary: displayText(`${t.summary === null ? '' : `${t.summary} · `}${runner}; attempt ${t.attempts}, rescued ${t.rescues} of ${t.maxRescues}`),
    exitCode: null,
    reason: t.reason === null ? null : displayText(t.reason),
    createdAt: t.createdAt,
    endedAt: t.endedAt,
  };
}

/**
 * An answer on the control plane, worded as the local store's (one outcome type for every front
 * end): a compare-and-swap there, bound to the digest the operator was shown when `expect` is given.
 */
export async function answerOnControlPlane(cp: ControlPlane, pool: ControlPlanePool, principal: string, a: ApprovalAnswer): Promise<ApprovalAnswerOutcome> {
  const expect = a.expect?.trim().toLowerCase();
  const r = await cp.answerApproval(pool, principal, {
    id: a.id,
    approve: a.approve,
    remember: a.always,
    decidedBy: a.decidedBy,
    ...(expect !== undefined ? { matches: (x: ControlPlaneApproval) => shownDigest(x) === expect } : {}),
  });
  if (!r.record) return { kind: 'not-found' };
  if (r.mismatch) return { kind: 'digest-mismatch', digest: shownDigest(r.record) };
  return r.answered ? { kind: 'answered', record: r.record } : { kind: 'lost', record: r.record };
}

/** The control plane at `url` as the operator's port for `principal` (migrated, as a local store is on open). */
export async function openControlPlaneOperatorStore(url: string, principal: string, applicationName = 'supervisor-web'): Promise<OperatorStore> {
  const cp = await import('../control-plane/index.js');
  const pool = await cp.openPool(url, { applicationName, max: 4 });
  try {
    await cp.migrateControlPlane(pool);
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  // The owner check before a session's events or chain are read: one indexed row, not the listing's
  // join (the page asked for the session itself just before, but the port checks on its own).
  const owned = async (id: string): Promise<boolean> => ((await pool.query('SELECT 1 FROM sessions WHERE id = $1 AND principal = $2', [id, principal])).rowCount ?? 0) > 0;
  return {
    engine: 'postgres',
    location: cp.redactUrl(url),
    hostLocalNote: HOST_LOCAL_NOTE,
    // A round trip per look: the page hears a change within a quarter second, not 25 ms.
    feedPollMs: 250,
    feedHead: () => cp.changeFeedHead(pool),
    feedContinuousAfter: (seq) => cp.changeFeedContinuousAfter(pool, seq),
    changesAfter: (seq, limit) => cp.changesAfter(pool, principal, seq, limit),
    listSessions: async (limit) => (await cp.listSessions(pool, principal, limit)).map((s) => controlPlaneSessionView(s, principal)),
    getSession: async (id) => {
      const s = await cp.getListedSession(pool, principal, id);
      return s && controlPlaneSessionView(s, principal);
    },
    listEvents: async (id, afterSeq, limit) => ((await owned(id)) ? (await cp.readChainEvents(pool, id, afterSeq, limit)).map(eventView) : []),
    verifyChain: async (id) => {
      if (!(await owned(id))) throw new SessionNotFoundError(id);
      return chainView(await cp.verifyControlPlaneChain(pool, id));
    },
    listTasks: async (sessionId, limit) => (await cp.listTasks(pool, principal, { ...(sessionId !== undefined ? { sessionId } : {}), limit })).map(controlPlaneTaskView),
    taskLog: async (id, afterSeq, limit) => {
      const t = (await cp.listTasks(pool, principal, { taskId: id, limit: 1 }))[0];
      const chunks = t && (await cp.readCopiedTaskLogs(pool, principal, id, afterSeq, limit));
      return t && chunks ? { task: controlPlaneTaskView(t), chunks: chunks.map(logChunkView) } : undefined;
    },
    // The member that holds the task stops it on its host (decision 126); a queued one is failed at once.
    requestTaskCancel: async (id, by) => {
      if ((await cp.requestTaskCancel(pool, principal, id, by)) === 'missing') return undefined;
      const t = (await cp.listTasks(pool, principal, { taskId: id, limit: 1 }))[0];
      return t && controlPlaneTaskView(t);
    },
    delegations: async () => [],
    listApprovals: async () => (await cp.listPendingApprovals(pool, principal)).map(approvalView),
    getApproval: async (id) => {
      const r = await cp.getApproval(pool, id);
      return r && r.principal === principal ? approvalView(r) : undefined;
    },
    answerApproval: (a) => answerOnControlPlane(cp, pool, principal, a),
    liveTrees: async () => [],
    requestTreeCancel: async () => ({ kind: 'not-found' }),
    close: () => pool.end(),
  };
}
