// The platform of this host, the only one a supervisor without `options.platform` uses. Only its
// own module is loaded: every start of `exec` would otherwise read, parse and link the other
// platforms' code and native bindings too (issue 17; decision 65). platformFor() still builds any.
import type { ProcessPlatform } from './platform.js';
import { PlatformNotImplementedError } from './platform.js';

async function load(): Promise<(() => ProcessPlatform) | null> {
  switch (process.platform) {
    case 'linux': {
      const { LinuxPlatform } = await import('./linux/linux-platform.js');
      return () => new LinuxPlatform();
    }
    case 'darwin': {
      const { DarwinPlatform } = await import('./darwin/darwin-platform.js');
      return () => new DarwinPlatform();
    }
    case 'win32': {
      const { Win32Platform } = await import('./win32/win32-platform.js');
      return () => new Win32Platform();
    }
    default:
      return null;
  }
}

const make = await load();

export function hostPlatform(): ProcessPlatform {
  if (!make) throw new PlatformNotImplementedError(process.platform, 'process supervision');
  return make();
}
