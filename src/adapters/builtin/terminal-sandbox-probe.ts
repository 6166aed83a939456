// For `doctor`: what enforces terminal auto-approval by class on this machine. Runs the terminal's
// own sandbox launch (the spec a class-approved command gets) against a workspace holding a link to
// a file outside it, and reports the mechanism, or that auto-approval by class is refused and why.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sandboxAvailability } from '../../process/index.js';
import { howEnded, withScratchDirs, type MechanismFinding, type ProbeChildren } from '../../process/probe-children.js';
import { terminalSandboxLaunch } from './terminal.js';

const INSIDE = 'inside-the-workspace';
const PROBE = 'cat inside.txt; cat out.txt 2>/dev/null || echo OUT-UNREADABLE; (echo x > written.txt) 2>/dev/null || echo WRITE-REFUSED; ls /run /root /home 2>/dev/null | head -n 1 | grep -q . || echo HOST-DIRS-HIDDEN';

export async function probeTerminalAutoApproval(children: ProbeChildren): Promise<MechanismFinding> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `refused: auto-approval by class (auto_approve) is off, such calls ask, and terminal.sandbox: always refuses every call: ${tier.reason}` };
  return withScratchDirs(['terminal', 'outside'], async ([workspace, outside]) => {
    const marker = `outside-${process.pid}-${Date.now()}`;
    fs.writeFileSync(path.join(outside!, 'marker.txt'), marker);
    fs.writeFileSync(path.join(workspace!, 'inside.txt'), INSIDE);
    fs.symlinkSync(path.join(outside!, 'marker.txt'), path.join(workspace!, 'out.txt'));
    const launch = terminalSandboxLaunch({ file: '/bin/sh', args: ['-c', PROBE] }, workspace!, { PATH: '/usr/bin:/bin' }, workspace!, { maskPaths: [], writableWorkspace: false });
    const r = await children.run(launch.command, launch.args, launch.env);
    const seen = r.stdout;
    const held = seen.includes(INSIDE) && !seen.includes(marker) && seen.includes('OUT-UNREADABLE') && seen.includes('WRITE-REFUSED') && seen.includes('HOST-DIRS-HIDDEN');
    const what = tier.mechanism === 'bubblewrap' ? 'bubblewrap sandbox (user+pid+net namespaces, workspace read-only, private /tmp, no home, /run, state dir or secret sources)' : `${tier.mechanism} (Seatbelt profile, UNVERIFIED on a real Mac)`;
    if (!held) return { ok: false, detail: `NOT contained (${what}): the probe ${howEnded(r)} and printed ${JSON.stringify(seen.slice(0, 200))}; auto-approval by class would not be held by the kernel` };
    const writable = await probeWorkspaceWrite(children, workspace!, outside!);
    return { ok: true, detail: `${what}: a link out of the workspace read nothing, a write was refused; terminal.sandbox: workspace-write: ${writable}` };
  });
}

/**
 * The same launch with the workspace writable (terminal.sandbox: workspace-write, an evolve run's
 * child editor): a write inside lands, while the workspace's .git and a folder outside stay refused.
 */
async function probeWorkspaceWrite(children: ProbeChildren, workspace: string, outside: string): Promise<string> {
  fs.mkdirSync(path.join(workspace, '.git'));
  const script = `(echo x > made.txt) && echo WROTE; (echo x > .git/hook) 2>/dev/null || echo GIT-REFUSED; (echo x > ${outside}/planted) 2>/dev/null || echo OUTSIDE-REFUSED`;
  const launch = terminalSandboxLaunch({ file: '/bin/sh', args: ['-c', script] }, workspace, { PATH: '/usr/bin:/bin' }, workspace, { maskPaths: [], writableWorkspace: true });
  const r = await children.run(launch.command, launch.args, launch.env);
  const landed = fs.existsSync(path.join(workspace, 'made.txt'));
  const escaped = fs.existsSync(path.join(workspace, '.git', 'hook')) || fs.existsSync(path.join(outside, 'planted'));
  if (landed && !escaped) return 'the workspace was writable, its .git and a folder outside were not (checked on the host)';
  return `NOT as promised: the probe ${howEnded(r)}, a write inside ${landed ? 'landed' : 'did not land'}, and ${escaped ? 'a write to .git or outside LANDED' : 'nothing outside landed'}`;
}
