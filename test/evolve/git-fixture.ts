// Real Git repositories for the evolve tests: a core committed on `main`, removed after the suite.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/** `git -C cwd args...` with a fixed identity and main as the first branch. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t.invalid', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' }).trim();

/** A fresh folder under the system temp dir, removed by removeRepos(). */
export function scratchDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

/** A repository whose top level is a core with this agent.yaml, committed on main. */
export function repoCore(agentYaml: string): string {
  const repo = scratchDir('evolve-repo-');
  git(repo, 'init', '--quiet');
  writeFileSync(join(repo, 'agent.yaml'), agentYaml);
  git(repo, 'add', '-A');
  git(repo, 'commit', '--quiet', '-m', 'init');
  return repo;
}

export function removeRepos(): void {
  for (const d of made.splice(0)) rmSync(d, { recursive: true, force: true });
}
