// How a tool host is started: `node` under the permission model, reading only the host's own
// compiled files, the channel's one dependency, the tool's directory (and where its node_modules
// really are) and the paths the manifest asks for; no writes, no child processes, no workers.
// Both tiers run it inside the OS sandbox (decision 0054): its own pid, user, ipc and mount
// namespaces, so the kernel, not the permission model, keeps it from the supervisor's processes
// and from any file it was not given (the permission model follows symlinks out of a grant).
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowlistedEnv } from '../../process/child-env.js';
import { sandboxCommand } from '../../process/index.js';
import type { ToolHostConfig } from './host-config.js';
import type { HostLaunch } from './host-tree.js';

export const HOST_ENTRY = fileURLToPath(new URL('./entry/tool-host-entry.js', import.meta.url));
const HOST_DIRS = [dirname(HOST_ENTRY), fileURLToPath(new URL('../../ipc/', import.meta.url))];

/** What one pool's workers are started with; equal specs share a pool. */
export interface HostSpec {
  toolName: string;
  /** Real path of the tool directory. */
  toolDir: string;
  /** Absolute path of the entry module, inside toolDir. */
  entryPath: string;
  entrySha256: string;
  /** Absolute paths the tool may read besides its own directory. */
  readPaths: readonly string[];
  /** The core's workspace (isolation.read hints with root: workspace resolve below it; it is not bound). */
  workspace: string;
  /** process: the OS sandbox with the network; sandbox: the same without it unless `network`. */
  tier: 'process' | 'sandbox';
  /** Sandbox tier: whether the host keeps the network (its own empty namespace otherwise). */
  network: boolean;
}

let hostReads: string[] | null = null;

/** The host's own files and zod (the channel's schemas), as the ESM resolver will walk them. */
function hostReadPaths(): string[] {
  if (hostReads) return hostReads;
  const out = HOST_DIRS.map((d) => withSlash(d));
  const zodEntry = fileURLToPath(import.meta.resolve('zod'));
  let pkg = dirname(zodEntry);
  while (!existsSync(join(pkg, 'package.json')) && dirname(pkg) !== pkg) pkg = dirname(pkg);
  out.push(withSlash(pkg));
  // The resolver realpaths every component from where it found the package: a symlinked
  // node_modules on the way must itself be readable (its target is granted above).
  for (let d = HOST_DIRS[1]!; dirname(d) !== d; d = dirname(d)) {
    const nm = join(d, 'node_modules');
    if (existsSync(nm)) {
      if (lstatSync(nm).isSymbolicLink()) out.push(nm);
      break;
    }
  }
  hostReads = out;
  return out;
}

function withSlash(p: string): string {
  return p.endsWith(sep) ? p : p + sep;
}

export function isInsideDir(dir: string, p: string): boolean {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** The node arguments for a host of `spec`. */
export function hostArgs(spec: HostSpec, config: ToolHostConfig): string[] {
  const reads = [...hostReadPaths(), withSlash(spec.toolDir)];
  const nm = join(spec.toolDir, 'node_modules');
  try {
    if (lstatSync(nm).isSymbolicLink()) reads.push(withSlash(realpathSync(nm)));
  } catch {
    // no node_modules of its own
  }
  for (const p of spec.readPaths) reads.push(p);
  return [
    '--experimental-permission',
    '--disable-warning=ExperimentalWarning',
    ...[...new Set(reads)].map((r) => `--allow-fs-read=${r}`),
    `--max-old-space-size=${config.heapMb}`,
    HOST_ENTRY,
    `--max-frame-bytes=${config.maxFrameBytes}`,
    `--max-result-bytes=${config.maxResultBytes}`,
  ];
}

/**
 * Everything a host reads, for the sandbox's read-only binds (the permission model still applies
 * inside): its own files, the tool's directory, its dependencies and isolation.read; not the
 * workspace, so a symlink or a file the tool was not given does not exist inside.
 */
export function hostBindPaths(spec: HostSpec): string[] {
  const out = [...hostReadPaths(), spec.toolDir, ...spec.readPaths].map((p) => (p.length > 1 && p.endsWith(sep) ? p.slice(0, -1) : p));
  const nm = join(spec.toolDir, 'node_modules');
  try {
    if (lstatSync(nm).isSymbolicLink()) out.push(realpathSync(nm));
  } catch {
    // no node_modules of its own
  }
  return [...new Set(out)];
}

/**
 * The launch of a host of `spec`, both tiers: bubblewrap (Linux) or sandbox-exec (macOS) around
 * the permission-model node. The process tier keeps the network; the sandbox tier keeps it only
 * when granted. cwd is the tool's own directory (bound read-only). Throws
 * SandboxUnavailableError where no mechanism works: a host is never started uncontained.
 */
export function hostLaunch(spec: HostSpec, config: ToolHostConfig, stateDir: string): HostLaunch {
  return sandboxCommand({
    command: process.execPath,
    args: hostArgs(spec, config),
    readOnlyPaths: hostBindPaths(spec),
    writablePaths: [],
    cwd: spec.toolDir,
    network: spec.tier === 'process' ? true : spec.network,
    env: allowlistedEnv(),
    protectedPaths: [stateDir],
  });
}

/** A manifest's read hints as absolute paths (root 'tool' or 'workspace'); refuses escapes. */
export function resolveReadHints(hints: readonly { root: 'tool' | 'workspace'; path: string }[], toolDir: string, workspace: string): string[] {
  return hints.map((h) => {
    const base = h.root === 'tool' ? toolDir : workspace;
    const p = resolve(base, h.path);
    if (!isInsideDir(base, p)) throw new Error(`isolation.read '${h.path}' leaves its root ${h.root}; name a path below it`);
    return p;
  });
}
