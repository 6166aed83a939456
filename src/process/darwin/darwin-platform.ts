// macOS: process-group TERM→KILL, escapee sweep by the SUPERVISOR_SPAWN_ID marker, start marker
// from proc_pidinfo(PROC_PIDTBSDINFO). Not implemented yet: every entry point says so.
import type { PlatformCapabilities, PreparedSpawn, ProcessPlatform, TreeIdentity, TreeMember } from '../platform.js';
import { PlatformNotImplementedError } from '../platform.js';
import type { StartMarker } from '../types.js';

export class DarwinPlatform implements ProcessPlatform {
  readonly name = 'darwin' as const;
  private fail(what: string): never {
    throw new PlatformNotImplementedError('macOS', what);
  }
  init(): PlatformCapabilities {
    return this.fail('process supervision (start markers via proc_pidinfo, marker sweep)');
  }
  startMarker(_pid: number): StartMarker | null {
    return this.fail('the proc_pidinfo start marker');
  }
  isSameProcess(_pid: number, _marker: StartMarker): boolean {
    return this.fail('start-marker verification');
  }
  prepareSpawn(_spawnId: string, _command: string, _args: readonly string[]): PreparedSpawn {
    return this.fail('supervised spawn');
  }
  members(_tree: TreeIdentity, _leaderHeld: boolean, _seen: Map<number, TreeMember>): TreeMember[] {
    return this.fail('tree enumeration (ps fallback)');
  }
  signalTree(_tree: TreeIdentity, _signal: 'SIGTERM' | 'SIGKILL', _leaderHeld: boolean, _seen: Map<number, TreeMember>): TreeMember[] {
    return this.fail('process-group TERM→KILL');
  }
  reapAdopted(_seen: Map<number, TreeMember>, _exclude: ReadonlySet<number>): number {
    return 0;
  }
  releaseTree(_tree: TreeIdentity): void {}
}
