// For `doctor`: the sandbox tier, found by trying it. bubblewrap runs `true` with every namespace;
// then node runs inside the tier's own launch and reports what it can reach.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { sandboxAvailability } from './availability.js';
import { sandboxCommand } from './sandbox-command.js';
import { firstLine, howEnded, outcomeText, withScratchDirs, type MechanismFinding, type ProbeChildOutcome, type ProbeChildren } from '../probe-children.js';

export async function probeBubblewrap(children: ProbeChildren): Promise<MechanismFinding> {
  const v = await children.run('bwrap', ['--version']);
  if (v.error === 'ENOENT') return { ok: false, detail: 'not installed (apt-get install bubblewrap)', version: 'not installed' };
  const version = firstLine(v.stdout).replace(/^bubblewrap\s+/, '') || 'unknown';
  const r = await children.run('bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true']);
  if (r.code === 0) return { ok: true, detail: 'bwrap --unshare-all --die-with-parent --ro-bind / / true works', version };
  return { ok: false, detail: `bwrap --unshare-all failed: ${outcomeText(r)}`, version };
}

// Run inside the sandbox: what it can see of the network, the pid space and a file outside its grant.
const SANDBOX_SCRIPT = `
const fs = require('node:fs'), os = require('node:os');
const out = { pid: process.pid, ifs: Object.keys(os.networkInterfaces()) };
try { out.procs = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).length; } catch (e) { out.procs = -1; }
try { fs.readFileSync(process.argv[1]); out.outside = 'ok'; } catch (e) { out.outside = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

/** The sandbox tier: sandboxAvailability() runs `true`; then node runs inside and checks what it can reach. */
export async function probeSandbox(children: ProbeChildren): Promise<MechanismFinding> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `not usable (${tier.mechanism ?? 'no mechanism'}): ${tier.reason}` };
  return withScratchDirs(['sandbox', 'outside'], async ([granted, outside]) => {
    const outsideFile = path.join(outside!, 'outside.txt');
    fs.writeFileSync(outsideFile, 'outside');
    const r = await runNodeInSandbox(children, SANDBOX_SCRIPT, outsideFile, granted!, false);
    let res: { pid?: number; ifs?: string[]; procs?: number; outside?: string };
    try {
      res = JSON.parse(r.stdout) as typeof res;
    } catch {
      return { ok: false, detail: `not usable (${tier.mechanism}): node did not run inside the sandbox (${howEnded(r)}): ${r.stderr.split('\n')[0] ?? ''}`.trim() };
    }
    const found = `node ran inside: interfaces [${res.ifs?.join(', ')}], ${res.procs} visible process(es), a file outside the grant: ${res.outside}`;
    if (tier.mechanism === 'bubblewrap') {
      const ok = res.ifs?.join(',') === 'lo' && res.procs !== undefined && res.procs > 0 && res.procs <= 3 && res.outside === 'ENOENT';
      return { ok, detail: `${ok ? 'usable' : 'NOT isolated'} (bubblewrap): ${found}` };
    }
    // sandbox-exec has no network or pid namespace: only the file rule is checked. Unverified on a real Mac.
    const ok = res.outside === 'EPERM' || res.outside === 'EACCES';
    return { ok, detail: `${ok ? 'usable' : 'NOT isolated'} (sandbox-exec, profile UNVERIFIED): ${found}` };
  });
}

/** `node -e script arg` in the tier's own launch, granted only `dir` (read-only, its cwd). */
export function runNodeInSandbox(children: ProbeChildren, script: string, arg: string, dir: string, network: boolean): Promise<ProbeChildOutcome> {
  const cmd = sandboxCommand({
    command: process.execPath,
    args: ['-e', script, arg],
    readOnlyPaths: [dir],
    writablePaths: [],
    cwd: dir,
    network,
    env: { PATH: '/usr/bin:/bin' },
  });
  return children.run(cmd.command, cmd.args, cmd.env);
}
