// `supervisor ps`: the live process trees of your runs, the view the web page shows (one copy:
// src/operator/live-trees.ts). Each tree is a spawn record of yours joined with what runs now.
import { cliIo } from './io.js';
import { displayJson } from '../redaction/index.js';
import { parseFlags } from './flags.js';
import { openForOperator } from './operator.js';
import { UsageError } from './usage.js';
import { liveTrees, type TreeView } from '../operator/live-trees.js';

export const PS_HELP = `Usage: supervisor ps [--json] [--state-dir DIR]

Lists the process trees your runs hold now: each tree's spawn id, session, background task (if it
is one), and its live processes with pid, program name (never its arguments), age, CPU time,
resident memory, and whether it escaped its session (setsid); n/a where this OS does not say
(Linux: /proc; macOS: ps; Windows: the process's own times and working set, no state).
supervisor cancel <spawn id> stops a whole tree, a task's or a running call's. A tree is listed
from its spawn record until its owner records it finished.
`;

// n/a: the platform's reader does not say (Windows has no state; macOS's figures come from ps).
const secs = (ms: number | null): string => (ms === null ? 'n/a' : `${(ms / 1000).toFixed(2)}s`);

function print(trees: readonly TreeView[]): void {
  const out = cliIo().stdout;
  if (trees.length === 0) return void out.write('no process tree is running\n');
  for (const t of trees) {
    out.write(`${t.spawnId}  ${t.command}  ${t.status}  session ${t.sessionId}${t.taskId ? `  task ${t.taskId}` : ''}  owner pid ${t.ownerPid}${t.cancelRequestedBy ? `  stopping (cancel asked by ${t.cancelRequestedBy})` : ''}\n`);
    for (const p of t.processes) {
      const age = p.startedAt === null ? 'n/a' : secs(Date.now() - p.startedAt);
      const rss = p.rssKib === null ? 'n/a' : `${(p.rssKib / 1024).toFixed(1)}MiB`;
      out.write(`  ${String(p.pid).padStart(7)}  ${(p.command || 'n/a').padEnd(16)} ${(p.state ?? 'n/a').padEnd(2)} age ${age.padStart(9)}  cpu ${secs(p.cpuMs).padStart(8)}  rss ${rss.padStart(9)}${p.leader ? '  leader' : ''}${p.escapee ? '  ESCAPEE' : ''}\n`);
    }
  }
}

export async function runPs(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['state-dir'], multi: [] }, 'ps');
  if (f.help) return void cliIo().stdout.write(PS_HELP), 0;
  if (f.positionals.length > 0) throw new UsageError('ps takes no arguments; see supervisor ps --help');
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  try {
    const trees = await liveTrees(db, { principal });
    if (f.bool.has('json')) cliIo().stdout.write(`${displayJson({ trees })}\n`);
    else print(trees);
    return 0;
  } finally {
    db.close();
  }
}
