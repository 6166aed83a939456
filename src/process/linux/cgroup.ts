// cgroup v2 per-tree control: one cgroup per supervised tree, emptied with cgroup.kill.
// No controllers are enabled anywhere: only cgroup.procs, cgroup.events and cgroup.kill are used,
// so the v2 "no internal processes" rule never applies (it only concerns subtree_control).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export interface CgroupRoot {
  /** Where the cgroup2 hierarchy is mounted, e.g. /sys/fs/cgroup or /sys/fs/cgroup/unified. */
  mountPoint: string;
  /** The supervisor's own cgroup, absolute path on disk. */
  ownCgroup: string;
  /** Parent of every tree cgroup: `<ownCgroup>/isolation-supervisor`, shared so a restarted supervisor finds leftovers. */
  base: string;
}

export class CgroupError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CgroupError';
    this.code = code;
  }
}

export const CGROUP_BASE_NAME = 'isolation-supervisor';
const SPAWN_ID_RE = /^sp_[0-9a-f]{24}$/;

let cached: { root: CgroupRoot | null } | undefined;
let lastReason: string | null = null;

/** Why the last detectCgroupV2() gave what it gave (null before the first probe). */
export function lastCgroupProbeReason(): string | null {
  return lastReason;
}

/** Finds a writable cgroup v2 with cgroup.kill by trying it; cached; never throws. */
export function detectCgroupV2(options: { refresh?: boolean } = {}): CgroupRoot | null {
  if (cached && !options.refresh) return cached.root;
  let root: CgroupRoot | null = null;
  try {
    root = probe();
  } catch (err) {
    // probe() reports expected failures itself; this is for the unexpected ones.
    lastReason = `cgroup v2 probe failed unexpectedly: ${errText(err)}`;
    root = null;
  }
  cached = { root };
  return root;
}

/** This process's /proc/self/cgroup and mountinfo texts, or why they cannot be read. */
export function readSelfCgroupFiles(): { selfCgroup: string; mountinfo: string } | { error: string } {
  try {
    return { selfCgroup: fs.readFileSync('/proc/self/cgroup', 'utf8'), mountinfo: fs.readFileSync('/proc/self/mountinfo', 'utf8') };
  } catch (err) {
    return { error: `cannot read /proc/self/cgroup or /proc/self/mountinfo: ${errText(err)}` };
  }
}

