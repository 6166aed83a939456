// Shared benchmark context: options, a scratch directory, the markers every started tree carried
// (for the final sweep), supervisors opened for the run, and progress output on stderr.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ProcessSupervisor } from '../src/process/supervisor.js';
import { LinuxPlatform } from '../src/process/linux/linux-platform.js';

export interface BenchOptions {
  quick: boolean;
  json: boolean;
}

export type Config = 'cgroup' | 'no-cgroup';

export class BenchContext {
  readonly root: string;
  /** Every SUPERVISOR_SPAWN_ID value a process started by this run carried. */
  readonly markers = new Set<string>();
  private readonly supervisors: ProcessSupervisor[] = [];

  constructor(readonly options: BenchOptions) {
    this.root = mkdtempSync(join(tmpdir(), 'supervisor-bench-'));
  }

  /** A supervisor with its own state directory; `no-cgroup` uses LinuxPlatform({ cgroups: false }). */
  openSupervisor(config: Config, name: string): ProcessSupervisor {
    const stateDir = join(this.root, `${name}-${config}`);
    const sup = ProcessSupervisor.open({
      stateDir,
      ...(config === 'no-cgroup' ? { platform: new LinuxPlatform({ cgroups: false }) } : {}),
    });
    this.supervisors.push(sup);
    return sup;
  }

  async closeSupervisor(sup: ProcessSupervisor): Promise<void> {
    const i = this.supervisors.indexOf(sup);
    if (i >= 0) this.supervisors.splice(i, 1);
    await sup.close();
  }

  async dispose(): Promise<void> {
    for (const s of this.supervisors.splice(0)) {
      try {
        await s.close();
      } catch {
        // best effort: the final sweep reports anything left
      }
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}

export function progress(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

let gcFn: (() => void) | null | undefined;

/** A full GC if one can be had without --expose-gc (used only between trials, never inside one). */
export function collectGarbage(): void {
  if (gcFn === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
    } catch {
      gcFn = null;
    }
  }
  gcFn?.();
}
