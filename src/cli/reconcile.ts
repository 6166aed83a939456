// `supervisor reconcile`: kill what a dead predecessor left running, mark it interrupted.
import { resolve } from 'node:path';
import { join } from 'node:path';
import { ProcessSupervisor } from '../process/index.js';
import { openStore } from '../store/index.js';
import { RuntimeTaskWorker } from '../tasks/index.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';

export const RECONCILE_HELP = `Usage: supervisor reconcile [--json] [--state-dir DIR]

Every supervisor start does this too. Records of trees whose owning supervisor died are checked:
a leader whose (boot id, pid, start marker) still match is killed, and so is every process marked
with that tree's SUPERVISOR_SPAWN_ID; the record becomes "interrupted". Records of a supervisor
that is still alive are left alone. A reused pid is never signalled.
`;

export async function runReconcile(argv: string[]): Promise<number> {
  let json = false;
  let stateDir = defaultStateDir();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') {
      process.stdout.write(RECONCILE_HELP);
      return 0;
    } else if (a === '--state-dir') {
      const v = argv[++i];
      if (!v) throw new UsageError('--state-dir needs a directory');
      stateDir = resolve(v);
    } else throw new UsageError(`unknown option ${a} for reconcile; see supervisor reconcile --help`);
  }
  const supervisor = ProcessSupervisor.open({ stateDir, reconcile: false });
  const report = supervisor.reconcile();
  // Background tasks whose trees were just killed (or whose owner is gone) become interrupted.
  const db = openStore(join(stateDir, 'supervisor.db'));
  let tasksInterrupted: number;
  try {
    tasksInterrupted = RuntimeTaskWorker.recover(db);
  } finally {
    db.close();
  }
  await supervisor.close();
  if (json) process.stdout.write(JSON.stringify({ ...report, tasksInterrupted }) + '\n');
  else {
    process.stdout.write(
      `checked ${report.checked} running record(s); ${report.interrupted.length} interrupted; ${report.skippedLiveOwner} owned by a live supervisor; ${tasksInterrupted} background task(s) marked interrupted\n`,
    );
    for (const t of report.interrupted) {
      process.stdout.write(`  ${t.spawnId} pid ${t.pid} ${t.command}: killed ${t.killed}${t.leaderMatched ? '' : ' (leader gone or pid reused: not signalled)'}\n`);
    }
  }
  return 0;
}