function probe(): CgroupRoot | null {
  if (process.platform !== 'linux') return fail(`cgroups exist only on Linux, not ${process.platform}`);
  const files = readSelfCgroupFiles();
  if ('error' in files) return fail(files.error);
  const { selfCgroup, mountinfo } = files;
  const ownLine = selfCgroup.split('\n').find((l) => l.startsWith('0::'));
  if (ownLine === undefined) return fail('/proc/self/cgroup has no "0::" line: this process is not in a cgroup v2 hierarchy');
  const ownRel = ownLine.slice(3).trim();
  if (!ownRel.startsWith('/') || ownRel.endsWith(' (deleted)')) {
    return fail(`/proc/self/cgroup gives an unusable cgroup v2 path "${ownRel}"`);
  }
  const mounts = parseCgroup2Mounts(mountinfo);
  if (mounts.length === 0) return fail('no cgroup2 filesystem in /proc/self/mountinfo (cgroup v1 only, or none mounted)');
  // The mount's root (field 4) is the part of the hierarchy it shows; our path must lie under it.
  const mount = mounts.find((m) => m.root === '/' || ownRel === m.root || ownRel.startsWith(`${m.root}/`));
  if (!mount) {
    return fail(`own cgroup ${ownRel} is outside every cgroup2 mount (${mounts.map((m) => `${m.mountPoint} root ${m.root}`).join(', ')})`);
  }
  const inside = mount.root === '/' ? ownRel : ownRel.slice(mount.root.length) || '/';
  const ownCgroup = path.join(mount.mountPoint, inside);
  if (!fs.existsSync(path.join(ownCgroup, 'cgroup.procs'))) {
    return fail(`own cgroup directory ${ownCgroup} has no cgroup.procs (is the cgroup2 mount from another namespace?)`);
  }
  const base = path.join(ownCgroup, CGROUP_BASE_NAME);
  try {
    fs.mkdirSync(base);
  } catch (err) {
    if (code(err) !== 'EEXIST') {
      const ro = mount.readOnly ? ' (mounted read-only)' : '';
      return fail(`cannot create ${base}${ro}: ${errText(err)}`);
    }
  }
  const probeDir = path.join(base, `probe-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    fs.mkdirSync(probeDir);
  } catch (err) {
    return fail(`cannot create a probe cgroup ${probeDir}: ${errText(err)}`);
  }
  try {
    if (!fs.existsSync(path.join(probeDir, 'cgroup.kill'))) {
      return fail(`cgroup.kill missing in ${probeDir}: the kernel is older than 5.14`);
    }
    try {
      fs.accessSync(path.join(probeDir, 'cgroup.procs'), fs.constants.W_OK);
    } catch (err) {
      return fail(`cannot write ${probeDir}/cgroup.procs: ${errText(err)}`);
    }
  } finally {
    try {
      fs.rmdirSync(probeDir);
    } catch {
      // An empty probe cgroup always goes; if not, it is harmless and named after our pid.
    }
  }
  lastReason = `writable cgroup v2 with cgroup.kill at ${base}`;
  return { mountPoint: mount.mountPoint, ownCgroup, base };
}

function fail(reason: string): null {
  lastReason = reason;
  return null;
}

/** One line of /proc/self/mountinfo, the fields the cgroup code reads. */
export interface MountEntry {
  fstype: string;
  root: string;
  mountPoint: string;
  /** Per-mount options (`ro`, `nosuid`, ...). */
  options: string[];
  /** The filesystem's own options (for cgroup v1: the controllers, e.g. `cpu,cpuacct`). */
  superOptions: string[];
}

/** The mounts of a mountinfo text (the cgroup2 tree here, the v1 cpu hierarchy in cpu-group.ts). */
export function parseMountinfo(mountinfo: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of mountinfo.split('\n')) {
    // Fields: id parent maj:min root mountpoint options [optional...] - fstype source superoptions
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const pre = line.slice(0, sep).split(' ');
    const post = line.slice(sep + 3).split(' ');
    if (pre.length < 6) continue;
    out.push({
      fstype: post[0] ?? '',
      root: unescapeMount(pre[3] ?? '/'),
      mountPoint: unescapeMount(pre[4] ?? ''),
      options: (pre[5] ?? '').split(','),
      superOptions: (post[2] ?? '').split(','),
    });
  }
  return out;
}

interface Cgroup2Mount {
  root: string;
  mountPoint: string;
  readOnly: boolean;
}

function parseCgroup2Mounts(mountinfo: string): Cgroup2Mount[] {
  return parseMountinfo(mountinfo)
    .filter((m) => m.fstype === 'cgroup2')
    .map((m) => ({ root: m.root, mountPoint: m.mountPoint, readOnly: m.options.includes('ro') }));
}

// mountinfo writes space, tab, newline and backslash as octal escapes.
export function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Makes `<root.base>/<spawnId>` for one tree; the spawn id must match /^sp_[0-9a-f]{24}$/. */
export function createTreeCgroup(root: CgroupRoot, spawnId: string): string {
  const dir = treeCgroupPath(root, spawnId);
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    throw createFailed(dir, err);
  }
  return dir;
}

/** createTreeCgroup with the mkdir on the threadpool, for a path treeCgroupPath gave. */
export async function createTreeCgroupAsync(dir: string): Promise<void> {
  checkDir(dir, 'createTreeCgroupAsync');
  try {
    await fs.promises.mkdir(dir);
  } catch (err) {
    throw createFailed(dir, err);
  }
}

/** Where the tree's cgroup is (or will be made); the spawn id must match /^sp_[0-9a-f]{24}$/. */
export function treeCgroupPath(root: CgroupRoot, spawnId: string): string {
  if (!SPAWN_ID_RE.test(spawnId)) {
    throw new CgroupError('CGROUP_BAD_SPAWN_ID', `createTreeCgroup: spawn id ${JSON.stringify(spawnId)} does not match /^sp_[0-9a-f]{24}$/; pass the id the process registry minted`);
  }
  return path.join(root.base, spawnId);
}

function createFailed(dir: string, err: unknown): CgroupError {
  if (code(err) === 'EEXIST') {
    return new CgroupError('CGROUP_EXISTS', `createTreeCgroup: ${dir} already exists; spawn ids must be unique (a leftover from a crashed supervisor is removed by recovery, not reused)`, { cause: err });
  }
  return new CgroupError('CGROUP_CREATE_FAILED', `createTreeCgroup: cannot create ${dir}: ${errText(err)}`, { cause: err });
}

/** Moves one process (all its threads) into the cgroup at `dir`. */
export function moveIntoCgroup(dir: string, pid: number): void {
  checkDir(dir, 'moveIntoCgroup');
  if (!Number.isInteger(pid) || pid <= 0) throw new RangeError(`moveIntoCgroup: refusing pid ${pid}; pass one positive pid`);
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.procs'), `${pid}\n`);
  } catch (err) {
    throw new CgroupError('CGROUP_MOVE_FAILED', `moveIntoCgroup: cannot write pid ${pid} to ${dir}/cgroup.procs: ${errText(err)}`, { cause: err });
  }
}

/** Pids in the cgroup and in any cgroup a process inside made below it; [] once it is gone. */
export function cgroupPids(dir: string): number[] {
  checkDir(dir, 'cgroupPids');
  const pids: number[] = [];
  const walk = (d: string): void => {
    let text: string;
    try {
      text = fs.readFileSync(path.join(d, 'cgroup.procs'), 'utf8');
    } catch (err) {
      if (code(err) === 'ENOENT') return;
      throw err;
    }
    for (const l of text.split('\n')) if (l.trim() !== '') pids.push(Number(l));
    for (const sub of subCgroups(d)) walk(sub);
  };
  walk(dir);
  return pids;
}

/** Pids directly in the cgroup (not in cgroups below it); [] when it is gone or unreadable. */
export function cgroupProcs(dir: string): number[] {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const l of text.split('\n')) if (l !== '') pids.push(Number(l));
  return pids;
}

/** SIGKILLs every process in the cgroup and below it, escapees included; no-op once it is gone. */
export function killCgroup(dir: string): void {
  checkDir(dir, 'killCgroup');
  try {
    fs.writeFileSync(path.join(dir, 'cgroup.kill'), '1');
  } catch (err) {
    if (code(err) === 'ENOENT' && !fs.existsSync(dir)) return;
    throw new CgroupError('CGROUP_KILL_FAILED', `killCgroup: cannot write 1 to ${dir}/cgroup.kill: ${errText(err)}`, { cause: err });
  }
}

/** True when no live process is left in the cgroup or below it (cgroup.events "populated 0"), or it is gone. */
export function cgroupIsEmpty(dir: string): boolean {
  checkDir(dir, 'cgroupIsEmpty');
  let text: string;
  try {
    text = fs.readFileSync(path.join(dir, 'cgroup.events'), 'utf8');
  } catch (err) {
    if (code(err) === 'ENOENT') return true;
    throw err;
  }
  const m = /^populated (\d)$/m.exec(text);
  return m ? m[1] === '0' : false;
}

/**
 * Removes the cgroup (and any cgroups made inside it), retrying while it is still populated.
 * Resolves true when it is gone, false when it was still busy after `timeoutMs`; ENOENT is success.
 */
export async function removeCgroup(dir: string, timeoutMs = 1_000): Promise<boolean> {
  checkDir(dir, 'removeCgroup');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await rmdirTree(dir);
      return true;
    } catch (err) {
      const c = code(err);
      if (c === 'ENOENT') return true;
      if (c !== 'EBUSY' && c !== 'ENOTEMPTY') {
        throw new CgroupError('CGROUP_REMOVE_FAILED', `removeCgroup: cannot remove ${dir}: ${errText(err)}`, { cause: err });
      }
      if (Date.now() >= deadline) return false;
      await sleep(10);
    }
  }
}

// Children first: rmdir of a cgroup fails while it has child cgroups. On the threadpool: an rmdir
// in a cgroup filesystem waits for the kernel's cgroup_mutex (see prepareSpawn's offLoop).
async function rmdirTree(dir: string): Promise<void> {
  for (const sub of await subCgroupsAsync(dir)) await rmdirTree(sub);
  await fs.promises.rmdir(dir);
}

async function subCgroupsAsync(dir: string): Promise<string[]> {
  try {
    const entries = await fs.promises.readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
  } catch (err) {
    if (code(err) === 'ENOENT') return [];
    throw err;
  }
}

function subCgroups(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    if (code(err) === 'ENOENT') return [];
    throw err;
  }
  return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
}

// The tree's cgroup first (a failure there stops the tree: it would be unkillable by cgroup.kill),
// then, if one is named, the trees' shared CPU group (scheduling only: a failure is ignored, and
// doctor reports the group). The tree cgroup is entered while the leader still has a fresh share
// of its own, since the write holds the kernel's cgroup_mutex, which the supervisor may wait for.
const ENTRY_SCRIPT =
  'echo $$ > "$1/cgroup.procs" || { echo "isolation-supervisor: could not enter cgroup $1" >&2; exit 125; }; ' +
  '[ -z "$2" ] || { echo $$ > "$2/cgroup.procs"; } 2>/dev/null; shift 2; exec "$@"';

/**
 * Wraps a command so it enters the cgroup (and the trees' CPU group, when given) before it runs:
 * /bin/sh writes its own pid, then execs the target (same pid). Everything is passed as positional
 * arguments, never put into the script. Exit status 125 means the cgroup could not be entered and
 * the target never ran.
 */
export function cgroupEntryWrapper(dir: string, command: string, args: readonly string[], cpuGroup: string | null = null): { command: string; args: string[] } {
  checkDir(dir, 'cgroupEntryWrapper');
  if (cpuGroup !== null) checkDir(cpuGroup, 'cgroupEntryWrapper');
  if (command === '' || command.includes('\0') || args.some((a) => a.includes('\0'))) {
    throw new CgroupError('CGROUP_BAD_COMMAND', 'cgroupEntryWrapper: the command must be non-empty and no argument may contain a NUL byte');
  }
  return { command: '/bin/sh', args: ['-c', ENTRY_SCRIPT, 'sh', dir, cpuGroup ?? '', command, ...args] };
}

function checkDir(dir: string, fn: string): void {
  if (typeof dir !== 'string' || !path.isAbsolute(dir) || dir.includes('\0')) {
    throw new CgroupError('CGROUP_BAD_PATH', `${fn}: ${JSON.stringify(dir)} is not an absolute cgroup directory path; pass the path createTreeCgroup returned`);
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
