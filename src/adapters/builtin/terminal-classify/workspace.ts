// Whether a path, or a project runner's argument, stays inside the workspace. Lexical only, so it
// can run before approval and before any spawn.
import { posix } from 'node:path';
import type { Word } from './tokenizer.js';
import { show } from './verdict.js';

/**
 * Lexical containment only (no realpath): a relative path must not climb out with `..` (the cwd
 * is already inside the workspace), an absolute one must lie under the workspace root. `~` is
 * someone's home, never the workspace.
 */
export function insideWorkspace(path: string, workspace: string | undefined): boolean {
  if (path === '' || path.startsWith('~')) return false;
  if (posix.isAbsolute(path)) {
    if (workspace === undefined || !posix.isAbsolute(workspace)) return false;
    const rel = posix.relative(posix.normalize(workspace), posix.normalize(path));
    return rel !== '' && rel !== '..' && !rel.startsWith('../') && !posix.isAbsolute(rel);
  }
  const norm = posix.normalize(path);
  return norm !== '..' && !norm.startsWith('../');
}

/** Project code means code from the workspace: refuse remote specifiers and outside paths. */
export function projectArgProblem(args: Word[], workspace: string | undefined): string | null {
  for (const a of args) {
    const t = a.text;
    if (t.includes('://') || /^(?:npm|jsr|github|gitlab|bitbucket|git\+[a-z]+):/i.test(t)) {
      return `argument ${show(t)} fetches code from outside the workspace`;
    }
    const value = t.startsWith('-') && t.includes('=') ? t.slice(t.indexOf('=') + 1) : t;
    const pathLike = value.startsWith('/') || value.startsWith('~') || value === '..' || value.startsWith('../') || value.includes('/..');
    if (pathLike && !a.expands && !insideWorkspace(value, workspace)) {
      return `argument ${show(t)} points outside the workspace`;
    }
  }
  return null;
}
