// Windows Job Object bindings (CreateJobObjectW, CreateProcessW suspended, AssignProcessToJobObject,
// ResumeThread, GetProcessTimes, QueryInformationJobObject, TerminateJobObject).
// Not yet implemented: the Windows lifecycle is finished by a later issue.
import { NativeHelperError } from './libc.js';

export function kernel32NotImplemented(what: string): never {
  throw new NativeHelperError(
    `native-helpers/kernel32: ${what} is not implemented yet; the Windows lifecycle (Job Objects, suspended start) is pending`,
  );
}
