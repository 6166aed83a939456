import type { ProcessPlatform } from './platform.js';
import { PlatformNotImplementedError } from './platform.js';
import { LinuxPlatform } from './linux/linux-platform.js';
import { DarwinPlatform } from './darwin/darwin-platform.js';
import { Win32Platform } from './win32/win32-platform.js';

export function platformFor(p: NodeJS.Platform): ProcessPlatform {
  switch (p) {
    case 'linux':
      return new LinuxPlatform();
    case 'darwin':
      return new DarwinPlatform();
    case 'win32':
      return new Win32Platform();
    default:
      throw new PlatformNotImplementedError(p, 'process supervision');
  }
}
