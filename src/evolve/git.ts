// Git, as the evolution runtime uses it: one short command at a time, bounded in time and output,
// with no hook and no prompt (a repository's hooks are code the agent's edit could reach through
// the worktree; `core.hooksPath=/dev/null` turns every one off), and an environment of our own.
import { execFile } from 'node:child_process';

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
    readonly exitCode: number | null,
  ) {
    super(`git ${args.join(' ')} failed${exitCode === null ? '' : ` (exit ${exitCode})`}: ${stderr.trim().split('\n').slice(-3).join(' ') || 'no message'}`);
    this.name = 'GitError';
  }
}

const TIMEOUT_MS = 30_000;
const MAX_OUTPUT = 16 * 1024 * 1024;

/** The environment git runs in: no prompt, no pager, no system config, a fixed identity for commits. */
function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/',
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_PAGER: 'cat',
    GIT_AUTHOR_NAME: 'supervisor evolve',
    GIT_AUTHOR_EMAIL: 'evolve@supervisor.invalid',
    GIT_COMMITTER_NAME: 'supervisor evolve',
    GIT_COMMITTER_EMAIL: 'evolve@supervisor.invalid',
  };
}

/** Runs `git -C cwd args...`; resolves with stdout, rejects with a GitError naming the command. */
export function git(cwd: string, args: readonly string[], o: { input?: string } = {}): Promise<string> {
  const full = ['-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-C', cwd, ...args];
  return new Promise((resolve, reject) => {
    const child = execFile('git', full, { env: gitEnv(), timeout: TIMEOUT_MS, maxBuffer: MAX_OUTPUT, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        const code = typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null;
        reject(new GitError(args, String(stderr || err.message), code));
      } else resolve(String(stdout));
    });
    if (o.input !== undefined) child.stdin?.end(o.input);
  });
}

/** `git` that answers yes or no by its exit code (1 is no); other failures still throw. */
export async function gitSucceeds(cwd: string, args: readonly string[]): Promise<boolean> {
  try {
    await git(cwd, args);
    return true;
  } catch (err) {
    if (err instanceof GitError && err.exitCode === 1) return false;
    throw err;
  }
}
