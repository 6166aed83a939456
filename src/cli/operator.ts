// The operator's commands, usable from another terminal while a run is live: sessions, tasks,
// logs (with --follow) and cancel. They read the store through the same PrincipalScope as the run
// (the local user); a cancel is a request the owning run acts on within a fraction of a second.
import { cliIo } from './io.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStore, PendingApprovalStore, SessionStore, type ListedApproval, type PendingApproval, TaskStore, type Database, type TaskRecord } from '../store/index.js';
import { displayJson, displayPreview, displayText } from '../redaction/index.js';
import { answerApproval, decidedByText, shownDigest } from '../operator/approval-answer.js';
import { requestTreeCancel, treeCancelText, treeRecord } from '../operator/tree-cancel.js';
import { localPrincipal } from './principal.js';
import { parseFlags, type ParsedFlags } from './flags.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';
import { controlPlaneApprovals, controlPlaneCancel, controlPlaneDecidedBy, controlPlaneSessions, controlPlaneTaskLog, controlPlaneTasks, storeUrlOf, type ApprovalsBackend, type TaskLogBackend } from './control-plane-cli.js';

export const SESSIONS_HELP = `Usage: supervisor sessions [--json] [--limit N] [--state-dir DIR | --store URL]

Lists your sessions, newest first: id, status, core, started and ended times, and why a session
was interrupted (its supervisor died; see supervisor reconcile). --store postgres://… (or
$SUPERVISOR_STORE_URL) lists your runs on every machine of that control plane (runs started with
--store), each with the host and pid that owns it.
`;
export const TASKS_HELP = `Usage: supervisor tasks [--session ID] [--json] [--limit N] [--state-dir DIR | --store URL]

Lists your background tasks, newest first: id, status, exit code or reason, session, summary.
--store postgres://… (or $SUPERVISOR_STORE_URL) lists your tasks on that control plane's work
queue instead, from every machine: status, attempts, rescues, and the host and pid of the member
that runs (or ran) each; --session takes a session id from supervisor sessions --store.
`;
export const LOGS_HELP = `Usage: supervisor logs <task> [--follow] [--json] [--state-dir DIR | --store URL]

Prints a background task's log (redacted; bounded per task, the full output is in its artifacts).
--follow keeps printing new output until the task ends (Ctrl-C stops following, not the task).
--json prints one JSON object per chunk: {seq, stream, at, chunk}.
With --store postgres://… (or $SUPERVISOR_STORE_URL), reads the log of one of your tasks on any
machine, as its run copied it to the control plane (within about a quarter second of the task
writing it; the task's artifacts stay on its host).
`;
export const CANCEL_HELP = `Usage: supervisor cancel <task | spawn id> [--json] [--wait S] [--state-dir DIR]
       supervisor cancel <session | task> --store URL [--json] [--wait S]

Asks the run that owns the task to stop it (its whole process tree) and waits up to S seconds
(default 10) for the end state. A spawn id (sp_…, as supervisor ps lists it) names one live
process tree instead, a background task's or a running tool call's (a long terminal command, an
MCP server): its run stops the whole tree (TERM, then KILL), records the cancel in the session's
audit chain, and the call returns a cancelled result to the model; the run goes on.
With --store postgres://… (or $SUPERVISOR_STORE_URL), cancels one of your runs on any machine of
that control plane (a session id from supervisor sessions --store): the member that owns it stops
the run and its trees; or one of your tasks there (an id from supervisor tasks --store): the run
that holds it stops its tree (a task still queued is failed at once).
Exit status: 0 the task, tree or run ended (a task or run: or had ended), 1 it is still running
after the wait, 2 no such task, tree or session of yours, or the tree had ended already.
`;

export function openForOperator(stateDir: string | undefined): { db: Database; principal: string } {
  const dir = resolve(stateDir ?? defaultStateDir());
  const file = join(dir, 'supervisor.db');
  if (!existsSync(file)) throw new UsageError(`no store at ${file}; run a session first, or pass --state-dir`);
  // No checkpoint thread for a view: it reads, or makes one small write (cancel, an answer).
  return { db: openStore(file, { checkpointer: false }), principal: localPrincipal() };
}

const when = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19));
const limitOf = (v: string | undefined): number => {
  if (v === undefined) return 50;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UsageError(`--limit must be a whole number from 1 to 1000, got ${JSON.stringify(v)}`);
  return n;
};

