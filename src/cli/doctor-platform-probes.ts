// Doctor probes for the Windows and macOS process layers, each found by trying it.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DoctorEntry } from './doctor.js';

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
