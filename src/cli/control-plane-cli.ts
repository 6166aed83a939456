// The CLI on the PostgreSQL control plane (issue 21): `--store postgres://…` (or
// SUPERVISOR_STORE_URL) on `run` and `approvals`. A run joins as a member and asks its approvals
// there; `supervisor approvals --store …` on any machine lists and answers them. Loaded only when
// a store URL is given: the pg driver costs a start that the other commands need not pay.
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Approver, ApprovalRequest } from '../policy/index.js';
import type { ListedApproval } from '../store/index.js';
import type { ApprovalAnswer, ApprovalAnswerOutcome } from '../operator/approval-answer.js';
import { localPrincipal } from './principal.js';
import { UsageError } from './usage.js';

/** The control plane's URL: --store, else $SUPERVISOR_STORE_URL, else none (this machine's SQLite store). */
export function storeUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = flag ?? (env.SUPERVISOR_STORE_URL || undefined);
  if (url === undefined) return undefined;
  if (!/^postgres(ql)?:\/\//i.test(url)) {
    const from = flag !== undefined ? '--store' : 'SUPERVISOR_STORE_URL';
    throw new UsageError(`${from} takes a PostgreSQL URL, postgres://user@host:5432/database (this machine's SQLite store is --state-dir); got ${url.includes('://') ? `scheme ${url.split('://')[0]}:` : 'no URL'}`);
  }
  return url;
}

/** A control-plane refusal (a bad URL, a server that does not answer, a newer schema) as the CLI words it: exit 2, no stack. */
async function controlPlane<T>(what: () => Promise<T>): Promise<T> {
  const { ControlPlaneError } = await import('../control-plane/index.js');
  try {
    return await what();
  } catch (err) {
    if (err instanceof ControlPlaneError) throw new UsageError(`--store: ${err.message}`);
    throw err;
  }
}

/** What `supervisor approvals` reads and answers, wherever the requests are. */
export interface ApprovalsBackend {
  list(): Promise<ListedApproval[]>;
  answer(a: ApprovalAnswer): Promise<ApprovalAnswerOutcome>;
  close(): Promise<void>;
}

/** The requests of the local principal on the control plane at `url`, from any member. */
export async function controlPlaneApprovals(url: string): Promise<ApprovalsBackend> {
  const { cp, pool } = await operatorPool(url, 'supervisor-approvals');
  const principal = localPrincipal();
  return {
    // A control-plane session has no delegation chain of its own: the request's session is its chain.
    list: async () => (await cp.listPendingApprovals(pool, principal)).map((r) => ({ ...r, chain: [r.sessionId] })),
    answer: async (a) => (await import('../operator/control-plane-operator-store.js')).answerOnControlPlane(cp, pool, principal, a),
    close: () => pool.end(),
  };
}

/** The control plane as the operator's port (supervisor web --store), for the local principal. */
export async function controlPlaneOperatorStore(url: string): Promise<import('../operator/operator-store.js').OperatorStore> {
  const { openControlPlaneOperatorStore } = await import('../operator/control-plane-operator-store.js');
  return controlPlane(() => openControlPlaneOperatorStore(url, localPrincipal()));
}

