// The operator's store port (decision 125; decision 106's first consumer moved over): what an
// operator's page reads and changes, principal-scoped, asynchronous, with one implementation per
// engine. `sqliteOperatorStore` wraps this machine's store (the same synchronous queries the page
// always made, as resolved promises); `openControlPlaneOperatorStore`
// (control-plane-operator-store.ts) reads the PostgreSQL control plane, every member's sessions,
// tasks and requests. Both return the operator views (operator-views.ts): sanitised, ready to show.
import { OperatorChangeFeed, PendingApprovalStore, SessionStore, TaskStore, verifyChain, type Database, type OperatorChange, type PrincipalScope } from '../store/index.js';
import { answerApproval, type ApprovalAnswer, type ApprovalAnswerOutcome } from './approval-answer.js';
import { approvalView, chainView, eventView, logChunkView, sessionView, taskView, type ApprovalView, type EventView, type LogChunkView, type SessionView, type TaskView } from './operator-views.js';
import { delegationTree, delegationView, type DelegationView } from './delegation-tree.js';
import { liveTrees, type TreeView } from './live-trees.js';
import { requestTreeCancel, type TreeCancelOutcome } from './tree-cancel.js';

export interface OperatorStore {
  readonly engine: 'sqlite' | 'postgres';
  /** What it reads: the store's file, or the control plane's URL without its password. */
  readonly location: string;
  /**
   * What this store cannot show, said once to the operator (the control plane holds no process
   * trees or delegations: those stay on the machine that runs them); null: nothing.
   */
  readonly hostLocalNote: string | null;
  /** How often the live stream reads the feed's head (a local file is cheap; a server is not). */
  readonly feedPollMs: number;

  /** The newest change's seq (by anyone): a cheap "has anything changed" probe. */
  feedHead(): Promise<number>;
  /** False once changes after `seq` were dropped from the feed (the reader reloads its lists). */
  feedContinuousAfter(seq: number): Promise<boolean>;
  /** The principal's changes after `seq`, oldest first. */
  changesAfter(seq: number, limit?: number): Promise<OperatorChange[]>;

  listSessions(limit: number): Promise<SessionView[]>;
  getSession(id: string): Promise<SessionView | undefined>;
  listEvents(sessionId: string, afterSeq: number, limit: number): Promise<EventView[]>;
  verifyChain(sessionId: string): Promise<{ ok: boolean; text: string }>;
  listTasks(sessionId: string | undefined, limit: number): Promise<TaskView[]>;
  /** A task and its log after `afterSeq`; undefined: no such task of the principal's here. */
  taskLog(id: string, afterSeq: number, limit: number): Promise<{ task: TaskView; chunks: LogChunkView[] } | undefined>;
  /** Asks the run that owns the task to stop it (`requestedBy` is kept where the engine records it); undefined: no such task of the principal's here, or it ended. */
  requestTaskCancel(id: string, requestedBy: string): Promise<TaskView | undefined>;
  delegations(sessionId: string): Promise<DelegationView[]>;

  listApprovals(): Promise<ApprovalView[]>;
  getApproval(id: string): Promise<ApprovalView | undefined>;
  answerApproval(a: ApprovalAnswer): Promise<ApprovalAnswerOutcome>;

  liveTrees(): Promise<TreeView[]>;
  requestTreeCancel(spawnId: string, requestedBy: string): Promise<TreeCancelOutcome>;

  close(): Promise<void>;
}

/** This machine's store as the operator's port; `close` leaves `db` open (its opener closes it). */
export function sqliteOperatorStore(db: Database, principal: string, location: string): OperatorStore {
  const scope: PrincipalScope = { principal };
  const sessions = new SessionStore(db);
  const tasks = new TaskStore(db);
  const approvals = new PendingApprovalStore(db);
  const feed = new OperatorChangeFeed(db);
  const owned = (id: string) => sessions.getSession(scope, id);
  return {
    engine: 'sqlite',
    location,
    hostLocalNote: null,
    feedPollMs: 25,
    feedHead: async () => feed.head(),
    feedContinuousAfter: async (seq) => feed.continuousAfter(seq),
    changesAfter: async (seq, limit) => feed.after(scope, seq, limit),
    listSessions: async (limit) => sessions.listSessions(scope, { limit }).map(sessionView),
    getSession: async (id) => {
      const s = owned(id);
      return s && sessionView(s);
    },
    listEvents: async (id, afterSeq, limit) => (owned(id) ? sessions.listEvents(scope, id, { afterSeq, limit }).map(eventView) : []),
    verifyChain: async (id) => chainView(verifyChain(db, id)),
    listTasks: async (sessionId, limit) => tasks.list(scope, { ...(sessionId !== undefined ? { sessionId } : {}), limit }).map(taskView),
    taskLog: async (id, afterSeq, limit) => {
      const t = tasks.get(scope, id);
      const chunks = tasks.logs(scope, id, { afterSeq, limit });
      return t && chunks ? { task: taskView(t), chunks: chunks.map(logChunkView) } : undefined;
    },
    requestTaskCancel: async (id, _requestedBy) => {
      const t = tasks.requestCancel(scope, id);
      return t && taskView(t);
    },
    delegations: async (id) => delegationTree(db, scope, id).map(delegationView),
    listApprovals: async () => approvals.list(scope).map(approvalView),
    getApproval: async (id) => {
      const r = approvals.get(scope, id);
      return r && approvalView(r);
    },
    answerApproval: async (a) => answerApproval(approvals, scope, a),
    liveTrees: () => liveTrees(db, scope),
    requestTreeCancel: async (spawnId, by) => requestTreeCancel(db, scope, spawnId, by),
    close: async () => undefined,
  };
}
