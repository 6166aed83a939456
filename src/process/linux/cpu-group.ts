// One CPU scheduling group for every supervised tree (decision 66). With
// kernel.sched_autogroup_enabled, each tree (a session of its own) is an autogroup weighted like
// the supervisor's: 200 busy trees leave the supervisor's event loop 1/200 of the machine, and it
// waits ~slice x 200 for a CPU at every wake-up. In one cgroup of the cpu controller the trees
// together weigh what the supervisor weighs, and autogroups no longer apply to them. Scheduling
// only: nothing here is a containment claim, so a tree that cannot enter the group still runs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { CGROUP_BASE_NAME, parseMountinfo, readSelfCgroupFiles, type CgroupRoot } from './cgroup.js';

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

/** `<prefix><pid>`: the group of the supervisor with that pid. */
const GROUP_PREFIX = `${CGROUP_BASE_NAME}-trees-`;

let cached: { group: TreeCpuGroup | null; reason: string } | undefined;

/** Finds (and makes) the trees' CPU group; cached; never throws. */
export function detectTreeCpuGroup(v2: CgroupRoot | null, options: { refresh?: boolean } = {}): { group: TreeCpuGroup | null; reason: string } {
  if (cached && !options.refresh) return cached;
  cached = find(v2);
  return cached;
}

/** The groups this process removes at exit (if empty by then). */
const removedAtExit = new Set<string>();

function find(v2: CgroupRoot | null): { group: TreeCpuGroup | null; reason: string } {
  if (process.env[TREE_CPU_GROUP_ENV] === '0') return { group: null, reason: `turned off by ${TREE_CPU_GROUP_ENV}=0` };
  if (!v2) return { group: null, reason: 'needs the per-tree cgroups (cgroup v2), whose entry step also enters this group' };
  if (fs.existsSync(path.join(v2.base, 'cpu.weight'))) {
    return { group: { entryDir: null, how: `cgroup v2 cpu controller: every tree cgroup is under ${v2.base}, which has one cpu.weight` }, reason: 'ok' };
  }
  const files = readSelfCgroupFiles();
  if ('error' in files) return { group: null, reason: files.error };
  const { selfCgroup, mountinfo } = files;
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
  // One group per supervisor process (named by its pid) beside the supervisor's own cgroup, so each
  // supervisor's trees together weigh one share, however many supervisors run.
  const parent = path.join(mount.mountPoint, rel);
  const dir = path.join(parent, `${GROUP_PREFIX}${process.pid}`);
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
  removeGroupsOfDeadSupervisors(parent);
  // Empty once every tree is gone; an rmdir of a populated group fails and changes nothing. Once
  // per group, however often the doctor refreshes.
  if (!removedAtExit.has(dir)) {
    removedAtExit.add(dir);
    process.once('exit', () => removeEmptyGroup(dir));
  }
  return { group: { entryDir: dir, how: `cgroup v1 cpu controller: this supervisor's trees enter ${dir}` }, reason: 'ok' };
}

/** Groups left by supervisors that died (their trees are reconciled by the next start, not here). */
function removeGroupsOfDeadSupervisors(parent: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = name.startsWith(GROUP_PREFIX) ? Number(name.slice(GROUP_PREFIX.length)) : NaN;
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || pidAlive(pid)) continue;
    removeEmptyGroup(path.join(parent, name));
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function removeEmptyGroup(dir: string): void {
  try {
    fs.rmdirSync(dir);
  } catch {
    // Still populated, or gone already.
  }
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
  const m = parseMountinfo(mountinfo).find((e) => e.fstype === 'cgroup' && e.superOptions.includes('cpu') && !e.options.includes('ro'));
  return m ? { root: m.root, mountPoint: m.mountPoint } : null;
}

/** The v1 cpu cgroup `pid` is in, or null (no v1 cpu hierarchy, or the process is gone). */
export function v1CpuCgroupOf(pid: number): string | null {
  try {
    return ownV1CpuPath(fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
  } catch {
    return null;
  }
}
