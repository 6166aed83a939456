// Doctor probes for the Windows and macOS process layers and the sandbox tier, each found by trying it.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sandboxAvailability, sandboxCommand } from '../process/index.js';
import type { ChildOutcome, DoctorEntry } from './doctor.js';

/** Windows: a Job Object with KILL_ON_JOB_CLOSE holds a real child and TerminateJobObject ends it. */
export async function probeJobObjects(marker: string): Promise<DoctorEntry> {
  const k32 = await import('../../native-helpers/kernel32.js');
  if (!k32.kernel32Available()) return { ok: false, detail: 'kernel32 is not reachable through ffi-rs (is its win32 binary installed?)' };
  const job = k32.createJobObject();
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    stdio: 'ignore',
    windowsHide: true,
    env: { ...process.env, SUPERVISOR_SPAWN_ID: marker },
  });
  try {
    k32.setKillOnJobClose(job);
    const h = child.pid === undefined ? null : k32.openProcess(child.pid);
    if (h === null) return { ok: false, detail: 'could not open the probe child' };
    try {
      k32.assignProcessToJobObject(job, h);
      if (!k32.jobProcessIds(job).includes(child.pid!)) return { ok: false, detail: 'AssignProcessToJobObject succeeded but the job does not list the child' };
      if (k32.processCreationTime(h) === null) return { ok: false, detail: 'GetProcessTimes gave no creation time' };
      k32.terminateJobObject(job, 1);
      const waited = k32.waitForSingleObject(h, 2_000);
      if (waited !== k32.WAIT_OBJECT_0) return { ok: false, detail: 'TerminateJobObject did not end the child within 2 s' };
      return {
        ok: true,
        detail: 'Job Object with KILL_ON_JOB_CLOSE: assign, QueryInformationJobObject, GetProcessTimes, TerminateJobObject work',
      };
    } finally {
      k32.closeHandle(h);
    }
  } finally {
    k32.closeHandle(job);
    if (child.exitCode === null) child.kill();
    await sleep(0);
  }
}

/** macOS: proc_pidinfo, KERN_PROCARGS2 and proc_listallpids answer for this process. */
export async function probeLibproc(): Promise<DoctorEntry> {
  const { defaultDarwinSource } = await import('../process/darwin/select-source.js');
  const source = defaultDarwinSource();
  const self = source.info(process.pid);
  if (!self) return { ok: false, detail: `${source.kind}: no information about the supervisor's own process` };
  const listed = source.list().some((p) => p.pid === process.pid);
  const marker = process.env.PATH ? source.environHas(process.pid, 'PATH', process.env.PATH) : true;
  const ok = listed && marker;
  return {
    ok,
    detail: `${source.kind}: start marker ${self.startTime}${source.coarseStartTime ? ' (whole seconds)' : ''}, process list ${listed ? 'ok' : 'MISSING self'}, environment read ${marker ? 'ok' : 'FAILED'}, boot id ${source.bootId() || 'unknown'}`,
  };
}

type RunChild = (command: string, args: string[], env: Record<string, string>) => Promise<ChildOutcome>;

// Run inside the sandbox: what it can see of the network, the pid space and a file outside its grant.
const SANDBOX_SCRIPT = `
const fs = require('node:fs'), os = require('node:os');
const out = { pid: process.pid, ifs: Object.keys(os.networkInterfaces()) };
try { out.procs = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).length; } catch (e) { out.procs = -1; }
try { fs.readFileSync(process.argv[1]); out.outside = 'ok'; } catch (e) { out.outside = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

/** The sandbox tier: sandboxAvailability() runs `true`; then node runs inside and checks what it can reach. */
export async function probeSandbox(run: RunChild): Promise<DoctorEntry> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `not usable (${tier.mechanism ?? 'no mechanism'}): ${tier.reason}` };
  const granted = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-sandbox-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-outside-'));
  try {
    const outsideFile = path.join(outside, 'outside.txt');
    fs.writeFileSync(outsideFile, 'outside');
    const cmd = sandboxCommand({
      command: process.execPath,
      args: ['-e', SANDBOX_SCRIPT, outsideFile],
      readOnlyPaths: [granted],
      writablePaths: [],
      cwd: granted,
      network: false,
      env: { PATH: '/usr/bin:/bin' },
    });
    const r = await run(cmd.command, cmd.args, cmd.env);
    let res: { pid?: number; ifs?: string[]; procs?: number; outside?: string };
    try {
      res = JSON.parse(r.stdout) as typeof res;
    } catch {
      const how = r.error ?? (r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`);
      return { ok: false, detail: `not usable (${tier.mechanism}): node did not run inside the sandbox (${how}): ${r.stderr.split('\n')[0] ?? ''}`.trim() };
    }
    const found = `node ran inside: interfaces [${res.ifs?.join(', ')}], ${res.procs} visible process(es), a file outside the grant: ${res.outside}`;
    if (tier.mechanism === 'bubblewrap') {
      const ok = res.ifs?.join(',') === 'lo' && res.procs !== undefined && res.procs > 0 && res.procs <= 3 && res.outside === 'ENOENT';
      return { ok, detail: `${ok ? 'usable' : 'NOT isolated'} (bubblewrap): ${found}` };
    }
    // sandbox-exec has no network or pid namespace: only the file rule is checked. Unverified on a real Mac.
    const ok = res.outside === 'EPERM' || res.outside === 'EACCES';
    return { ok, detail: `${ok ? 'usable' : 'NOT isolated'} (sandbox-exec, profile UNVERIFIED): ${found}` };
  } finally {
    fs.rmSync(granted, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  }
}
