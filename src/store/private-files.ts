// Files the supervisor keeps (the store and its WAL/SHM, artifacts, tokens, configs for external
// runtimes) are private from their first byte: created 0600 inside a 0700 directory, by open flags
// and a narrowed umask, never widened-then-chmod-ed (another user could open the file in that window
// and read it later through the descriptor). A state directory others can enter is refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { isMainThread } from 'node:worker_threads';
import { StoreError } from './store-errors.js';
import { makeDirs } from './make-dirs.js';

/** The operator's explicit opt-out for a state directory others can enter (documented). */
export const ALLOW_SHARED_STATE_DIR_ENV = 'SUPERVISOR_ALLOW_SHARED_STATE_DIR';

const CREATE_PRIVATE = fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW;

/**
 * Runs `create` with umask 077, so whatever it creates (directories, SQLite's -wal and -shm) has no
 * group or other bits from the start. Synchronous on purpose: no other JavaScript runs meanwhile.
 */
export function withPrivateUmask<T>(create: () => T): T {
  // Worker threads may not change the umask (the modes passed to open and mkdir still hold).
  if (process.platform === 'win32' || !isMainThread) return create();
  const old = process.umask(0o077);
  try {
    return create();
  } finally {
    process.umask(old);
  }
}

const octal = (mode: number): string => (mode & 0o777).toString(8).padStart(4, '0');

/**
 * Makes `dir` (and missing parents) 0700, or checks an existing one: a directory, owned by this
 * user, with no group or other bits. Refused otherwise unless SUPERVISOR_ALLOW_SHARED_STATE_DIR=1.
 */
export function ensurePrivateDir(dir: string, env: NodeJS.ProcessEnv = process.env): void {
  withPrivateUmask(() => makeDirs(dir, 0o700));
  if (process.platform === 'win32') return;
  const st = fs.statSync(dir);
  if (!st.isDirectory()) {
    throw new StoreError('STATE_DIR_UNSAFE', `the state directory ${dir} is not a directory; point --state-dir (or SUPERVISOR_STATE_DIR) at a directory`);
  }
  if (env[ALLOW_SHARED_STATE_DIR_ENV] === '1') return;
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) {
    throw new StoreError(
      'STATE_DIR_UNSAFE',
      `the state directory ${dir} is owned by uid ${st.uid}, not by this user (uid ${uid}); its owner could read the store and artifacts. Fix: use a directory of your own (--state-dir), or set ${ALLOW_SHARED_STATE_DIR_ENV}=1 to accept it`,
    );
  }
  if ((st.mode & 0o077) !== 0) {
    throw new StoreError(
      'STATE_DIR_UNSAFE',
      `the state directory ${dir} has mode ${octal(st.mode)}: other users can enter it and open the store, its artifacts and tokens. Fix: chmod 700 ${dir} (or set ${ALLOW_SHARED_STATE_DIR_ENV}=1 to accept it)`,
    );
  }
}

/**
 * Creates `file` 0600 if it does not exist (O_EXCL|O_NOFOLLOW), else checks it with lstat: a
 * regular file, not a symlink. An existing file is never opened here: closing any descriptor of a
 * SQLite file drops every POSIX lock this process holds on it, so a second connection in the same
 * process (or the checkpointer) would lose its locks. A file left wider by an older supervisor is
 * narrowed; in a 0700 directory of ours nobody can swap a link in between the lstat and the chmod.
 */
export function ensurePrivateFile(file: string, what: string): void {
  if (process.platform === 'win32') return;
  try {
    fs.closeSync(withPrivateUmask(() => fs.openSync(file, CREATE_PRIVATE, 0o600)));
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw symlinkRefused(file, what);
    if (code !== 'EEXIST') throw err;
  }
  const st = fs.lstatSync(file);
  if (st.isSymbolicLink()) throw symlinkRefused(file, what);
  if (!st.isFile()) throw new StoreError('STATE_FILE_UNSAFE', `${what} ${file} is not a regular file; remove it or choose another --state-dir`);
  if ((st.mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
}

function symlinkRefused(file: string, what: string): StoreError {
  return new StoreError('STATE_FILE_UNSAFE', `${what} ${file} is a symbolic link; the supervisor opens only its own files there. Fix: remove the link (rm ${file}) or choose another --state-dir`);
}

/**
 * Writes `data` to `file` as a fresh 0600 file: a temporary sibling created O_EXCL|O_NOFOLLOW, then
 * renamed over `file` (rename replaces a link itself, never its target), so no reader ever sees a
 * wider mode or a half-written token.
 */
export function writePrivateFile(file: string, data: string | Buffer): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = withPrivateUmask(() => fs.openSync(tmp, CREATE_PRIVATE, 0o600));
  try {
    fs.writeFileSync(fd, data);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
