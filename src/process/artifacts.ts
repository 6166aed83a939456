// Per-spawn artifact directories: the root is derived by the supervisor, never taken from untrusted input.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ArtifactDescriptor } from './types.js';
import { withPrivateUmask } from '../store/private-files.js';

const SPAWN_ID = /^sp_[0-9a-f]{24}$/;
const STREAM_FILES = { stdout: 'stdout.log', stderr: 'stderr.log' } as const;
/** Bases already created and checked in this process: the spawn path pays for them once. */
const readyBases = new Set<string>();

/** True when the process umask could narrow `mode`, so an explicit chmod is needed. */
export function umaskNarrows(mode: number): boolean {
  // Two syscalls with no I/O: cheaper than a chmod on a slow filesystem, and never stale.
  return (process.umask() & mode) !== 0;
}

/** Creates `<stateDir>/artifacts/<spawnId>` with mode 0700; fails if it already exists. */
export function createArtifactDir(stateDir: string, spawnId: string): ArtifactDescriptor {
  if (typeof spawnId !== 'string' || !SPAWN_ID.test(spawnId)) {
    throw new Error(`createArtifactDir: spawn id must match ${SPAWN_ID.source} (supervisor-generated ids only)`);
  }
  if (typeof stateDir !== 'string' || !path.isAbsolute(stateDir)) {
    throw new Error('createArtifactDir: stateDir must be an absolute path');
  }
  const base = path.join(stateDir, 'artifacts');
  if (!readyBases.has(base)) {
    withPrivateUmask(() => fs.mkdirSync(base, { recursive: true, mode: 0o700 }));
    // A symlinked artifacts directory would redirect every artifact somewhere we did not choose.
    const st = fs.lstatSync(base);
    if (!st.isDirectory()) {
      throw new Error(`createArtifactDir: ${base} must be a real directory, not a symlink or file`);
    }
    // Created 0700 under umask 077; an older run may have left an existing one wider: narrow it.
    if ((st.mode & 0o777) !== 0o700) fs.chmodSync(base, 0o700);
    readyBases.add(base);
  }
  const root = path.join(base, spawnId);
  // Not recursive: an existing root means a reused spawn id, which must not mix artifacts.
  try {
    withPrivateUmask(() => fs.mkdirSync(root, { mode: 0o700 }));
  } catch (err) {
    // The base may have been removed since it was checked: check it again once.
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !readyBases.delete(base)) throw err;
    return createArtifactDir(stateDir, spawnId);
  }
  return { root, stdout: STREAM_FILES.stdout, stderr: STREAM_FILES.stderr };
}

/** Absolute path of one stream's artifact; refuses descriptors whose stream path is not a plain file name. */
export function artifactPath(d: ArtifactDescriptor, stream: 'stdout' | 'stderr'): string {
  const rel = d[stream];
  // Descriptors may be read back from storage: a separator or dot name would escape the root.
  if (
    typeof rel !== 'string' ||
    rel === '' ||
    rel === '.' ||
    rel === '..' ||
    rel.includes('/') ||
    rel.includes('\\') ||
    rel.includes('\0')
  ) {
    throw new Error(`artifactPath: ${stream} path must be a plain file name inside the artifact root`);
  }
  if (!path.isAbsolute(d.root)) throw new Error('artifactPath: artifact root must be absolute');
  return path.join(d.root, rel);
}
