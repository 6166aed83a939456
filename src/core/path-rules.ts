// Lexical path rules for paths written in core files; symlinks are checked separately on disk.
import * as path from 'node:path';

/** True when `candidate` is `root` or below it. Both must be absolute and normalised. */
export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Why a relative path written in a core file is unacceptable, or null when it is fine: it must be
 * relative, use '/' separators and stay below its base once '.' and '..' are applied.
 */
export function relativePathProblem(written: string, base: string, example: string): string | null {
  if (written.length === 0) return `is empty; write a path relative to ${base}, e.g. '${example}'`;
  if (written.includes('\0')) return 'contains a NUL byte; write a plain path';
  if (written.includes('\\')) return `uses '\\'; write '/' separators so the core works on every OS, e.g. '${example}'`;
  if (path.posix.isAbsolute(written) || path.win32.isAbsolute(written)) {
    return `'${written}' is absolute; write a path relative to ${base}, e.g. '${example}'`;
  }
  const norm = path.posix.normalize(written);
  if (norm === '..' || norm.startsWith('../')) return `'${written}' leaves ${base}; use a path inside it, e.g. '${example}'`;
  return null;
}

/** Core-relative posix form of a path below `root`, for issue and file records. */
export function toCoreRelative(root: string, abs: string): string {
  const rel = path.relative(root, abs);
  return rel === '' ? '.' : rel.split(path.sep).join('/');
}
