// `supervisor subagents`: the delegation tree (the seed's /subagents). Each node is an agent.spawn
// task of yours with its child session, status, resolved scope, budget reserved and used, and the
// children that child started. Owner-scoped like every operator view: another principal's session
// id reads exactly like a missing one.
import { cliIo } from './io.js';
import { SessionStore, TaskStore } from '../store/index.js';
import { delegationTree, delegationView, type DelegationView, type SubagentNode } from '../operator/delegation-tree.js';
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

function print(nodes: readonly DelegationView[], indent: string): void {
  for (const n of nodes) {
    cliIo().stdout.write(
      `${indent}${n.taskId}  ${n.agent}  ${n.status.padEnd(16)} depth ${n.depth}  session ${n.childSession ?? '-'}\n` +
        `${indent}    ${n.scope}\n` +
        `${indent}    ${n.budget}\n`,
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
      roots = delegationTree(db, { principal }, session, seen);
    } else {
      // Sessions an operator started: those no agent.spawn task of yours runs as a child.
      const sessions = new SessionStore(db).listSessions({ principal }, { limit: 200 }).filter((s) => store.parentOf({ principal }, s.id) === undefined);
      roots = sessions.flatMap((s) => delegationTree(db, { principal }, s.id, seen));
    }
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ subagents: roots })}\n`);
    else if (roots.length === 0) cliIo().stdout.write('no delegations\n');
    else print(roots.map(delegationView), '');
    return 0;
  } finally {
    db.close();
  }
}
