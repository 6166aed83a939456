// `supervisor subagents`: the delegation tree (the seed's /subagents). Each node is an agent.spawn
// task of yours with its child session, status, resolved scope, budget reserved and used, and the
// children that child started. Owner-scoped like every operator view: another principal's session
// id reads exactly like a missing one.
import { cliIo } from './io.js';
import { SessionStore, TaskStore, type TaskRecord } from '../store/index.js';
import { displayJson, displayText } from '../redaction/index.js';
import { parseFlags } from './flags.js';
import { openForOperator } from './operator.js';
import { UsageError } from './usage.js';

export const SUBAGENTS_HELP = `Usage: supervisor subagents [--session ID] [--json] [--state-dir DIR]

Shows the delegations (delegate_task) of your sessions as a tree: each child agent's task id,
status (budget_exhausted when its budget ran out), depth, the scope the supervisor resolved for it
(grants, toolsets, tools), its budget (reserved from its parent, and used) and its own session
(supervisor audit verify --session <child> checks its chain). --session ID shows the tree below one
session; without it, the trees of every session you started.
`;

interface SubagentNode {
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

const MAX_NODES = 1000;

function treeOf(store: TaskStore, principal: string, sessionId: string, seen: Set<string>): SubagentNode[] {
  if (seen.has(sessionId) || seen.size > MAX_NODES) return [];
  seen.add(sessionId);
  return store.listKind({ principal }, sessionId, 'agent.spawn').map((t) => nodeOf(store, principal, t, seen));
}

function nodeOf(store: TaskStore, principal: string, t: TaskRecord, seen: Set<string>): SubagentNode {
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
    children: t.childSessionId ? treeOf(store, principal, t.childSessionId, seen) : [],
  };
}

function print(nodes: readonly SubagentNode[], indent: string): void {
  for (const n of nodes) {
    const scope = n.scope as { grants?: string[]; tools?: string[] | null; toolsets?: string[] } | null;
    const budget = n.budget as { reserved?: Record<string, unknown>; used?: Record<string, unknown> } | null;
    const used = budget?.used ? ` used ${budget.used.iterations ?? 0} iterations, ${budget.used.toolCalls ?? 0} tool calls` : '';
    const reserved = budget?.reserved ? ` of ${budget.reserved.iterations ?? '∞'} / ${budget.reserved.toolCalls ?? '∞'}` : '';
    cliIo().stdout.write(
      `${indent}${n.task_id}  ${displayText(String(n.agent))}  ${n.status.padEnd(16)} depth ${String(n.depth)}  session ${n.child_session ?? '-'}\n` +
        `${indent}    tools: ${displayText((scope?.tools ?? ['(all granted)']).join(', '))}  grants: ${displayText((scope?.grants ?? []).join(', ') || 'none')}\n` +
        `${indent}    budget:${used}${reserved}${n.reason && n.status !== 'completed' ? `  (${displayText(n.reason)})` : ''}\n`,
    );
    print(n.children, `${indent}  `);
  }
}

export async function runSubagents(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['session', 'state-dir'], multi: [] }, 'subagents');
  if (f.help) return void cliIo().stdout.write(SUBAGENTS_HELP), 0;
  if (f.positionals.length > 0) throw new UsageError('subagents takes no arguments; see supervisor subagents --help');
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  try {
    const store = new TaskStore(db);
    const session = f.value.get('session');
    const seen = new Set<string>();
    let roots: SubagentNode[];
    if (session !== undefined) {
      if (!new SessionStore(db).getSession({ principal }, session)) {
        cliIo().stderr.write(`supervisor subagents: no session ${displayText(session)} (supervisor sessions lists yours)\n`);
        return 2;
      }
      roots = treeOf(store, principal, session, seen);
    } else {
      // Sessions an operator started: those no agent.spawn task of yours runs as a child.
      const sessions = new SessionStore(db).listSessions({ principal }, { limit: 200 }).filter((s) => store.parentOf({ principal }, s.id) === undefined);
      roots = sessions.flatMap((s) => treeOf(store, principal, s.id, seen));
    }
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ subagents: roots })}\n`);
    else if (roots.length === 0) cliIo().stdout.write('no delegations\n');
    else print(roots, '');
    return 0;
  } finally {
    db.close();
  }
}
