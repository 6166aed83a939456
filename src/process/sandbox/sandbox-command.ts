// The sandbox tier's one entry point: a spec in, a command line for ProcessSupervisor.spawnTree
// out. The sandbox then runs inside a supervised tree: its own session and process group, the
// tree's cgroup, and the SUPERVISOR_SPAWN_ID marker spawnTree adds to the launcher's environment.
import { probed } from './availability.js';
import { bubblewrapArgs, linuxRoot } from './bubblewrap.js';
import { SandboxUnavailableError } from './errors.js';
import { darwinLayout, sandboxExecArgs } from './seatbelt.js';
import { validateSpec, type SandboxedCommand, type SandboxSpec } from './spec.js';

/**
 * Throws SandboxUnavailableError when no mechanism works here, SandboxSpecError (with `field`)
 * when the spec is refused. Pass the result's command, args, env and cwd to spawnTree unchanged.
 */
export function sandboxCommand(spec: SandboxSpec): SandboxedCommand {
  const tier = probed();
  if (!tier.usable || tier.launcher === null) throw new SandboxUnavailableError(tier.reason);
  if (tier.mechanism === 'bubblewrap') {
    const v = validateSpec(spec, linuxRoot().layout);
    // bwrap hands its own environment to the command: exactly spec.env plus the marker spawnTree
    // adds. The validation refused the names that would act on bwrap itself (LD_* and friends).
    return { command: tier.launcher, args: bubblewrapArgs(v), env: { ...v.env }, cwd: v.cwd };
  }
  // sandbox-exec too keeps the environment it is given.
  const v = validateSpec(spec, darwinLayout());
  return { command: tier.launcher, args: sandboxExecArgs(v), env: { ...v.env }, cwd: v.cwd };
}