export async function runSessions(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['limit', 'state-dir', 'store'], multi: [] }, 'sessions');
  if (f.help) return void cliIo().stdout.write(SESSIONS_HELP), 0;
  if (f.positionals.length > 0) throw new UsageError('sessions takes no arguments; see supervisor sessions --help');
  const url = storeUrlOf(f.value.get('store'));
  if (url !== undefined) return controlPlaneSessionList(url, f);
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  try {
    const rows = new SessionStore(db).listSessions({ principal }, { limit: limitOf(f.value.get('limit')) });
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ sessions: rows })}\n`);
    else if (rows.length === 0) cliIo().stdout.write('no sessions\n');
    else for (const s of rows) cliIo().stdout.write(`${s.id}  ${s.status.padEnd(11)} ${when(s.createdAt)} → ${when(s.endedAt)}  ${displayText(s.coreDir)}${s.endReason ? ` (${displayText(s.endReason)})` : ''}\n`);
    return 0;
  } finally {
    db.close();
  }
}

/** `sessions --store`: the runs of every member, with the host and pid that owns each. */
async function controlPlaneSessionList(url: string, f: ParsedFlags): Promise<number> {
  if (f.value.get('state-dir') !== undefined) throw new UsageError('--store and --state-dir name two different stores; give one');
  const rows = await controlPlaneSessions(url, limitOf(f.value.get('limit')));
  if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ sessions: rows })}\n`);
  else if (rows.length === 0) cliIo().stdout.write('no sessions of yours on the control plane\n');
  else {
    for (const s of rows) {
      const owner = s.host === null ? 'no owner' : `${displayText(s.host)} pid ${s.pid}${s.memberStatus === 'alive' ? '' : ` (member ${s.memberStatus})`}`;
      const core = typeof s.created.core === 'string' ? `  ${displayText(s.created.core)}` : '';
      cliIo().stdout.write(`${s.id}  ${s.status.padEnd(11)} ${when(s.createdAt)} → ${when(s.endedAt)}  ${owner}${core}${s.endReason ? ` (${displayText(s.endReason)})` : ''}\n`);
    }
  }
  return 0;
}

/** `tasks --store`: the work queue's tasks of the principal's sessions, with the member running each. */
async function controlPlaneTaskList(url: string, f: ParsedFlags): Promise<number> {
  if (f.value.get('state-dir') !== undefined) throw new UsageError('--store and --state-dir name two different stores; give one');
  const session = f.value.get('session');
  const rows = await controlPlaneTasks(url, { ...(session ? { sessionId: session } : {}), limit: limitOf(f.value.get('limit')) });
  if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ tasks: rows })}\n`);
  else if (rows.length === 0) cliIo().stdout.write('no tasks of yours on the control plane\n');
  else {
    for (const t of rows) {
      const runner = t.host === null ? 'not claimed' : `${displayText(t.host)} pid ${t.pid}${t.memberStatus === 'alive' ? '' : ` (member ${t.memberStatus})`}`;
      const tries = `attempt ${t.attempts}, rescued ${t.rescues} of ${t.maxRescues}`;
      const what = t.summary === null ? '' : `  ${displayPreview(t.summary, 60, 'supervisor tasks --store --json prints all')}`;
      cliIo().stdout.write(`${t.id}  ${t.status.padEnd(11)} ${when(t.createdAt)}  ${displayText(t.kind)}${what}  ${runner}  ${tries}${t.reason ? ` (${displayText(t.reason)})` : ''}  ${t.sessionId}\n`);
    }
  }
  return 0;
}

function taskLine(t: TaskRecord): string {
  const end = t.status === 'running' ? '' : ` (${displayText(t.reason ?? (t.exitCode === null ? '?' : `exit code ${t.exitCode}`))})`;
  return `${t.id}  ${t.status.padEnd(11)} ${when(t.createdAt)}  ${t.sessionId}  ${displayPreview(t.summary, 80, 'supervisor tasks --json prints all')}${end}`;
}

export async function runTasks(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['session', 'limit', 'state-dir', 'store'], multi: [] }, 'tasks');
  if (f.help) return void cliIo().stdout.write(TASKS_HELP), 0;
  if (f.positionals.length > 0) throw new UsageError('tasks takes no arguments; see supervisor tasks --help');
  const url = storeUrlOf(f.value.get('store'));
  if (url !== undefined) return controlPlaneTaskList(url, f);
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  try {
    const session = f.value.get('session');
    const rows = new TaskStore(db).list({ principal }, { ...(session ? { sessionId: session } : {}), limit: limitOf(f.value.get('limit')) });
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ tasks: rows.map(({ logTail: _t, ...r }) => r) })}\n`);
    else if (rows.length === 0) cliIo().stdout.write('no tasks\n');
    else for (const t of rows) cliIo().stdout.write(`${taskLine(t)}\n`);
    return 0;
  } finally {
    db.close();
  }
}

