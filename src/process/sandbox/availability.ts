// Whether the sandbox tier works here, decided by running a real sandboxed `true` once per
// process (cached), not by looking for a binary.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolveCommand } from '../resolve-command.js';
import { bubblewrapArgs, linuxRoot } from './bubblewrap.js';
import { darwinLayout, SANDBOX_EXEC, sandboxExecArgs } from './seatbelt.js';
import { validateSpec } from './spec.js';

export interface SandboxAvailability {
  usable: boolean;
  mechanism: 'bubblewrap' | 'sandbox-exec' | null;
  reason: string;
}

interface Probed extends SandboxAvailability {
  /** Absolute path of the launcher that worked (bwrap or sandbox-exec). */
  launcher: string | null;
}

const PROBE_TIMEOUT_MS = 5_000;
const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';
let cached: Probed | undefined;

export function sandboxAvailability(options: { refresh?: boolean } = {}): SandboxAvailability {
  const { usable, mechanism, reason } = probed(options.refresh === true);
  return { usable, mechanism, reason };
}

/** The launcher behind a usable tier (internal: sandboxCommand needs the path the probe ran). */
export function probed(refresh = false): Probed {
  if (cached && !refresh) return cached;
  cached = process.platform === 'linux' ? probeLinux() : process.platform === 'darwin' ? probeDarwin() : unavailableElsewhere();
  return cached;
}

function probeLinux(): Probed {
  const fail = (reason: string, launcher: string | null = null): Probed => ({ usable: false, mechanism: 'bubblewrap', reason, launcher });
  const bwrap = resolveCommand('bwrap', `${process.env.PATH ?? ''}:${SYSTEM_PATH}`, '/');
  if (bwrap === null) return fail('bwrap is not installed (apt-get install bubblewrap)');
  const version = spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, env: {} }).stdout?.trim() || 'bwrap (unknown version)';
  let args: string[];
  try {
    const trueCmd = resolveCommand('true', SYSTEM_PATH, '/') ?? '/usr/bin/true';
    const spec = validateSpec({ command: trueCmd, args: [], readOnlyPaths: ['/usr/bin'], writablePaths: [], cwd: '/usr/bin', network: false, env: {} }, linuxRoot().layout);
    args = bubblewrapArgs(spec);
  } catch (err) {
    return fail(`the probe spec could not be built: ${(err as Error).message}`, bwrap);
  }
  const r = spawnSync(bwrap, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error) return fail(`${version}: running the probe failed: ${r.error.message}`, bwrap);
  if (r.status !== 0) {
    const said = firstLine(r.stderr);
    return fail(`${version}: a sandboxed true ${r.signal ? `was killed by ${r.signal}` : `exited ${r.status}`}${said ? `: ${said}` : ''}${hint(said)}`, bwrap);
  }
  return {
    usable: true,
    mechanism: 'bubblewrap',
    reason: `${version}: ran true with its own user, pid, network, ipc, uts and mount namespaces, no capabilities, --die-with-parent`,
    launcher: bwrap,
  };
}

function hint(stderr: string): string {
  if (/disable-userns|Unknown option/i.test(stderr)) return ' (bubblewrap 0.8.0 or newer is needed for --disable-userns)';
  if (/namespace|uid map|Operation not permitted|Permission denied/i.test(stderr)) {
    return ' (user namespaces are not allowed for this user: enable kernel.unprivileged_userns_clone, allow bwrap in AppArmor, or run the supervisor as root)';
  }
  return '';
}

function probeDarwin(): Probed {
  const fail = (reason: string): Probed => ({ usable: false, mechanism: 'sandbox-exec', reason, launcher: null });
  if (!existsSync(SANDBOX_EXEC)) return fail(`${SANDBOX_EXEC} is missing (removed from this macOS?)`);
  let args: string[];
  try {
    const spec = validateSpec({ command: '/usr/bin/true', args: [], readOnlyPaths: ['/usr/bin'], writablePaths: [], cwd: '/usr/bin', network: false, env: {} }, darwinLayout());
    args = sandboxExecArgs(spec);
  } catch (err) {
    return fail(`the probe spec could not be built: ${(err as Error).message}`);
  }
  const r = spawnSync(SANDBOX_EXEC, args, { encoding: 'utf8', timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL', env: {}, stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.error || r.status !== 0) return fail(`sandbox-exec could not run true under the generated profile: ${r.error?.message ?? firstLine(r.stderr) ?? `exit ${r.status}`}`);
  return {
    usable: true,
    mechanism: 'sandbox-exec',
    reason: 'sandbox-exec ran true under the generated profile; UNVERIFIED: the profile\'s isolation has not been tested on macOS yet (docs/security-model.md)',
    launcher: SANDBOX_EXEC,
  };
}

function unavailableElsewhere(): Probed {
  const reason =
    process.platform === 'win32'
      ? 'no sandbox mechanism is implemented on Windows (an AppContainer or restricted-token launcher would be one); use the process tier, or run the supervisor on Linux'
      : `no sandbox mechanism is implemented on ${process.platform} (Linux: bubblewrap; macOS: sandbox-exec)`;
  return { usable: false, mechanism: null, reason, launcher: null };
}

function firstLine(s: string | undefined): string {
  return (s ?? '').split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
}
