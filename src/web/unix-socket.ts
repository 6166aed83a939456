// `supervisor web --socket PATH`: the page on a UNIX socket, so only the operator's own uid (and
// root) can connect at all: the socket is 0600 in a directory that is the operator's and 0700. The
// path is never followed: an existing symlink, or anything other than a socket, is refused; a
// socket left by a server that died (nobody answers on it) is replaced; one that answers is in use.
// The socket is removed when the server closes (if it is still the one this process made).
import { connect } from 'node:net';
import { chmodSync, lstatSync, mkdirSync, unlinkSync, type Stats } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { withPrivateUmask } from '../store/index.js';

/** A socket path that cannot be served, with the fix in the message. */
export class SocketPathError extends Error {
  override readonly name = 'SocketPathError';
}

const lstatOrNull = (p: string): Stats | null => {
  try {
    return lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
};

/** Connecting answers whether a server listens on the socket (a stale one refuses). */
function answers(path: string): Promise<boolean> {
  return new Promise((done) => {
    const s = connect({ path });
    s.once('connect', () => (s.destroy(), done(true)));
    s.once('error', () => done(false));
  });
}

/** The directory the socket goes in: made 0700 if missing; else it must be a real directory of ours, 0700. */
function checkDirectory(dir: string): void {
  let st = lstatOrNull(dir);
  if (st === null) {
    try {
      withPrivateUmask(() => mkdirSync(dir, { mode: 0o700 }));
    } catch (err) {
      throw new SocketPathError(`--socket: cannot make the directory ${dir} (${(err as NodeJS.ErrnoException).code ?? 'failed'}); its parent must exist and be writable`);
    }
    st = lstatSync(dir);
  }
  if (st.isSymbolicLink()) throw new SocketPathError(`--socket: the directory ${dir} is a symbolic link; give a path in a real directory`);
  if (!st.isDirectory()) throw new SocketPathError(`--socket: ${dir} is not a directory`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new SocketPathError(`--socket: the directory ${dir} belongs to uid ${st.uid}, not to you (uid ${uid}); use a directory of your own`);
  if ((st.mode & 0o077) !== 0) {
    throw new SocketPathError(`--socket: the directory ${dir} is mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}; others could reach the socket. chmod 700 ${dir}, or give a path in a private directory`);
  }
}

/** Checks PATH and its directory, clears a stale socket; returns the absolute path to listen on. */
export async function prepareSocketPath(path: string): Promise<string> {
  const abs = resolve(path);
  if (basename(abs) === '' || abs.length > 100) throw new SocketPathError(`--socket: ${abs} is too long for a UNIX socket (at most 100 characters); use a shorter path`);
  checkDirectory(dirname(abs));
  const st = lstatOrNull(abs);
  if (st === null) return abs;
  if (st.isSymbolicLink()) throw new SocketPathError(`--socket: ${abs} is a symbolic link; it is not followed. Remove it or give another path`);
  if (!st.isSocket()) throw new SocketPathError(`--socket: ${abs} exists and is not a socket; nothing is replaced. Remove it or give another path`);
  if (await answers(abs)) throw new SocketPathError(`--socket: ${abs} is in use (a server answers on it); stop it or give another path`);
  // A socket nobody listens on: left by a server that was killed. Ours to replace (the directory is ours).
  unlinkSync(abs);
  return abs;
}

/** After listen: 0600 whatever the umask was, and the identity to remove at close. */
export function secureSocket(abs: string): { remove(): void } {
  chmodSync(abs, 0o600);
  const made = lstatSync(abs);
  return {
    remove: () => {
      const now = lstatOrNull(abs);
      // Only the socket this process made: another server may have replaced a removed one.
      if (now !== null && now.isSocket() && now.ino === made.ino && now.dev === made.dev) unlinkSync(abs);
    },
  };
}
