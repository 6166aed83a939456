// `supervisor reconcile`: kill what a dead predecessor left running, mark it interrupted.
import { cliIo } from './io.js';
import { resolve } from 'node:path';
import { ProcessSupervisor } from '../process/index.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';

export const RECONCILE_HELP = `Usage: supervisor reconcile [--json] [--state-dir DIR]

Every supervisor start does this too. Records of trees whose owning supervisor died are checked:
a leader whose (boot id, pid, start marker) still match is killed, and so is every process marked
with that tree's SUPERVISOR_SPAWN_ID; the record becomes "interrupted". Then every session a dead
supervisor left running becomes "interrupted" with the reason, with its running turns, background
tasks and pending approvals, and each session's audit chain gets a session.interrupted event.
Records of a supervisor that is still alive are left alone. A reused pid is never signalled.
An interrupted session can be continued: supervisor run <core> --resume <id>.
`;

export async function runReconcile(argv: string[]): Promise<number> {
  let json = false;
  let stateDir = defaultStateDir();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') {
      cliIo().stdout.write(RECONCILE_HELP);
      return 0;
    } else if (a === '--state-dir') {
      const v = argv[++i];
      if (!v) throw new UsageError('--state-dir needs a directory');
      stateDir = resolve(v);
    } else throw new UsageError(`unknown option ${a} for reconcile; see supervisor reconcile --help`);
  }
  const supervisor = ProcessSupervisor.open({ stateDir, reconcile: false });
  const report = supervisor.reconcile();
  await supervisor.close();
  const tasksInterrupted = report.sessions.reduce((n, s) => n + s.tasks.length, report.strayTasks.length);
  if (json) cliIo().stdout.write(JSON.stringify({ ...report, tasksInterrupted }) + '\n');
  else {
    cliIo().stdout.write(
      `checked ${report.checked} running record(s); ${report.interrupted.length} interrupted; ${report.skippedLiveOwner} owned by a live supervisor; ` +
        `${report.sessions.length} session(s) and ${tasksInterrupted} background task(s) marked interrupted\n`,
    );
    for (const t of report.interrupted) {
      cliIo().stdout.write(`  ${t.spawnId} pid ${t.pid} ${t.command}: killed ${t.killed}${t.leaderMatched ? '' : ' (leader gone or pid reused: not signalled)'}\n`);
    }
    for (const s of report.sessions) {
      const parts = [`${s.turns.length} turn(s)`, `${s.tasks.length} task(s)`, `${s.pendingApprovals.length} pending approval(s)`];
      cliIo().stdout.write(`  session ${s.sessionId}: interrupted with ${parts.join(', ')}: ${s.reason}\n`);
    }
  }
  return 0;
}
