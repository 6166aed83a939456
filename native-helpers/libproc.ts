// macOS libproc bindings (proc_pidinfo PROC_PIDTBSDINFO for the process start time).
// Not yet implemented: the macOS lifecycle is finished by a later issue.
import { NativeHelperError } from './libc.js';

export function libprocNotImplemented(what: string): never {
  throw new NativeHelperError(
    `native-helpers/libproc: ${what} is not implemented yet; the macOS start marker (proc_pidinfo) is pending`,
  );
}
