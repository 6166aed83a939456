// Windows: one Job Object per tree (KILL_ON_JOB_CLOSE, no breakaway) entered before the child runs
// (CreateProcessW suspended → AssignProcessToJobObject → ResumeThread), GetProcessTimes as the start
// marker, TerminateJobObject. Not implemented yet: every entry point says so.
import type { PlatformCapabilities, PreparedSpawn, ProcessPlatform, TreeIdentity, TreeMember } from '../platform.js';
import { PlatformNotImplementedError } from '../platform.js';
import type { StartMarker } from '../types.js';

export class Win32Platform implements ProcessPlatform {
  readonly name = 'win32' as const;
  private fail(what: string): never {
    throw new PlatformNotImplementedError('Windows', what);
  }
  init(): PlatformCapabilities {
    return this.fail('process supervision (Job Objects with suspended start)');
  }
  startMarker(_pid: number): StartMarker | null {
    return this.fail('the GetProcessTimes start marker');
  }
  isSameProcess(_pid: number, _marker: StartMarker): boolean {
    return this.fail('start-marker verification');
  }
  prepareSpawn(_spawnId: string, _command: string, _args: readonly string[]): PreparedSpawn {
    return this.fail('suspended spawn into a Job Object');
  }
  members(_tree: TreeIdentity, _leaderHeld: boolean, _seen: Map<number, TreeMember>): TreeMember[] {
    return this.fail('tree enumeration through QueryInformationJobObject');
  }
  signalTree(_tree: TreeIdentity, _signal: 'SIGTERM' | 'SIGKILL', _leaderHeld: boolean, _seen: Map<number, TreeMember>): TreeMember[] {
    return this.fail('TerminateJobObject');
  }
  reapAdopted(_seen: Map<number, TreeMember>, _exclude: ReadonlySet<number>): number {
    return 0;
  }
  releaseTree(_tree: TreeIdentity): void {}
}
