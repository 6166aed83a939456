// Creating the state dir and its parents one component at a time. Node's recursive mkdir retries
// forever where mkdir answers ENOENT under a parent that exists (/proc, /sys): a state dir named
// there hung every command at 100% CPU. Here each missing component is made once, and a refusal
// is an error naming the path.
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** Makes `dir` and any missing parents with `mode`; throws the system error (with its path) when one cannot be made. */
export function makeDirs(dir: string, mode: number): void {
  const missing: string[] = [];
  for (let p = dir; ; p = dirname(p)) {
    if (exists(p)) break;
    missing.push(p);
    if (dirname(p) === p) break;
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p, { mode });
    } catch (err) {
      // Made by someone else in between: fine if it is a directory now.
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(p).isDirectory()) continue;
      throw err;
    }
  }
  if (!statSync(dir).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR', path: dir, syscall: 'mkdir' });
  }
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    throw err; // ENOTDIR, EACCES …: the caller reports it with the path
  }
}