/** One short-lived connection for an operator command on the control plane (migrated, like a local store is). */
async function operatorPool(url: string, name: string) {
  const cp = await import('../control-plane/index.js');
  const pool = await controlPlane(() => cp.openPool(url, { applicationName: name, max: 1 }));
  try {
    await controlPlane(() => cp.migrateControlPlane(pool));
    return { cp, pool };
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
}

/** The local principal's sessions on the control plane, from every member, newest first. */
export async function controlPlaneSessions(url: string, limit: number): Promise<import('../control-plane/index.js').ListedSession[]> {
  const { cp, pool } = await operatorPool(url, 'supervisor-sessions');
  try {
    return await cp.listSessions(pool, localPrincipal(), limit);
  } finally {
    await pool.end();
  }
}

/** A task's log as `supervisor logs` reads it, on this machine's store or on the control plane. */
export interface TaskLogBackend {
  /** Chunks after `afterSeq`; undefined: no such task of yours. */
  read(afterSeq: number): Promise<import('../store/index.js').TaskLogChunk[] | undefined>;
  /** The task's status now, and why it ended (null while running). */
  state(): Promise<{ status: string; reason: string | null }>;
  close(): Promise<void>;
}

/** The local principal's task `id` on the control plane: the log its run copied there (decision 127). */
export async function controlPlaneTaskLog(url: string, id: string): Promise<TaskLogBackend> {
  const { cp, pool } = await operatorPool(url, 'supervisor-logs');
  const principal = localPrincipal();
  return {
    read: (afterSeq) => controlPlane(() => cp.readCopiedTaskLogs(pool, principal, id, afterSeq)),
    state: async () => {
      const t = (await controlPlane(() => cp.listTasks(pool, principal, { taskId: id, limit: 1 })))[0];
      return t ? { status: t.status, reason: t.reason } : { status: 'archived', reason: null };
    },
    close: () => pool.end(),
  };
}

/** The local principal's tasks on the control plane, from every member, newest first. */
export async function controlPlaneTasks(url: string, o: { sessionId?: string; limit: number }): Promise<import('../control-plane/index.js').ListedTask[]> {
  const { cp, pool } = await operatorPool(url, 'supervisor-tasks');
  try {
    return await cp.listTasks(pool, localPrincipal(), o);
  } finally {
    await pool.end();
  }
}

/**
 * Cancels the local principal's session or task `id` on whichever member runs it, then waits up
 * to `waitMs` for it to end there. `outcome`: what the request found; `status`: its status after
 * the wait (null when there is no such session or task of yours).
 */
export async function controlPlaneCancel(url: string, id: string, waitMs: number): Promise<{ what: 'session' | 'task'; outcome: 'requested' | 'already' | 'ended' | 'missing'; status: string | null }> {
  const { cp, pool } = await operatorPool(url, 'supervisor-cancel');
  try {
    const principal = localPrincipal();
    const by = controlPlaneDecidedBy().replace('supervisor approvals', 'supervisor cancel');
    let what: 'session' | 'task' = 'session';
    let outcome = await cp.requestSessionCancel(pool, principal, id, by);
    if (outcome === 'missing') {
      what = 'task';
      outcome = await cp.requestTaskCancel(pool, principal, id, by);
    }
    const statusOf = async (): Promise<string | null> =>
      what === 'session'
        ? ((await cp.getListedSession(pool, principal, id))?.status ?? null)
        : ((await cp.listTasks(pool, principal, { taskId: id, limit: 1 }))[0]?.status ?? null);
    const deadline = Date.now() + waitMs;
    let status = await statusOf();
    while (status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      status = await statusOf();
    }
    return { what, outcome, status };
  } finally {
    await pool.end();
  }
}


/** One control-plane session's chain as `audit verify --store` reports it, with what its copies are worth. */
export type ControlPlaneChain = import('../control-plane/index.js').CopyCheck & { verification: import('../store/index.js').ChainVerification };

/** Verifies the local principal's chains on the control plane (one with `only`: its id or its run's local session id). */
export async function controlPlaneAudit(url: string, only: string | null): Promise<{ store: string; chains: ControlPlaneChain[] }> {
  const { cp, pool } = await operatorPool(url, 'supervisor-audit');
  try {
    const chains: ControlPlaneChain[] = [];
    for (const id of await cp.principalSessionIds(pool, localPrincipal(), only)) {
      chains.push({ verification: await cp.verifyControlPlaneChain(pool, id), ...(await cp.checkCopies(pool, id)) });
    }
    return { store: cp.redactUrl(url), chains };
  } finally {
    await pool.end();
  }
}

/** Who answered, as the asking member is told: the machine, not only a pid. */
export function controlPlaneDecidedBy(): string {
  return `supervisor approvals on ${hostname()} (pid ${process.pid})`;
}

/** With --store and no --await-approval: how long a prompt waits for an operator on any member. */
export const DEFAULT_STORE_APPROVAL_WAIT_MS = 10 * 60_000;

/** Why a run on the control plane must stop: an operator cancelled it there, or it lost its place (fenced, or the server gone). */
export interface ControlPlaneStop {
  kind: 'cancelled' | 'lost';
  /** Who cancelled it, or what was lost. */
  why: string;
}

/** A run's membership of the control plane: its approver, and how it leaves. */
export interface RunMembership {
  readonly approver: Approver;
  readonly memberId: string;
  /** session_search over the other machines' runs, through their copies on the control plane (decision 127). */
  readonly otherMachines: import('../session/shared-history.js').OtherMachinesSearch;
  /** --resume of a session another machine ran: its checked copy there (decision 129). */
  readonly resumeElsewhere: import('../session/resume-elsewhere.js').ResumeElsewhere;
  /**
   * Registers the run's session there (operators on any member list it) and watches for its
   * cancel (supervisor cancel --store), which arrives through `onStop`. Returns its control-plane id.
   */
  attach(sessionId: string, principal: string, coreName: string): Promise<string>;
  /**
   * Shows a delegated child session there too, copied as the run's is; a cancel of it from any
   * member cancels the task that runs it (`taskId`), not the run.
   */
  attachChild(sessionId: string, principal: string, coreName: string, taskId: string): Promise<string>;
  /** Ends the run's control-plane sessions with its status, stops listening and leaves. */
  leave(status: string): Promise<void>;
}

/**
 * Joins the control plane for one run: a member with a heartbeat, a listener for answers and
 * cancels, and an approver whose requests any member may answer for `waitMs`. `onStop` is called
 * once: the member fenced itself (it could not renew in time), a request could not be carried
 * (the run cannot be answered any more), or an operator cancelled the attached session.
 */
export async function joinForRun(
  url: string,
  o: { waitMs: number; coreDir: string; stateDir: string; onPending: (id: string, r: ApprovalRequest) => void; onStop: (stop: ControlPlaneStop) => void },
): Promise<RunMembership> {
  const cp = await import('../control-plane/index.js');
  const { ControlPlaneApprover } = await import('../policy/control-plane-approver.js');
  const { ownProcessIdentity } = await import('../process/own-identity.js');
  const pool = await controlPlane(() => cp.openPool(url, { applicationName: 'supervisor-run' }));
  const opened: (() => Promise<unknown>)[] = [() => pool.end()];
  const unwind = async (): Promise<void> => {
    for (const close of opened.splice(0).reverse()) await close().catch(() => undefined);
  };
  try {
    await controlPlane(() => cp.migrateControlPlane(pool));
    const lost = (why: string): void => o.onStop({ kind: 'lost', why });
    const member = await controlPlane(() => cp.ControlPlaneMember.join(pool, ownProcessIdentity(), { onFenced: lost }));
    opened.push(() => member.leave('the run ended'));
    const listener = new cp.ControlPlaneListener(url);
    await controlPlane(async () => {
      try {
        await listener.start();
      } catch (err) {
        throw new cp.ControlPlaneError('CONTROL_PLANE_UNREACHABLE', `cannot listen for approvals at ${cp.redactUrl(url)}: ${(err as Error).message}`);
      }
    });
    opened.push(() => listener.close());
    // One copy per session: two shippers of one chain would interleave their copies there.
    const mirrors = new Map<string, RunMirror>();
    const childAttaches = new Set<Promise<void>>();
    const mirrorOnce = async (sessionId: string, lease: import('../control-plane/index.js').Lease, principal: string): Promise<RunMirror> => {
      const shown = mirrors.get(sessionId) ?? (await mirrorRun(cp, { member, lease, listener, stateDir: o.stateDir, sessionId, principal, onLost: lost }));
      mirrors.set(sessionId, shown);
      return shown;
    };
    const approver = new ControlPlaneApprover({ member, listener, waitMs: o.waitMs, sessionPayload: { core: o.coreDir, host: hostname() }, onPending: o.onPending, onUnavailable: lost });
    return {
      approver,
      memberId: member.id,
      otherMachines: (scope, query, exceptRuns) => cp.searchCopiedMessages(pool, scope, query, exceptRuns),
      resumeElsewhere: async (principal, id) => {
        const copy = await controlPlane(() => cp.resumableCopy(pool, principal, id));
        if (copy === undefined || 'refused' in copy) return copy;
        const name = copy.created.core_name;
        return { from: copy.sessionId, head: copy.head, coreName: typeof name === 'string' ? name : null, messages: copy.messages, notCopied: copy.notCopied };
      },
      async attach(sessionId, principal, coreName) {
        // The core's name goes with it: a run on another machine resumes it only with that core (decision 129).
        const lease = await controlPlane(() => approver.sessionFor(sessionId, principal, { core_name: coreName }));
        listener.watchCancel(lease.id, (by) => o.onStop({ kind: 'cancelled', why: by }));
        await mirrorOnce(sessionId, lease, principal);
        return lease.id;
      },
      attachChild(sessionId, principal, coreName, taskId) {
        const attaching = (async () => {
          const lease = await controlPlane(() => approver.sessionFor(sessionId, principal, { core_name: coreName, delegated_by_task: taskId }));
          const mirror = await mirrorOnce(sessionId, lease, principal);
          listener.watchCancel(lease.id, () => mirror.cancelTask(taskId));
          return lease.id;
        })();
        // The run's end waits for it: a child shown after the run left would copy nothing, and leak.
        const settled = attaching.then(() => undefined, () => undefined);
        childAttaches.add(settled);
        void settled.then(() => childAttaches.delete(settled));
        return attaching;
      },
      async leave(status) {
        await Promise.all(childAttaches);
        // The run's last tasks and events (its end) are on the control plane before its session ends there.
        for (const mirror of mirrors.values()) await mirror.stop();
        mirrors.clear();
        for (const lease of await approver.openedLeases()) await cp.endOwnedSession(member, lease, status).catch(() => undefined);
        await unwind();
      },
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}

/** One session of the run shown on the control plane; `cancelTask` asks the run's worker to stop a task. */
interface RunMirror {
  stop(): Promise<void>;
  cancelTask(id: string): void;
}

/**
 * Starts showing the run on its control-plane session: its audit chain copied (decision 124), with
 * its messages and its tasks' logs (decision 127), and its background tasks held there (decision 126), read through a store connection of its own: the
 * copy goes on after the session's store is closed, so the run's end is copied too. A cancel of a
 * task asked on any member becomes a cancel request in this store, which the run's worker acts on.
 * `stop()` mirrors what is left and closes the connection.
 */
async function mirrorRun(
  cp: typeof import('../control-plane/index.js'),
  o: {
    member: import('../control-plane/index.js').ControlPlaneMember;
    lease: import('../control-plane/index.js').Lease;
    listener: import('../control-plane/index.js').ControlPlaneListener;
    stateDir: string;
    sessionId: string;
    principal: string;
    onLost: (why: string) => void;
  },
): Promise<RunMirror> {
  const { openStore, readEventRows, readStoredMessages, TaskStore } = await import('../store/index.js');
  const db = openStore(join(o.stateDir, 'supervisor.db'), { checkpointer: false });
  const tasks = new TaskStore(db);
  const scope = { principal: o.principal };
  const shipper = new cp.ChainShipper({
    member: o.member,
    lease: o.lease,
    localSession: o.sessionId,
    read: (afterSeq, limit) => readEventRows(db, o.sessionId, { afterSeq, limit }),
    readMessages: (afterSeq, throughSeq, limit) => readStoredMessages(db, o.sessionId, { afterSeq, throughSeq, limit }),
    onLost: o.onLost,
  });
  const taskMirror = new cp.RunTaskMirror({
    member: o.member,
    lease: o.lease,
    listener: o.listener,
    read: () => tasks.list(scope, { sessionId: o.sessionId, limit: 200 }).map((t) => ({ id: t.id, kind: t.kind, summary: t.summary, status: t.status, exitCode: t.exitCode, reason: t.reason })),
    readLogs: (id, afterSeq, limit) => tasks.logs(scope, id, { afterSeq, limit }) ?? [],
    onCancel: (id) => void tasks.requestCancel(scope, id),
    onLost: o.onLost,
  });
  shipper.start();
  taskMirror.start();
  return {
    async stop() {
      try {
        await taskMirror.stop();
        await shipper.stop();
      } finally {
        db.close();
      }
    },
    cancelTask: (id) => void (db.open && tasks.requestCancel(scope, id)),
  };
}