export async function runLogs(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json', 'follow'], value: ['state-dir', 'store'], multi: [] }, 'logs');
  if (f.help) return void cliIo().stdout.write(LOGS_HELP), 0;
  const [id, ...extra] = f.positionals;
  const url = storeUrlOf(f.value.get('store'));
  if (!id || extra.length > 0) throw new UsageError(`logs needs one task id: supervisor logs <task>; supervisor tasks${url !== undefined ? ' --store' : ''} lists them`);
  if (url !== undefined && f.value.get('state-dir') !== undefined) throw new UsageError('--store and --state-dir name two different stores; give one');
  const backend = url !== undefined ? await controlPlaneTaskLog(url, id) : localTaskLog(f.value.get('state-dir'), id);
  let stop = false;
  const onSigint = (): void => void (stop = true);
  process.once('SIGINT', onSigint);
  try {
    let after = 0;
    for (;;) {
      const chunks = await backend.read(after);
      if (chunks === undefined) {
        cliIo().stderr.write(`supervisor logs: no task ${displayText(id)} (supervisor tasks${url !== undefined ? ' --store' : ''} lists yours)\n`);
        return 2;
      }
      for (const c of chunks) {
        after = c.seq;
        // A task's output is untrusted text: newline and tab stay (a log is multi-line), every other
        // control, format and bidi character is shown as an escape (docs/security-model.md, *Views*).
        if (f.bool.has('json')) cliIo().stdout.write(`${displayJson(c)}\n`);
        else if (c.stream === 'note') cliIo().stderr.write(`${displayText(c.chunk)}\n`);
        else (c.stream === 'stderr' ? cliIo().stderr : cliIo().stdout).write(displayText(c.chunk, { keep: 'log' }));
      }
      if (!f.bool.has('follow') || stop) return 0;
      const t = await backend.state();
      if (t.status !== 'running' && t.status !== 'queued' && chunks.length === 0) {
        cliIo().stderr.write(`[task ${t.status}${t.reason ? `: ${displayText(t.reason)}` : ''}]\n`);
        return 0;
      }
      // A server round trip per look on the control plane; a local file is cheap.
      if (chunks.length === 0) await new Promise((r) => setTimeout(r, url !== undefined ? 500 : 200));
    }
  } finally {
    process.off('SIGINT', onSigint);
    await backend.close();
  }
}

/** A task's log in this machine's store. */
function localTaskLog(stateDir: string | undefined, id: string): TaskLogBackend {
  const { db, principal } = openForOperator(stateDir);
  const store = new TaskStore(db);
  return {
    read: async (afterSeq) => store.logs({ principal }, id, { afterSeq }),
    state: async () => {
      const t = store.get({ principal }, id)!;
      return { status: t.status, reason: t.reason };
    },
    close: async () => void db.close(),
  };
}

export async function runCancel(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['wait', 'state-dir', 'store'], multi: [] }, 'cancel');
  if (f.help) return void cliIo().stdout.write(CANCEL_HELP), 0;
  const [id, ...extra] = f.positionals;
  if (!id || extra.length > 0) throw new UsageError('cancel needs one task id or spawn id: supervisor cancel <task | sp_…>');
  const waitS = f.value.get('wait') === undefined ? 10 : Number(f.value.get('wait'));
  if (!Number.isFinite(waitS) || waitS < 0 || waitS > 600) throw new UsageError(`--wait must be seconds from 0 to 600, got ${JSON.stringify(f.value.get('wait'))}`);
  const url = storeUrlOf(f.value.get('store'));
  if (url !== undefined) return controlPlaneCancelRun(url, id, waitS, f);
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  if (id.startsWith('sp_')) return cancelTree(db, principal, id, waitS, f.bool.has('json'));
  const store = new TaskStore(db);
  try {
    let t = store.requestCancel({ principal }, id);
    if (!t) {
      cliIo().stderr.write(`supervisor cancel: no task ${id} (supervisor tasks lists yours)\n`);
      return 2;
    }
    const deadline = Date.now() + waitS * 1000;
    while (t.status === 'running' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      t = store.get({ principal }, id)!;
    }
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ id: t.id, status: t.status, exitCode: t.exitCode, reason: t.reason })}\n`);
    else cliIo().stdout.write(`${taskLine(t)}\n`);
    return t.status === 'running' ? 1 : 0;
  } finally {
    db.close();
  }
}

/** `cancel --store`: the run that owns the session, on whichever member, is told to stop; then the wait. */
async function controlPlaneCancelRun(url: string, id: string, waitS: number, f: ParsedFlags): Promise<number> {
  if (f.value.get('state-dir') !== undefined) throw new UsageError('--store and --state-dir name two different stores; give one');
  const { what, outcome, status } = await controlPlaneCancel(url, id, waitS * 1000);
  if (outcome === 'missing') {
    cliIo().stderr.write(`supervisor cancel: no session or task ${displayText(id)} of yours on the control plane (supervisor sessions --store and tasks --store list them)\n`);
    return 2;
  }
  if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ id, ...(what === 'task' ? { task: true } : {}), cancel: outcome, status })}\n`);
  else cliIo().stdout.write(`${id}  ${status ?? '?'}  (${outcome === 'requested' ? 'cancel sent to its member' : outcome === 'already' ? 'a cancel was already asked' : 'it was not running'})\n`);
  return status === 'running' ? 1 : 0;
}

