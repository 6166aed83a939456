// One command as a supervised process tree, in a process supervisor of its own: the library's
// tree-safe `timeout` (what `supervisor exec` does, without its printing and signal handling).
import { ProcessSupervisor, type SpawnTreeOptions, type TreeOutcome } from '../process/index.js';
import { defaultStateDir } from './state-dir.js';

export interface ExecOptions extends SpawnTreeOptions {
  /** Spawn records and artifacts (default: defaultStateDir()). */
  stateDir?: string;
}

/**
 * Runs `o.command` as a whole supervised tree and resolves with its outcome once every process of
 * the tree is gone (exited, or TERM/grace/KILL on timeout or `o.signal`); the supervisor it opened
 * (reconciling trees a dead supervisor left) is closed before this resolves. A command that cannot
 * be started rejects with SpawnError.
 */
export async function exec(o: ExecOptions): Promise<TreeOutcome> {
  const { stateDir, ...spawn } = o;
  // One tree, a few rows: no checkpoint thread (decision 65), as for `supervisor exec`.
  const supervisor = ProcessSupervisor.open({ stateDir: stateDir ?? defaultStateDir(), checkpointer: false });
  try {
    return await supervisor.spawnTree(spawn).done;
  } finally {
    await supervisor.close();
  }
}
