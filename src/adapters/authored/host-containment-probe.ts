// For `doctor`: whether a process-tier tool host is kept from the supervisor here, found by trying
// it: node, launched as a process-tier host is (the OS sandbox with the network, host-launch.ts),
// signals the doctor and reads its /proc entry. Where this fails, process-tier tools are refused.
import { sandboxAvailability } from '../../process/index.js';
import { runNodeInSandbox } from '../../process/sandbox/sandbox-probes.js';
import { howEnded, withScratchDirs, type MechanismFinding, type ProbeChildren } from '../../process/probe-children.js';

// Inside: signal 0 to the doctor's pid (existence and permission, harmless) and read its environ.
const CONTAINMENT_SCRIPT = `
const fs = require('node:fs');
const pid = Number(process.argv[1]);
const out = {};
try { process.kill(pid, 0); out.signal = 'delivered'; } catch (e) { out.signal = e.code || String(e); }
try { fs.readFileSync('/proc/' + pid + '/environ'); out.environ = 'read'; } catch (e) { out.environ = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

export async function probeToolHostContainment(children: ProbeChildren): Promise<MechanismFinding> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `NONE: process-tier tools are refused here (no ${tier.mechanism ?? 'mechanism'}): ${tier.reason}` };
  return withScratchDirs(['host'], async ([granted]) => {
    // The process tier keeps the network, so the probe does too.
    const r = await runNodeInSandbox(children, CONTAINMENT_SCRIPT, String(process.pid), granted!, true);
    let seen: { signal?: string; environ?: string };
    try {
      seen = JSON.parse(r.stdout) as typeof seen;
    } catch {
      return { ok: false, detail: `NOT contained (${tier.mechanism}): node did not run as a process-tier host (${howEnded(r)}): ${r.stderr.split('\n')[0] ?? ''}`.trim() };
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
  });
}