/** `supervisor cancel sp_…`: one live tree, stopped by the run that owns it (src/operator/tree-cancel.ts). */
async function cancelTree(db: Database, principal: string, id: string, waitS: number, json: boolean): Promise<number> {
  try {
    const o = requestTreeCancel(db, { principal }, id, `supervisor cancel at a terminal (pid ${process.pid})`);
    const text = treeCancelText(id, o);
    if (o.kind === 'malformed' || o.kind === 'not-found' || o.kind === 'ended') {
      if (json) cliIo().stdout.write(`${displayJson({ id, refused: o.kind, message: text })}\n`);
      cliIo().stderr.write(`supervisor cancel: ${text}\n`);
      return 2;
    }
    let r = treeRecord(db, id)!;
    const deadline = Date.now() + waitS * 1000;
    while ((r.status === 'running' || r.status === 'starting') && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 100));
      r = treeRecord(db, id)!;
    }
    const running = r.status === 'running' || r.status === 'starting';
    if (json) cliIo().stdout.write(`${displayJson({ id, requested: o.kind, status: r.status, signal: r.signal, exitCode: r.exitCode, ownerPid: r.ownerPid, sessionId: o.sessionId })}\n`);
    else cliIo().stdout.write(`${text}\n${id}  ${r.status}${running ? ` after ${waitS} s: its run (pid ${r.ownerPid}) has not stopped it yet; if that run is gone, supervisor reconcile stops the tree` : ''}\n`);
    return running ? 1 : 0;
  } finally {
    db.close();
  }
}

export const APPROVALS_HELP = `Usage: supervisor approvals [--json] [--state-dir DIR | --store URL]
       supervisor approvals show <id> [--json] [--state-dir DIR | --store URL]
       supervisor approvals approve <id> [--expect DIGEST] [--always] [--json] [--state-dir DIR | --store URL]
       supervisor approvals deny <id> [--always] [--json] [--state-dir DIR | --store URL]

Lists the approval requests your runs are waiting on (runs started without a terminal and with
--await-approval), with the tool, capability, the action, the bounded, redacted argument preview
and the digest of what is shown; approve or deny one by id. Untrusted text is shown with every
control, format and bidi character as an escape (\\x1b, \\r, \\u202e; a backslash as \\\\), so what
you read is the exact action. A long action is cut in the list, saying so; show <id> prints all of
it. --expect DIGEST approves only if the request still is the one whose digest you were shown.
--always remembers the answer for this exact action (the same approval key) for the rest of that
run. --store postgres://user@host:5432/db (or $SUPERVISOR_STORE_URL) reads and answers the
requests of runs on any machine of that control plane (runs started with --store); the waiting run
hears the answer at once (LISTEN/NOTIFY), or within its poll interval if the notice was lost.
Exit status: 0 done, 1 --expect does not match (nothing was answered), 2 no such waiting request,
or a store URL that is wrong or does not answer.
`;

/** How much of an action the list shows before it says it was cut. */
const LIST_ACTION_MAX = 500;

// The digest lives with the answer's one copy (src/operator/), shared with the web page.
export { shownDigest };

