// One CPU scheduling group for every supervised tree (decision 66). With
// kernel.sched_autogroup_enabled, each tree (a session of its own) is an autogroup weighted like
// the supervisor's: 200 busy trees leave the supervisor's event loop 1/200 of the machine, and it
// waits ~slice x 200 for a CPU at every wake-up. In one cgroup of the cpu controller the trees
// together weigh what the supervisor weighs, and autogroups no longer apply to them. Scheduling
// only: nothing here is a containment claim, so a tree that cannot enter the group still runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CGROUP_BASE_NAME, unescapeMount, type CgroupRoot } from './cgroup.js';

export interface TreeCpuGroup {
  /**
   * The cgroup each leader writes itself into after its tree cgroup, or null when the tree
   * cgroups already share one cpu weight (cgroup v2 with the cpu controller on their parent).
   */
  entryDir: string | null;
  /** What holds the grouping, for doctor. */
  how: string;
}

/** SUPERVISOR_TREE_CPU_GROUP=0 turns the grouping off (to measure against it). */
export const TREE_CPU_GROUP_ENV = 'SUPERVISOR_TREE_CPU_GROUP';

let cached: { group: TreeCpuGroup | null; reason: string } | undefined;

/** Finds (and makes) the trees' CPU group; cached; never throws. */
export function detectTreeCpuGroup(v2: CgroupRoot | null, options: { refresh?: boolean } = {}): { group: TreeCpuGroup | null; reason: string } {
  if (cached && !options.refresh) return cached;
  cached = find(v2);
  return cached;
}

function find(v2: CgroupRoot | null): { group: TreeCpuGroup | null; reason: string } {
  if (process.env[TREE_CPU_GROUP_ENV] === '0') return { group: null, reason: `turned off by ${TREE_CPU_GROUP_ENV}=0` };
  if (!v2) return { group: null, reason: 'needs the per-tree cgroups (cgroup v2), whose entry step also enters this group' };
  if (fs.existsSync(path.join(v2.base, 'cpu.weight'))) {
    return { group: { entryDir: null, how: `cgroup v2 cpu controller: every tree cgroup is under ${v2.base}, which has one cpu.weight` }, reason: 'ok' };
  }
  let selfCgroup: string;
  let mountinfo: string;
  try {
    selfCgroup = fs.readFileSync('/proc/self/cgroup', 'utf8');
    mountinfo = fs.readFileSync('/proc/self/mountinfo', 'utf8');
  } catch (err) {
    return { group: null, reason: `cannot read /proc/self/cgroup or mountinfo: ${(err as Error).message}` };
  }
  const own = ownV1CpuPath(selfCgroup);
  const mount = v1CpuMount(mountinfo);
  if (own === null || mount === null) {
    return {
      group: null,
      reason: `the cpu controller is not enabled above the tree cgroups (${v2.base} has no cpu.weight) and no cgroup v1 cpu hierarchy is mounted; trees compete one by one (enable it with: echo +cpu > ${path.dirname(v2.base)}/cgroup.subtree_control, where that cgroup holds no process)`,
    };
  }
  const rel = path.posix.relative(mount.root, own);
  if (rel.startsWith('..')) return { group: null, reason: `own cgroup v1 cpu path ${own} is outside the mount of ${mount.mountPoint} (root ${mount.root})` };
  const dir = path.join(mount.mountPoint, rel, CGROUP_BASE_NAME);
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return { group: null, reason: `cannot create ${dir}: ${(err as Error).message}` };
  }
  try {
    fs.accessSync(path.join(dir, 'cgroup.procs'), fs.constants.W_OK);
  } catch (err) {
    return { group: null, reason: `cannot write ${dir}/cgroup.procs: ${(err as Error).message}` };
  }
  return { group: { entryDir: dir, how: `cgroup v1 cpu controller: every tree enters ${dir}` }, reason: 'ok' };
}

/** The path of this process's cgroup in the v1 hierarchy that has the cpu controller, if any. */
function ownV1CpuPath(selfCgroup: string): string | null {
  for (const line of selfCgroup.split('\n')) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (m && m[1]!.split(',').includes('cpu')) return m[2]!;
  }
  return null;
}

function v1CpuMount(mountinfo: string): { root: string; mountPoint: string } | null {
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const pre = line.slice(0, sep).split(' ');
    const post = line.slice(sep + 3).split(' ');
    if (post[0] !== 'cgroup' || pre.length < 6) continue;
    if (!(post[2] ?? '').split(',').includes('cpu')) continue;
    if ((pre[5] ?? '').split(',').includes('ro')) continue;
    return { root: unescapeMount(pre[3] ?? '/'), mountPoint: unescapeMount(pre[4] ?? '') };
  }
  return null;
}

/** The v1 cpu cgroup `pid` is in, or null (no v1 cpu hierarchy, or the process is gone). */
export function v1CpuCgroupOf(pid: number): string | null {
  try {
    return ownV1CpuPath(fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
  } catch {
    return null;
  }
}
