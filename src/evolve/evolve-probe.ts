// For `doctor`: what evolve_core can do on this machine. It needs git. An edit list is written by
// the supervisor, path-checked; a child agent's edits (start with agent) and a candidate's
// authored tests run only in the sandbox tier, so where that tier is not usable neither is offered
// (fail closed) and a core with tests cannot pass its gates.
import { firstLine, type MechanismFinding, type ProbeChildren } from '../process/probe-children.js';
import { sandboxAvailability } from '../process/index.js';

export async function probeEvolve(children: ProbeChildren): Promise<MechanismFinding> {
  const v = await children.run('git', ['--version'], { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' });
  if (v.error === 'ENOENT' || v.code !== 0) {
    return { ok: false, detail: `git ${v.error === 'ENOENT' ? 'is not installed' : `--version failed (${firstLine(v.stderr) || `exit ${v.code}`})`}: evolve_core is unavailable (install git)` };
  }
  const version = firstLine(v.stdout).replace(/^git version\s+/, '');
  const tier = sandboxAvailability();
  const sandboxed = tier.usable
    ? 'a child agent edits inside the sandbox tier (the worktree its only writable place), and authored tools\' tests (a gate) run there'
    : `the sandbox tier is NOT usable here, so start with a child agent is refused and a core whose tools have tests cannot pass its gates (${tier.reason})`;
  return {
    ok: true,
    version,
    detail: `git ${version}, no hooks; an edit list is written by the supervisor inside the run's worktree, path-checked (no '..', nothing under .git, no symbolic link followed); ${sandboxed}`,
  };
}
