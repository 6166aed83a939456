// Every child this Node process spawns directly, whatever code spawned it. An unmarked process
// re-parented to the supervisor may be claimed by a tree as an escapee only if it is not on this
// ledger: a direct child of some other code is never an orphan of ours.
import { ChildProcess } from 'node:child_process';

const direct = new Set<number>();
let installed: boolean | undefined;

/** Idempotent. Returns false if the hook cannot be installed; callers must then claim no orphans. */
export function installChildLedger(): boolean {
  if (installed !== undefined) return installed;
  const proto = ChildProcess.prototype as unknown as { spawn?: (this: ChildProcess, ...a: unknown[]) => unknown };
  const original = proto.spawn;
  if (typeof original !== 'function') return (installed = false);
  proto.spawn = function spawnWithLedger(this: ChildProcess, ...args: unknown[]) {
    const r = original.apply(this, args);
    const pid = this.pid;
    if (pid !== undefined) {
      direct.add(pid);
      // Exit means Node reaped it: the pid may be reused by anyone from then on.
      this.once('exit', () => direct.delete(pid));
    }
    return r;
  };
  return (installed = true);
}

/** A direct child started without child_process (posix_spawn): on the ledger until the returned call (its reaping). */
export function noteDirectChild(pid: number): () => void {
  direct.add(pid);
  return () => direct.delete(pid);
}

/** True when `pid` is a live direct child spawned by this process through child_process. */
export function isDirectChild(pid: number): boolean {
  return direct.has(pid);
}

export function childLedgerInstalled(): boolean {
  return installed === true;
}
