// The delegation tree of a session (`supervisor subagents`, the web page's session view): each
// node is an agent.spawn task of the principal's with its child session, status, resolved scope,
// budget, and the children that child started. Owner-scoped through TaskStore (another principal's
// session reads as one without delegations). One copy for the terminal and the page.
import { displayText } from '../redaction/index.js';
import { TaskStore, type Database, type PrincipalScope, type TaskRecord } from '../store/index.js';

/** A node as `supervisor subagents --json` prints it (field names are that command's contract). */
export interface SubagentNode {
  task_id: string;
  agent: unknown;
  status: string;
  reason: string | null;
  depth: unknown;
  parent_session: string;
  child_session: string | null;
  scope: unknown;
  requested: unknown;
  budget: unknown;
  created_at: number;
  ended_at: number | null;
  children: SubagentNode[];
}

/** A bound on the nodes read for one tree (the depth limit is 8; fan-out is the budget's). */
const MAX_NODES = 1000;

/** The delegations below `sessionId`, depth first; `seen` keeps a session from being walked twice. */
export function delegationTree(db: Database, scope: PrincipalScope, sessionId: string, seen: Set<string> = new Set()): SubagentNode[] {
  return treeOf(new TaskStore(db), scope, sessionId, seen);
}

function treeOf(store: TaskStore, scope: PrincipalScope, sessionId: string, seen: Set<string>): SubagentNode[] {
  if (seen.has(sessionId) || seen.size > MAX_NODES) return [];
  seen.add(sessionId);
  return store.listKind(scope, sessionId, 'agent.spawn').map((t) => nodeOf(store, scope, t, seen));
}

function nodeOf(store: TaskStore, scope: PrincipalScope, t: TaskRecord, seen: Set<string>): SubagentNode {
  const m = t.metadata ?? {};
  return {
    task_id: t.id,
    agent: m.agent ?? null,
    status: t.status === 'running' ? 'running' : typeof m.status === 'string' ? m.status : t.status,
    reason: t.reason,
    depth: m.depth ?? null,
    parent_session: t.sessionId,
    child_session: t.childSessionId,
    scope: m.resolved ?? null,
    requested: m.requested ?? null,
    budget: m.budget ?? null,
    created_at: t.createdAt,
    ended_at: t.endedAt,
    children: t.childSessionId ? treeOf(store, scope, t.childSessionId, seen) : [],
  };
}

/** A node's lines as an operator reads them, every text sanitised. */
export interface DelegationView {
  taskId: string;
  agent: string;
  status: string;
  depth: string;
  childSession: string | null;
  /** `tools: …  grants: …` */
  scope: string;
  /** `used N iterations, M tool calls of R / T` and the reason when it did not complete. */
  budget: string;
  children: DelegationView[];
}

export function delegationView(n: SubagentNode): DelegationView {
  const scope = n.scope as { grants?: string[]; tools?: string[] | null; toolsets?: string[] } | null;
  const budget = n.budget as { reserved?: Record<string, unknown>; used?: Record<string, unknown> } | null;
  const used = budget?.used ? ` used ${String(budget.used.iterations ?? 0)} iterations, ${String(budget.used.toolCalls ?? 0)} tool calls` : '';
  const reserved = budget?.reserved ? ` of ${String(budget.reserved.iterations ?? '∞')} / ${String(budget.reserved.toolCalls ?? '∞')}` : '';
  return {
    taskId: n.task_id,
    agent: displayText(String(n.agent)),
    status: displayText(n.status),
    depth: displayText(String(n.depth)),
    childSession: n.child_session,
    scope: displayText(`tools: ${(scope?.tools ?? ['(all granted)']).join(', ')}  grants: ${(scope?.grants ?? []).join(', ') || 'none'}`),
    budget: displayText(`budget:${used}${reserved}${n.reason && n.status !== 'completed' ? `  (${n.reason})` : ''}`),
    children: n.children.map(delegationView),
  };
}