/** One request as the operator reads it; `full` shows the whole action instead of a cut preview. */
function renderRequest(r: ListedApproval, full: boolean): string {
  const left = Math.max(0, Math.round((r.expiresAt - Date.now()) / 1000));
  const action = full ? displayText(r.summary) : displayPreview(r.summary, LIST_ACTION_MAX, `supervisor approvals show ${r.id} prints all`);
  // A child agent's request says whose child it is: nothing a delegated agent asks waits unseen.
  const chain = r.chain.length > 1 ? `  delegated: ${r.chain.join(' → ')}\n` : '';
  return (
    `${r.id}  ${displayText(r.tool)} (${displayText(r.capability)})  session ${r.sessionId}  ${left} s left  digest ${shownDigest(r)}\n` +
    `  action:    ${action}\n  arguments: ${displayText(r.preview)}\n${chain}`
  );
}

/** The request as JSON, with its digest; strings stay exact (JSON escapes), nothing is cut. */
function requestJson(r: ListedApproval): Record<string, unknown> {
  return { ...r, digest: shownDigest(r) };
}

/** This machine's pending requests (its SQLite store), as `supervisor approvals` reads them. */
function localApprovals(stateDir: string | undefined): ApprovalsBackend {
  const { db, principal } = openForOperator(stateDir);
  const store = new PendingApprovalStore(db);
  return {
    list: async () => store.list({ principal }),
    answer: async (a) => answerApproval(store, { principal }, a),
    close: async () => void db.close(),
  };
}

export async function runApprovals(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json', 'always'], value: ['state-dir', 'expect', 'store'], multi: [] }, 'approvals');
  if (f.help) return void cliIo().stdout.write(APPROVALS_HELP), 0;
  const [verb, id, ...extra] = f.positionals;
  const url = storeUrlOf(f.value.get('store'));
  if (url !== undefined && f.value.get('state-dir') !== undefined) throw new UsageError('--store and --state-dir name two different stores; give one');
  const backend = url !== undefined ? await controlPlaneApprovals(url) : localApprovals(f.value.get('state-dir'));
  const fix = url !== undefined ? 'supervisor approvals --store … lists them' : 'supervisor approvals lists them';
  try {
    if (verb === undefined || verb === 'list') {
      if (id !== undefined) throw new UsageError('approvals list takes no id; see supervisor approvals --help');
      const rows = await backend.list();
      if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ pending: rows.map(requestJson) })}\n`);
      else if (rows.length === 0) cliIo().stdout.write('no approval requests are waiting\n');
      else for (const r of rows) cliIo().stdout.write(renderRequest(r, false));
      return 0;
    }
    if (verb === 'show') {
      if (!id || extra.length > 0) throw new UsageError(`approvals show needs one request id; ${fix}`);
      const r = (await backend.list()).find((x) => x.id === id);
      if (!r) {
        cliIo().stderr.write(`supervisor approvals: no waiting request ${displayText(id)}; ${fix}\n`);
        return 2;
      }
      cliIo().stdout.write(f.bool.has('json') ? `${displayJson(requestJson(r))}\n` : renderRequest(r, true));
      return 0;
    }
    if (verb !== 'approve' && verb !== 'deny') throw new UsageError(`approvals: unknown action ${displayText(JSON.stringify(verb))}; use list, show <id>, approve <id> or deny <id>`);
    if (!id || extra.length > 0) throw new UsageError(`approvals ${verb} needs one request id; ${fix}`);
    const expect = f.value.get('expect');
    if (expect !== undefined && verb !== 'approve') throw new UsageError('--expect goes with approve: it binds an approval to the request you were shown');
    const decidedBy = url !== undefined ? controlPlaneDecidedBy() : `supervisor approvals at a terminal (pid ${process.pid})`;
    const outcome = await backend.answer({ id, approve: verb === 'approve', always: f.bool.has('always'), ...(expect !== undefined ? { expect } : {}), decidedBy });
    if (outcome.kind === 'digest-mismatch') {
      cliIo().stderr.write(`supervisor approvals: request ${id} has digest ${outcome.digest}, not ${displayText(expect ?? '')}: it is not the request you were shown; nothing was answered (supervisor approvals show ${id})\n`);
      return 1;
    }
    if (outcome.kind !== 'answered') {
      cliIo().stderr.write(`supervisor approvals: no waiting request ${displayText(id)}${outcome.kind === 'lost' ? ` (${displayText(decidedByText(outcome.record))})` : ''}; ${fix}\n`);
      return 2;
    }
    const after = outcome.record;
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ id: after.id, status: after.status, remember: after.remember, digest: shownDigest(after) })}\n`);
    else {
      cliIo().stdout.write(
        `${after.id} ${after.status}${after.remember ? ' (remembered for this exact action)' : ''}: ${displayText(after.tool)} ${displayText(after.summary)}  digest ${shownDigest(after)}\n`,
      );
    }
    return 0;
  } finally {
    await backend.close();
  }
}
