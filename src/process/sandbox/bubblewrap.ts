// Linux: the bubblewrap command line for a validated spec. The root is built from the minimum a
// shell or node needs: /usr (and the /bin, /lib… symlinks or directories beside it), the node
// binary's directory, a short list of /etc files, a private /proc, /dev and size-limited /tmp.
import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { within, type HostLayout, type ValidatedSpec } from './spec.js';

/** Top-level entries that merged-/usr Debian makes symlinks into /usr and older systems keep as directories. */
const USR_SIBLINGS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * /etc files a dynamically linked program, a shell or node reads. Not /etc as a whole: it holds
 * shadow, ssh host keys, ssl/private, cron and service configuration.
 */
const ETC_ALWAYS = [
  '/etc/ld.so.cache', // the dynamic loader
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives', // Debian: /usr/bin/awk and friends are symlinks through here
  '/etc/nsswitch.conf', // getpwuid (whoami, os.userInfo) and getaddrinfo
  '/etc/hosts', // "localhost"
  '/etc/host.conf',
  '/etc/gai.conf',
  '/etc/localtime', // time zone
  '/etc/timezone',
];
/** User and group names (no password hashes: those are in shadow); left out when spec.userDatabase is false. */
const ETC_USERS = ['/etc/passwd', '/etc/group'];
/** Only with network: DNS and TLS trust. /etc/ssl/private (keys) is never bound. */
const ETC_NETWORK = ['/etc/resolv.conf', '/etc/ssl/certs', '/etc/ssl/openssl.cnf', '/etc/ca-certificates'];

const RESERVED = ['/proc', '/sys', '/dev'];

interface LinuxRoot {
  layout: HostLayout;
  /** bwrap arguments that build the read-only system part of the root. */
  systemArgs: string[];
}

let cachedRoot: LinuxRoot | undefined;

export function linuxRoot(): LinuxRoot {
  if (cachedRoot) return cachedRoot;
  const systemArgs = ['--ro-bind', '/usr', '/usr'];
  const visible = ['/usr'];
  for (const dir of USR_SIBLINGS) {
    const kind = entryKind(dir);
    if (kind === 'symlink') {
      systemArgs.push('--symlink', readlinkSync(dir), dir);
      visible.push(dir);
    } else if (kind === 'dir') {
      systemArgs.push('--ro-bind', dir, dir);
      visible.push(dir);
    }
  }
  // nvm, a tarball under /opt, a CI tool cache: node's own directory, read-only.
  const nodeDir = dirname(realpathSync(process.execPath));
  if (!visible.some((root) => within(nodeDir, root))) {
    systemArgs.push('--ro-bind', nodeDir, nodeDir);
    visible.push(nodeDir);
  }
  cachedRoot = {
    systemArgs,
    layout: { visibleRoots: visible, noWriteRoots: [...visible, '/etc'], reserved: RESERVED },
  };
  return cachedRoot;
}

/**
 * The bwrap arguments for a validated spec. No --clearenv/--setenv: the environment reaches the
 * sandbox through bwrap's own environment (see sandbox-command.ts), because --setenv would put
 * every value, secrets included, into bwrap's argv, which any local user can read in
 * /proc/<pid>/cmdline; /proc/<pid>/environ is readable by the owner only.
 */
export function bubblewrapArgs(spec: ValidatedSpec): string[] {
  const root = linuxRoot();
  const args = [
    // Kill the sandbox when bwrap (or its parent, the supervisor) dies; with its own pid
    // namespace, the death of the namespace's pid 1 ends every process inside.
    '--die-with-parent',
    '--unshare-all', // user, ipc, pid, net, uts, cgroup
    ...(spec.network ? ['--share-net'] : []),
    // An explicit user namespace, so the sandbox can be forbidden to create more (less kernel surface).
    '--unshare-user',
    '--disable-userns',
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    ...root.systemArgs,
  ];
  const etc = [...ETC_ALWAYS, ...(spec.userDatabase ? ETC_USERS : []), ...(spec.network ? ETC_NETWORK : [])];
  for (const f of etc) args.push('--ro-bind-try', f, f);
  args.push('--proc', '/proc', '--dev', '/dev', '--size', String(spec.tmpBytes), '--tmpfs', '/tmp');
  // Shallow to deep: a nested bind lands on top of its parent (a read-only .git inside a writable workspace).
  for (const b of spec.binds) args.push(b.writable ? '--bind' : '--ro-bind', b.path, b.path);
  // Masks go on top of every bind, so a secret file or the state dir inside the workspace is hidden.
  args.push(...maskArgs(spec, [...root.layout.visibleRoots, ...etc, ...spec.binds.map((b) => b.path)]));
  // bwrap builds the root on a tmpfs with no size limit: once every mount point exists, make it
  // read-only, so /etc, / and the parents of the binds cannot be filled (the mounts keep their flags).
  args.push('--remount-ro', '/');
  args.push('--chdir', spec.cwd, '--', spec.command, ...spec.args);
  return args;
}

/**
 * A visible file becomes the host's /dev/null on a nodev mount (opening it fails with EACCES), a
 * visible directory an empty read-only tmpfs.
 * Only paths that exist and lie under something the sandbox shows: bwrap cannot create a mount
 * point inside a read-only bind, and a path that is not shown needs no mask.
 */
function maskArgs(spec: ValidatedSpec, shown: readonly string[]): string[] {
  const args: string[] = [];
  for (const p of spec.masks) {
    if (!shown.some((root) => within(p, root))) continue;
    const kind = maskKind(p);
    if (kind === 'file') args.push('--ro-bind', '/dev/null', p);
    else if (kind === 'dir') args.push('--perms', '0500', '--tmpfs', p, '--remount-ro', p);
  }
  return args;
}

function maskKind(p: string): 'file' | 'dir' | null {
  try {
    const st = lstatSync(p);
    // A symlink is resolved by the kernel inside the view; its target (also in masks) is what is hidden.
    return st.isDirectory() ? 'dir' : st.isSymbolicLink() ? null : 'file';
  } catch {
    return null;
  }
}

function entryKind(p: string): 'symlink' | 'dir' | null {
  try {
    const st = lstatSync(p);
    return st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : null;
  } catch {
    return null;
  }
}
