// For `doctor` on Windows: how this machine starts a tree's leader (decision 85), found by starting
// `cmd.exe /c exit 7` the way a plain tree is started, in a kill-on-close job of its own.
import * as k32 from '../../../native-helpers/kernel32.js';
import { chooseStartPath } from './win32-platform.js';
import { startSuspendedLeader } from './suspended-leader.js';

const LAUNCHER_ALWAYS = 'trees with a stdin pipe, IPC or a data channel (tool hosts, MCP servers, external runtimes) and .bat/.cmd commands use the Node launcher, which waits in the job for "go"';

export async function probeWindowsStartPath(env: Readonly<Record<string, string>>): Promise<{ ok: boolean; detail: string }> {
  const choice = chooseStartPath();
  if (choice.path === 'launcher') return { ok: true, detail: `the Node launcher for every tree (${choice.why}): one more Node start per tree, and the reported pid is the launcher's` };
  const job = k32.createJobObject();
  try {
    k32.setKillOnJobClose(job);
    const cmd = process.env.ComSpec ?? 'C:\\Windows\\System32\\cmd.exe';
    const child = startSuspendedLeader(cmd, ['/c', 'exit', '7'], { cwd: process.cwd(), env, job });
    child.stdout.resume();
    child.stderr.resume();
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c: number | null) => resolve(c)));
    child.stdout.destroy();
    child.stderr.destroy();
    if (code !== 7) return { ok: false, detail: `a suspended start ran but exited with ${String(code)}, not 7; set SUPERVISOR_SPAWN=node to use the launcher` };
    return { ok: true, detail: `CreateProcessW suspended into the tree's Job Object for plain trees (${choice.why}; started and waited on cmd.exe that way); ${LAUNCHER_ALWAYS}` };
  } catch (err) {
    return { ok: false, detail: `suspended start failed (${err instanceof Error ? err.message : String(err)}); set SUPERVISOR_SPAWN=node to use the launcher` };
  } finally {
    // Kill-on-close: nothing the probe started outlives it.
    k32.closeHandle(job);
  }
}
