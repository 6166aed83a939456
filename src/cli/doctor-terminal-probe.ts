// Doctor: what enforces terminal auto-approval by class on this machine. Runs the terminal's own
// sandbox launch (the spec a class-approved command gets) against a workspace holding a link to a
// file outside it, and reports the mechanism, or that auto-approval by class is refused and why.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sandboxAvailability } from '../process/index.js';
import { terminalSandboxLaunch } from '../adapters/builtin/terminal.js';
import type { ChildOutcome, DoctorEntry } from './doctor.js';

type RunChild = (command: string, args: string[], env: Record<string, string>) => Promise<ChildOutcome>;

const INSIDE = 'inside-the-workspace';
const PROBE = 'cat inside.txt; cat out.txt 2>/dev/null || echo OUT-UNREADABLE; (echo x > written.txt) 2>/dev/null || echo WRITE-REFUSED; ls /run /root /home 2>/dev/null | head -n 1 | grep -q . || echo HOST-DIRS-HIDDEN';

export async function probeTerminalAutoApproval(run: RunChild): Promise<DoctorEntry> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `refused: auto-approval by class (auto_approve) is off, such calls ask, and terminal.sandbox: always refuses every call: ${tier.reason}` };
  const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-terminal-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-outside-'));
  try {
    const marker = `outside-${process.pid}-${Date.now()}`;
    fs.writeFileSync(path.join(outside, 'marker.txt'), marker);
    fs.writeFileSync(path.join(workspace, 'inside.txt'), INSIDE);
    fs.symlinkSync(path.join(outside, 'marker.txt'), path.join(workspace, 'out.txt'));
    const launch = terminalSandboxLaunch({ file: '/bin/sh', args: ['-c', PROBE] }, workspace, { PATH: '/usr/bin:/bin' }, workspace, { maskPaths: [] });
    const r = await run(launch.command, launch.args, launch.env);
    const seen = r.stdout;
    const held = seen.includes(INSIDE) && !seen.includes(marker) && seen.includes('OUT-UNREADABLE') && seen.includes('WRITE-REFUSED') && seen.includes('HOST-DIRS-HIDDEN');
    const what = tier.mechanism === 'bubblewrap' ? 'bubblewrap sandbox (user+pid+net namespaces, workspace read-only, private /tmp, no home, /run, state dir or secret sources)' : `${tier.mechanism} (Seatbelt profile, UNVERIFIED on a real Mac)`;
    if (held) return { ok: true, detail: `${what}: a link out of the workspace read nothing, a write was refused` };
    const how = r.error ?? (r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`);
    return { ok: false, detail: `NOT contained (${what}): the probe ${how} and printed ${JSON.stringify(seen.slice(0, 200))}; auto-approval by class would not be held by the kernel` };
  } finally {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  }
}
