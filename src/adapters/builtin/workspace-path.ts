// Paths a model names are resolved against the workspace and must stay inside it, symlinks included.
import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';

export class WorkspacePathError extends Error {
  readonly code = 'PATH_OUTSIDE_WORKSPACE';
  constructor(message: string) {
    super(message);
    this.name = 'WorkspacePathError';
  }
}

/**
 * Resolves `path` (relative to the workspace, or absolute) and returns its real path if it lies
 * inside the workspace's real path. A path that does not exist is refused too: a cwd must exist.
 */
export function resolveInsideWorkspace(workspace: string, path: string | undefined, field = 'cwd'): string {
  const root = realpathSync(workspace);
  const wanted = path === undefined || path === '' ? root : isAbsolute(path) ? path : resolve(root, path);
  let real: string;
  try {
    real = realpathSync(wanted);
  } catch {
    throw new WorkspacePathError(`${field}: ${JSON.stringify(path)} does not exist inside the workspace ${root}`);
  }
  const rel = relative(root, real);
  if (rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))) return real;
  throw new WorkspacePathError(`${field}: ${JSON.stringify(path)} resolves to ${real}, outside the workspace ${root}; use a path inside it`);
}
