// For `doctor`: the machine the lifecycle layer runs on, and whether its native bindings load.
import * as os from 'node:os';
import { libcAvailable } from '../../native-helpers/libc.js';
import type { MechanismFinding } from './probe-children.js';

export function probePlatform(): MechanismFinding {
  const detail = `${process.platform} ${process.arch}, kernel ${os.release()}, node ${process.version}`;
  return { ok: true, detail, version: process.version };
}

export async function probeFfi(): Promise<MechanismFinding> {
  if (process.platform === 'win32') {
    const { kernel32Available } = await import('../../native-helpers/kernel32.js');
    return kernel32Available()
      ? { ok: true, detail: 'ffi-rs loads and binds kernel32 on the main thread' }
      : { ok: false, detail: 'ffi-rs or kernel32 could not be loaded (is the ffi-rs win32 binary installed?)' };
  }
  return libcAvailable()
    ? { ok: true, detail: 'ffi-rs loads and binds libc on the main thread' }
    : { ok: false, detail: 'ffi-rs or libc could not be loaded (is the optional ffi-rs platform binary installed?)' };
}
