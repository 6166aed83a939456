// For `doctor`: whether the state dir the commands would use is private, so the store, artifacts
// and tokens created 0600 inside it stay private. Read-only: nothing is created here.
import { lstatSync } from 'node:fs';
import { ALLOW_SHARED_STATE_DIR_ENV } from './private-files.js';

export function probeStateDir(dir: string, env: NodeJS.ProcessEnv = process.env): { ok: boolean; detail: string } {
  if (process.platform === 'win32') return { ok: false, detail: `${dir}: ACLs are not inspected on Windows; files are not checked for privacy` };
  let st;
  try {
    st = lstatSync(dir);
  } catch {
    return { ok: true, detail: `${dir} does not exist yet: it will be made 0700, and the store and artifacts inside it 0600 (open flags, never chmod)` };
  }
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  const shared = env[ALLOW_SHARED_STATE_DIR_ENV] === '1' ? ` (accepted by ${ALLOW_SHARED_STATE_DIR_ENV}=1)` : '';
  if (!st.isDirectory()) return { ok: false, detail: `${dir} is not a directory: every command refuses it; point --state-dir or SUPERVISOR_STATE_DIR at a directory` };
  if (st.uid !== process.getuid?.()) return { ok: shared !== '', detail: `${dir} is owned by uid ${st.uid}, not you: refused${shared}; use a directory of your own` };
  if ((st.mode & 0o077) !== 0) return { ok: shared !== '', detail: `${dir} has mode ${mode}: others can enter it, so commands refuse it${shared}; fix: chmod 700 ${dir}` };
  return { ok: true, detail: `${dir}: mode ${mode}, yours; the store, its WAL and artifacts are created 0600 inside it` };
}
