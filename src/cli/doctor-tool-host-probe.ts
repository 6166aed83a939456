// Doctor: whether a process-tier tool host is kept from the supervisor here, found by trying it:
// node, launched as a process-tier host is (the OS sandbox with the network, host-launch.ts),
// signals the doctor and reads its /proc entry. Where this fails, process-tier tools are refused.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sandboxAvailability, sandboxCommand } from '../process/index.js';
import type { ChildOutcome, DoctorEntry } from './doctor.js';

type RunChild = (command: string, args: string[], env: Record<string, string>) => Promise<ChildOutcome>;

// Inside: signal 0 to the doctor's pid (existence and permission, harmless) and read its environ.
const CONTAINMENT_SCRIPT = `
const fs = require('node:fs');
const pid = Number(process.argv[1]);
const out = {};
try { process.kill(pid, 0); out.signal = 'delivered'; } catch (e) { out.signal = e.code || String(e); }
try { fs.readFileSync('/proc/' + pid + '/environ'); out.environ = 'read'; } catch (e) { out.environ = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

export async function probeToolHostContainment(run: RunChild): Promise<DoctorEntry> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `NONE: process-tier tools are refused here (no ${tier.mechanism ?? 'mechanism'}): ${tier.reason}` };
  const granted = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-host-'));
  try {
    const cmd = sandboxCommand({
      command: process.execPath,
      args: ['-e', CONTAINMENT_SCRIPT, String(process.pid)],
      readOnlyPaths: [granted],
      writablePaths: [],
      cwd: granted,
      network: true,
      env: { PATH: '/usr/bin:/bin' },
    });
    const r = await run(cmd.command, cmd.args, cmd.env);
    let seen: { signal?: string; environ?: string };
    try {
      seen = JSON.parse(r.stdout) as typeof seen;
    } catch {
      const how = r.error ?? (r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`);
      return { ok: false, detail: `NOT contained (${tier.mechanism}): node did not run as a process-tier host (${how}): ${r.stderr.split('\n')[0] ?? ''}`.trim() };
    }
    const found = `signalling the doctor (pid ${process.pid}) gave ${seen.signal}, reading its /proc environ gave ${seen.environ}`;
    if (tier.mechanism === 'bubblewrap') {
      // Its own pid namespace: the doctor's pid does not exist there.
      const ok = seen.signal === 'ESRCH' && seen.environ !== 'read';
      return { ok, detail: `${ok ? 'contained' : 'NOT contained'} (bubblewrap: own pid, user, ipc and mount namespaces): ${found}` };
    }
    // Seatbelt allows signals only within the same sandbox. Unverified on a real Mac.
    const ok = seen.signal === 'EPERM' && seen.environ !== 'read';
    return { ok, detail: `${ok ? 'contained' : 'NOT contained'} (sandbox-exec, profile UNVERIFIED): ${found}` };
  } finally {
    fs.rmSync(granted, { recursive: true, force: true });
  }
}
