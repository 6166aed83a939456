// Resolves a bare command name on the child's PATH before spawning, so "not found" is a clear
// spawn failure naming the command rather than an exit status from a wrapper.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export function resolveCommand(command: string, pathVar: string | undefined, cwd: string): string | null {
  if (command.includes('/')) {
    const p = isAbsolute(command) ? command : resolve(cwd, command);
    return isExecutableFile(p) ? p : null;
  }
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(isAbsolute(dir) ? dir : resolve(cwd, dir), command);
    if (isExecutableFile(p)) return p;
  }
  return null;
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
