// The live process trees an operator is shown (`supervisor ps`, the web page): the principal's
// unfinished spawn records (src/store/spawn-records.ts, owner-scoped through the session or task
// they belong to) joined with what runs now (src/process/tree-observer.ts). Every text goes through
// the one sanitiser: a process names itself (its kernel name is set by the program), so it is
// untrusted. Arguments are never shown: they may carry what a secret was bound to.
import { displayText } from '../redaction/index.js';
import { observeTrees, type ObservedProcess } from '../process/index.js';
import { SpawnRecordStore, type Database, type PrincipalScope } from '../store/index.js';

export interface ProcessView {
  pid: number;
  ppid: number | null;
  command: string;
  state: string | null;
  startedAt: number | null;
  cpuMs: number | null;
  rssKib: number | null;
  escapee: boolean;
  leader: boolean;
}

export interface TreeView {
  spawnId: string;
  sessionId: string;
  /** The background task whose tree it is: cancelling the task stops the tree. Null: a call's own tree. */
  taskId: string | null;
  /** The recorded program (its name only, as the spawn record keeps it). */
  command: string;
  status: string;
  startedAt: number;
  /** The supervisor process that owns the tree (a `supervisor run`, `exec` or `serve`). */
  ownerPid: number;
  /** Who asked the owner to stop it, while it has not yet (decision 110); null: nobody. */
  cancelRequestedBy: string | null;
  processes: ProcessView[];
}

function processView(p: ObservedProcess): ProcessView {
  return { ...p, command: displayText(p.name), state: p.state === null ? null : displayText(p.state) };
}

/** The principal's trees, oldest first, each with its live members now. */
export async function liveTrees(db: Database, scope: PrincipalScope): Promise<TreeView[]> {
  const owned = new SpawnRecordStore(db).runningOwnedBy(scope);
  const seen = await observeTrees(owned.map((o) => o.record));
  return owned.map(({ record: r, sessionId, taskId, cancelRequestedBy }) => ({
    spawnId: r.spawnId,
    sessionId,
    taskId,
    command: displayText(r.command.slice(Math.max(r.command.lastIndexOf('/'), r.command.lastIndexOf('\\')) + 1)),
    status: r.status,
    startedAt: r.startedAt,
    ownerPid: r.ownerPid,
    cancelRequestedBy: cancelRequestedBy === null ? null : displayText(cancelRequestedBy),
    processes: (seen.get(r.spawnId) ?? []).map(processView),
  }));
}
