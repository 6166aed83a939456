// For `doctor` on Windows: how this machine starts a tree's leader (decisions 85, 107-109, 116), found by
// starting `cmd.exe /d /q` the way a tree with a stdin pipe is started, in a kill-on-close job of
// its own, and giving it `exit 7` through that pipe: the suspended start, the token-proven stdin
// pipe, its EOF and the exit code in one round.
import * as k32 from '../../../native-helpers/kernel32.js';
import { buildCommandLine, cmdExePath } from './command-line.js';
import { chooseStartPath, LAUNCHER_TREES } from './win32-platform.js';
import { startSuspendedLeader } from './suspended-leader.js';

const SUSPENDED_TREES =
  'trees whose stdin is NUL, inherited or a pipe the supervisor writes (plain trees, MCP stdio servers, external runtimes), with or without a data channel (authored tool hosts: a token-proven duplex pipe as fd 3 in the C runtime\'s inherited fd table, lpReserved2), .bat/.cmd ones through cmd.exe /d /s /c with cmd-quoted arguments';

export async function probeWindowsStartPath(env: Readonly<Record<string, string>>): Promise<{ ok: boolean; detail: string }> {
  const choice = chooseStartPath();
  if (choice.path === 'launcher') return { ok: true, detail: `the Node launcher for every tree (${choice.why}): one more Node start per tree, and the reported pid is the launcher's` };
  const job = k32.createJobObject();
  try {
    k32.setKillOnJobClose(job);
    const cmd = cmdExePath();
    const child = startSuspendedLeader({ application: cmd, commandLine: buildCommandLine(cmd, ['/d', '/q']) }, { cwd: process.cwd(), env, job, stdin: 'pipe' });
    child.stdout.resume();
    child.stderr.resume();
    child.stdin!.on('error', () => undefined);
    child.stdin!.end('exit 7\r\n');
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c: number | null) => resolve(c)));
    child.stdout.destroy();
    child.stderr.destroy();
    child.stdin!.destroy();
    if (code !== 7) return { ok: false, detail: `a suspended start ran but exited with ${String(code)}, not 7 (it was sent "exit 7" on its stdin pipe); set SUPERVISOR_SPAWN=node to use the launcher` };
    return { ok: true, detail: `CreateProcessW suspended into the tree's Job Object for ${SUSPENDED_TREES} (${choice.why}; started cmd.exe that way and it ran "exit 7" from its stdin pipe); ${LAUNCHER_TREES}` };
  } catch (err) {
    return { ok: false, detail: `suspended start failed (${err instanceof Error ? err.message : String(err)}); set SUPERVISOR_SPAWN=node to use the launcher` };
  } finally {
    // Kill-on-close: nothing the probe started outlives it.
    k32.closeHandle(job);
  }
}
