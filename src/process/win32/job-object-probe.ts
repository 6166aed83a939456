// For `doctor` on Windows: a Job Object with KILL_ON_JOB_CLOSE holds a real child and
// TerminateJobObject ends it. The child is a supervised tree, so it is in the tree's own job too
// (jobs nest since Windows 8) and the lifecycle layer reaps whatever this probe leaves.
import { allowlistedEnv } from '../child-env.js';
import type { MechanismFinding, ProbeChildren } from '../probe-children.js';

export async function probeJobObjects(children: ProbeChildren): Promise<MechanismFinding> {
  const k32 = await import('../../../native-helpers/kernel32.js');
  if (!k32.kernel32Available()) return { ok: false, detail: 'kernel32 is not reachable through ffi-rs (is its win32 binary installed?)' };
  const job = k32.createJobObject();
  try {
    const tree = children.start(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], allowlistedEnv());
    k32.setKillOnJobClose(job);
    const h = k32.openProcess(tree.pid);
    if (h === null) return { ok: false, detail: 'could not open the probe child' };
    try {
      k32.assignProcessToJobObject(job, h);
      if (!k32.jobProcessIds(job).includes(tree.pid)) return { ok: false, detail: 'AssignProcessToJobObject succeeded but the job does not list the child' };
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
  }
}
