// For `doctor`: whether the state dir the commands would use is private, so the store, artifacts
// and tokens created 0600 inside it stay private. Read-only: nothing is created here.
import { lstatSync, realpathSync, statSync } from 'node:fs';
import { ALLOW_SHARED_STATE_DIR_ENV } from './private-files.js';

export function probeStateDir(dir: string, env: NodeJS.ProcessEnv = process.env): { ok: boolean; detail: string } {
  if (process.platform === 'win32') return { ok: false, detail: `${dir}: ACLs are not inspected on Windows; files are not checked for privacy` };
  // As the commands do (ensurePrivateDir): a symlink is followed, and the directory it leads to is
  // what must be private. Only the store path itself must not be a link (checked when it is opened).
  let st;
  let name = dir;
  try {
    st = statSync(dir);
    if (lstatSync(dir).isSymbolicLink()) name = `${dir} (a symlink to ${realpathSync(dir)})`;
  } catch {
    let dangling = false;
    try {
      dangling = lstatSync(dir).isSymbolicLink();
    } catch {
      // nothing there at all
    }
    if (dangling) return { ok: false, detail: `${dir} is a symlink to nothing: every command refuses it; remove the link or create its target (mkdir -m 700)` };
    return { ok: true, detail: `${dir} does not exist yet: it will be made 0700, and the store and artifacts inside it 0600 (open flags, never chmod)` };
  }
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  const shared = env[ALLOW_SHARED_STATE_DIR_ENV] === '1' ? ` (accepted by ${ALLOW_SHARED_STATE_DIR_ENV}=1)` : '';
  if (!st.isDirectory()) return { ok: false, detail: `${name} is not a directory: every command refuses it; point --state-dir or SUPERVISOR_STATE_DIR at a directory` };
  if (st.uid !== process.getuid?.()) return { ok: shared !== '', detail: `${name} is owned by uid ${st.uid}, not you: refused${shared}; use a directory of your own` };
  if ((st.mode & 0o077) !== 0) return { ok: shared !== '', detail: `${name} has mode ${mode}: others can enter it, so commands refuse it${shared}; fix: chmod 700 ${dir}` };
  return { ok: true, detail: `${name}: mode ${mode}, yours; the store, its WAL and artifacts are created 0600 inside it` };
}
