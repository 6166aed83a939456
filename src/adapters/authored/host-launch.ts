// How a tool host is started: `node` under the permission model, reading only the host's own
// compiled files, the channel's one dependency, the tool's directory (and where its node_modules
// really are) and the paths the manifest asks for; no writes, no child processes, no workers.
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolHostConfig } from './host-config.js';

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
  /** The child's cwd. */
  workspace: string;
  /** process: the permission model alone; sandbox: the same host inside the OS sandbox. */
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

/** Everything a host reads, for the sandbox's read-only binds (the permission model still applies inside). */
export function hostBindPaths(spec: HostSpec): string[] {
  const out = [...hostReadPaths(), spec.toolDir, spec.workspace, ...spec.readPaths].map((p) => (p.length > 1 && p.endsWith(sep) ? p.slice(0, -1) : p));
  const nm = join(spec.toolDir, 'node_modules');
  try {
    if (lstatSync(nm).isSymbolicLink()) out.push(realpathSync(nm));
  } catch {
    // no node_modules of its own
  }
  return [...new Set(out)];
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
