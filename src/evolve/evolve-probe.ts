// For `doctor`: what evolve_core can do on this machine. It needs git; its edits are written by
// the supervisor, path-checked, not by a sandboxed process; a candidate's authored tests run only
// in the sandbox tier, so where that tier is not usable a core with tests cannot pass its gates.
import { firstLine, type MechanismFinding, type ProbeChildren } from '../process/probe-children.js';
import { sandboxAvailability } from '../process/index.js';

export async function probeEvolve(children: ProbeChildren): Promise<MechanismFinding> {
  const v = await children.run('git', ['--version'], { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' });
  if (v.error === 'ENOENT' || v.code !== 0) {
    return { ok: false, detail: `git ${v.error === 'ENOENT' ? 'is not installed' : `--version failed (${firstLine(v.stderr) || `exit ${v.code}`})`}: evolve_core is unavailable (install git)` };
  }
  const version = firstLine(v.stdout).replace(/^git version\s+/, '');
  const tier = sandboxAvailability();
  const tests = tier.usable
    ? 'authored tools\' tests (a gate) run in the sandbox tier'
    : `authored tools' tests run only in the sandbox tier, which is NOT usable here, so a core whose tools have tests cannot pass its gates (${tier.reason})`;
  return {
    ok: true,
    version,
    detail: `git ${version}, no hooks; edits are written by the supervisor inside the run's worktree, path-checked (no '..', nothing under .git, no symbolic link followed), not sandboxed; ${tests}`,
  };
}
