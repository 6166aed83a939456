// For `doctor`: the Linux mechanisms the lifecycle layer stands on (subreaper, pidfd, cgroup v2,
// and unshare for the pid-reuse tests), each found by using it on a real child.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ESRCH, getChildSubreaper, libcAvailable, pidfdOpen, pidfdSendSignal, setChildSubreaper } from '../../../native-helpers/libc.js';
import { cgroupIsEmpty, cgroupPids, createTreeCgroup, detectCgroupV2, killCgroup, lastCgroupProbeReason, moveIntoCgroup, removeCgroup } from './cgroup.js';
import { detectTreeCpuGroup, v1CpuCgroupOf } from './cpu-group.js';
import { outcomeText, type MechanismFinding, type ProbeChildren } from '../probe-children.js';
import type { SupervisedTree } from '../types.js';

export function probeSubreaper(): MechanismFinding {
  if (process.platform !== 'linux') return { ok: false, detail: `PR_SET_CHILD_SUBREAPER is Linux only, not ${process.platform}` };
  if (!libcAvailable()) return { ok: false, detail: 'needs ffi-rs (see ffi)' };
  const r = setChildSubreaper();
  if (r.value < 0) return { ok: false, detail: `prctl(PR_SET_CHILD_SUBREAPER, 1) failed with errno ${r.errno}` };
  return getChildSubreaper()
    ? { ok: true, detail: 'prctl(PR_SET_CHILD_SUBREAPER) set and read back: setsid escapees re-parent to the supervisor' }
    : { ok: false, detail: 'prctl(PR_SET_CHILD_SUBREAPER) returned 0 but PR_GET_CHILD_SUBREAPER reads 0' };
}

export async function probePidfd(children: ProbeChildren): Promise<MechanismFinding> {
  if (process.platform !== 'linux') return { ok: false, detail: `pidfd is Linux only, not ${process.platform}` };
  if (!libcAvailable()) return { ok: false, detail: 'needs ffi-rs (see ffi)' };
  const tree = await startSleeper(children);
  const pid = tree.pid;
  const open = pidfdOpen(pid);
  if (open.value < 0) return { ok: false, detail: `pidfd_open(${pid}) failed with errno ${open.errno} (kernel older than 5.3?)` };
  const fd = open.value;
  try {
    const live = pidfdSendSignal(fd, 0);
    if (live.value < 0) return { ok: false, detail: `pidfd_send_signal(fd, 0) to a live child failed with errno ${live.errno}` };
    await tree.stop(); // the whole tree is gone and its leader reaped: the pid is free for reuse now.
    const gone = pidfdSendSignal(fd, 0);
    if (gone.value >= 0) return { ok: false, detail: 'pidfd_send_signal succeeded on a reaped child: pidfds do not protect against pid reuse here' };
    if (gone.errno !== ESRCH) return { ok: false, detail: `pidfd_send_signal on a reaped child gave errno ${gone.errno}, expected ESRCH (${ESRCH})` };
    return { ok: true, detail: 'pidfd_open + pidfd_send_signal work; a reaped child gives ESRCH (safe against pid reuse)' };
  } finally {
    fs.closeSync(fd);
  }
}

export async function probeCgroup(children: ProbeChildren): Promise<MechanismFinding> {
  const root = detectCgroupV2();
  if (!root) return { ok: false, detail: lastCgroupProbeReason() ?? 'no cgroup v2' };
  const dir = createTreeCgroup(root, `sp_${randomBytes(12).toString('hex')}`);
  try {
    const tree = await startSleeper(children);
    const pid = tree.pid;
    moveIntoCgroup(dir, pid);
    if (!cgroupPids(dir).includes(pid)) return { ok: false, detail: `moved pid ${pid} into ${dir} but cgroup.procs does not list it` };
    killCgroup(dir);
    const { signal } = await tree.done;
    if (signal !== 'SIGKILL') return { ok: false, detail: `cgroup.kill did not kill the child (it ended with ${signal ?? 'an exit code'})` };
    const deadline = Date.now() + 2_000;
    while (!cgroupIsEmpty(dir)) {
      if (Date.now() > deadline) return { ok: false, detail: `${dir} still populated 2 s after cgroup.kill` };
      await sleep(5);
    }
    return { ok: true, detail: `cgroup.kill killed a child moved into a cgroup under ${root.base}` };
  } finally {
    killCgroup(dir);
    if (!(await removeCgroup(dir, 1_000))) throw new Error(`could not remove probe cgroup ${dir}: still populated`);
  }
}

/**
 * The trees' shared CPU group (decision 66), seen from a real tree: its leader must sit in the
 * group after its entry step. Not a containment claim; without it the supervisor's loop competes
 * with every busy tree on its own.
 */
export async function probeTreeCpuGroup(children: ProbeChildren): Promise<MechanismFinding> {
  const { group, reason } = detectTreeCpuGroup(detectCgroupV2());
  if (!group) return { ok: false, detail: `trees compete with the supervisor one by one: ${reason}` };
  if (group.entryDir === null) return { ok: true, detail: `trees share one CPU share against the supervisor (${group.how})` };
  const tree = await startSleeper(children);
  try {
    const seen = v1CpuCgroupOf(tree.pid);
    const want = `/${path.basename(group.entryDir)}`;
    if (seen === null || !seen.endsWith(want)) return { ok: false, detail: `a tree's leader is in cpu cgroup ${seen ?? '(unreadable)'}, not ${group.entryDir}: ${group.how}, but the entry failed` };
    return { ok: true, detail: `trees share one CPU share against the supervisor (${group.how}); a probe tree's leader was in it` };
  } finally {
    await tree.stop();
  }
}

export async function probeUnshare(children: ProbeChildren): Promise<MechanismFinding> {
  const r = await children.run('unshare', ['-p', '-f', '--mount-proc', 'true']);
  if (r.error === 'ENOENT') return { ok: false, detail: 'unshare not installed (util-linux)' };
  const v = await children.run('unshare', ['--version']);
  const version = /(\d+\.\d+(?:\.\d+)?)/.exec(v.stdout)?.[1];
  const entry: MechanismFinding =
    r.code === 0
      ? { ok: true, detail: 'unshare -p -f --mount-proc true works (private pid namespaces for pid-reuse tests)' }
      : { ok: false, detail: `unshare -p -f --mount-proc failed: ${outcomeText(r)}` };
  if (version) entry.version = version;
  return entry;
}

/**
 * A child that sleeps until it is stopped, returned once its command runs: by then the tree's own
 * cgroup entry (a wrapper that moves itself, then execs) is done and cannot undo a probe's move.
 */
async function startSleeper(children: ProbeChildren): Promise<SupervisedTree> {
  let running!: () => void;
  const ready = new Promise<void>((resolve) => (running = resolve));
  const tree = children.start('/bin/sh', ['-c', 'echo running; exec sleep 30'], undefined, { onStdout: () => running() });
  const endedFirst = await Promise.race([ready.then(() => null), tree.done]);
  if (endedFirst) throw new Error(`the probe child ended before it ran (exit code ${endedFirst.exitCode}, signal ${endedFirst.signal ?? 'none'})`);
  return tree;
}
