// TEST-ONLY fault injection: SUPERVISOR_FAULT_AT=<point>:<n> makes this supervisor process kill
// itself with SIGKILL at the n-th occurrence of one point of the store's write path, so a test can
// crash a real run at a chosen place instead of sleeping and hoping
// (docs/decisions/0057-fault-injection-in-the-store.md).
//
//   spawn:N               after the N-th spawn record is written (the tree runs, recorded)
//   task-running:N        after the N-th background task's row names its running tree
//   task-log:N            after the N-th commit of background-task log chunks
//   approval-pending:N    after the N-th approval request is stored as pending
//   commit:KIND:N         after the transaction holding the N-th audit event of KIND commits
//   mid-commit:KIND:N     right after the N-th audit event of KIND is inserted, before its
//                         transaction commits (the row, its head and its event are all lost)
//
// KIND is an event kind (`effect.completed`) or `*` for every kind. The variable is read once, when
// this module loads, and removed from process.env, so nothing this process starts (tool hosts, MCP
// servers, terminal commands, `exec`'s CMD) inherits it. The only thing it can do is end this
// process, which whoever sets a process's environment can do anyway; it never signals another pid.
import type { Database } from './database.js';

export const FAULT_ENV = 'SUPERVISOR_FAULT_AT';

const SIMPLE = new Set(['spawn', 'task-running', 'task-log', 'approval-pending']);
const KINDED = new Set(['commit', 'mid-commit']);

interface Plan {
  point: string;
  kind: string | null;
  n: number;
}

/** `<point>:<n>` or `<commit|mid-commit>:<kind|*>:<n>`; null (with the reason) when it is neither. */
export function parseFaultPlan(text: string): Plan | string {
  const parts = text.split(':');
  const n = Number(parts.at(-1));
  if (!Number.isSafeInteger(n) || n < 1) return `the count after the last ':' must be a whole number >= 1`;
  if (parts.length === 2 && SIMPLE.has(parts[0]!)) return { point: parts[0]!, kind: null, n };
  if (parts.length === 3 && KINDED.has(parts[0]!) && /^(?:\*|[a-z][a-z0-9_.]*)$/.test(parts[1]!)) return { point: parts[0]!, kind: parts[1]!, n };
  return `expected one of ${[...SIMPLE].map((p) => `${p}:N`).join(', ')}, commit:KIND:N, mid-commit:KIND:N`;
}

function load(): Plan | null {
  const text = process.env[FAULT_ENV];
  if (text === undefined) return null;
  delete process.env[FAULT_ENV];
  const plan = parseFaultPlan(text);
  if (typeof plan === 'string') {
    process.stderr.write(`supervisor: ${FAULT_ENV}=${JSON.stringify(text)} ignored: ${plan}\n`);
    return null;
  }
  return plan;
}

const plan = load();
let seen = 0;
/** The planned point happened inside a transaction: die as soon as it has committed. */
let armed = false;

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL to oneself is delivered before kill() returns; this is never reached.
  throw new Error('SIGKILL did not end the process');
}

function hit(point: string, kind: string | null): boolean {
  if (plan === null || plan.point !== point) return false;
  if (plan.kind !== null && plan.kind !== '*' && plan.kind !== kind) return false;
  return ++seen === plan.n;
}

/** A non-event point (`spawn`, `task-running`, …) was written on `db`: dies there once committed. */
export function faultPoint(db: Database, point: 'spawn' | 'task-running' | 'task-log' | 'approval-pending'): void {
  if (!hit(point, null)) return;
  armed = true;
  faultAfterCommit(db);
}

/** An audit event of `kind` was just inserted (its transaction still open). */
export function faultOnEvent(db: Database, kind: string): void {
  if (plan === null) return;
  if (plan.point === 'mid-commit') {
    if (hit('mid-commit', kind)) die();
    return;
  }
  if (hit('commit', kind)) {
    armed = true;
    faultAfterCommit(db);
  }
}

/** Called where the store's transactions end: an armed point fires once nothing is left uncommitted. */
export function faultAfterCommit(db: Database): void {
  if (armed && !db.inTransaction) die();
}
