// Resolves a bare command name on the child's PATH before spawning, so "not found" is a clear
// spawn failure naming the command rather than an exit status from a wrapper or launcher.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, extname, isAbsolute, join, resolve } from 'node:path';

const WINDOWS = process.platform === 'win32';

export function resolveCommand(command: string, pathVar: string | undefined, cwd: string, pathExt?: string): string | null {
  const hasDir = command.includes('/') || (WINDOWS && command.includes('\\'));
  if (hasDir) {
    const p = isAbsolute(command) ? command : resolve(cwd, command);
    return firstExecutable(p, pathExt);
  }
  for (const dir of (pathVar ?? '').split(delimiter)) {
    if (!dir) continue;
    const found = firstExecutable(join(isAbsolute(dir) ? dir : resolve(cwd, dir), command), pathExt);
    if (found) return found;
  }
  return null;
}

/** On Windows a name without an extension is tried with each PATHEXT extension, as cmd does. */
function firstExecutable(p: string, pathExt: string | undefined): string | null {
  if (!WINDOWS) return isExecutableFile(p) ? p : null;
  if (extname(p) !== '' && isExecutableFile(p)) return p;
  for (const ext of (pathExt ?? process.env.PATHEXT ?? '.COM;.EXE;.BAT;.CMD').split(';')) {
    if (ext && isExecutableFile(p + ext.toLowerCase())) return p + ext.toLowerCase();
  }
  return null;
}

function isExecutableFile(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    // Windows has no execute bit: a file that exists with a runnable extension is runnable.
    if (!WINDOWS) accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
