// Where the store and artifacts live: chosen by the operator (or the embedder), never derived from
// a child's input.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** $SUPERVISOR_STATE_DIR, else $XDG_STATE_HOME/isolation-supervisor, else ~/.local/state/isolation-supervisor. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SUPERVISOR_STATE_DIR) return resolve(env.SUPERVISOR_STATE_DIR);
  const base = env.XDG_STATE_HOME && isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(base, 'isolation-supervisor');
}
