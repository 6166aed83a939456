// The sandbox spec and its validation, shared by every mechanism. Validation happens before any
// process exists: a spec that would expose too much, or fail inside the sandbox with an opaque
// error, is refused here with the field and the fix.
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve, sep } from 'node:path';
import { resolveCommand } from '../resolve-command.js';
import { SandboxSpecError } from './errors.js';

export interface SandboxSpec {
  command: string;
  args: readonly string[];
  /** Bound read-only at the same absolute path. */
  readOnlyPaths: readonly string[];
  /** Bound read-write at the same absolute path. */
  writablePaths: readonly string[];
  /** Must be inside one of the bound paths. */
  cwd: string;
  /** false: own network namespace with no interface but lo. */
  network: boolean;
  /** The sandboxed process's whole environment (SUPERVISOR_SPAWN_ID is added by spawnTree). */
  env: Readonly<Record<string, string>>;
  /**
   * Paths the sandbox must never see, e.g. the supervisor's state dir: a bound path equal to one,
   * inside one, or containing one is refused. Compared after resolving symlinks.
   */
  protectedPaths?: readonly string[];
  /** Size limit of the sandbox's private /tmp (Linux), bytes. Default 64 MiB. */
  tmpBytes?: number;
  /**
   * Paths hidden inside the sandbox wherever they would otherwise be visible (a secret source, the
   * state dir inside a bound workspace): a file cannot be opened, a directory is an empty one.
   * Unlike protectedPaths, a bind that contains one is allowed. Missing paths are skipped.
   */
  maskPaths?: readonly string[];
  /**
   * Directories no bind may equal or contain, e.g. the user's home: a bind inside one (a project
   * under ~) is fine, a bind of the home itself or of a parent of it would show all of it (keys,
   * tokens, shell history). Compared before and after resolving symlinks. See `hiddenRootShown`.
   */
  hiddenRoots?: readonly string[];
  /** Linux: bind /etc/passwd and /etc/group (user names for ls -l, whoami). Default true. */
  userDatabase?: boolean;
}

/** What to pass to ProcessSupervisor.spawnTree: `{ command, args, env, cwd }`. */
export interface SandboxedCommand {
  command: string;
  args: string[];
  /** The wrapper's own environment; the sandboxed process gets spec.env (plus the spawn marker). */
  env: Record<string, string>;
  /** Where to start the wrapper: spec.cwd (needed on macOS, harmless on Linux). */
  cwd: string;
}

export interface Bind {
  path: string;
  writable: boolean;
}

export interface ValidatedSpec {
  /** Absolute path of the program, checked to be visible inside the sandbox. */
  command: string;
  args: string[];
  /** Sorted shallow to deep, so a nested bind is mounted on top of its parent. */
  binds: Bind[];
  cwd: string;
  network: boolean;
  env: Record<string, string>;
  tmpBytes: number;
  /** Absolute, normal paths to hide (see SandboxSpec.maskPaths); the mechanism hides the visible ones. */
  masks: string[];
  userDatabase: boolean;
}

/** What a mechanism shows of the host in every sandbox, and where no writable bind may go. */
export interface HostLayout {
  /** Host paths visible read-only in every sandbox (system programs and libraries, the node binary's directory). */
  visibleRoots: readonly string[];
  /** No writable bind may equal, lie inside, or contain one of these. */
  noWriteRoots: readonly string[];
  /** Paths the mechanism provides itself (its own /proc, /dev): never bound from the host. */
  reserved: readonly string[];
}

export const SPAWN_MARKER_NAME = 'SUPERVISOR_SPAWN_ID';
export const DEFAULT_TMP_BYTES = 64 * 1024 * 1024;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * The launcher (bwrap, sandbox-exec) runs outside the sandbox with the supervisor's privileges and
 * the spec's environment: names the dynamic loader or libc act on would change the launcher itself.
 * glibc's list of variables it drops for setuid programs, plus the macOS loader's.
 */
const LAUNCHER_ENV = /^(LD_|DYLD_)|^(GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_TRACE|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS)$/;

export function validateSpec(spec: SandboxSpec, layout: HostLayout): ValidatedSpec {
  if (spec === null || typeof spec !== 'object') throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'spec', 'expected an object');
  if (typeof spec.network !== 'boolean') throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'network', 'must be true or false');
  const env = checkEnv(spec.env);
  const args = checkArgs(spec.args);
  const protectedPaths = (spec.protectedPaths ?? []).map((p, i) => checkAbsolute(p, `protectedPaths[${i}]`));
  // Resolved once per spec, not once per bind: every bind is compared with every root.
  const hiddenRoots = resolvedRoots((spec.hiddenRoots ?? []).map((p, i) => checkAbsolute(p, `hiddenRoots[${i}]`)));
  const masks = maskList(spec.maskPaths);

  const binds = new Map<string, Bind>();
  const lists = [
    ['readOnlyPaths', spec.readOnlyPaths, false],
    ['writablePaths', spec.writablePaths, true],
  ] as const;
  for (const [name, list, writable] of lists) {
    if (!Array.isArray(list)) throw new SandboxSpecError('SANDBOX_BAD_OPTION', name, 'must be an array of absolute paths (may be empty)');
    list.forEach((p: unknown, i: number) => {
      const field = `${name}[${i}]`;
      const path = checkBindPath(p, field, writable, layout, protectedPaths);
      const shown = hiddenRootShown(path, hiddenRoots);
      if (shown !== null) {
        throw new SandboxSpecError('SANDBOX_PATH_TOO_BROAD', field, `${path} is or contains ${shown}, which the sandbox must not show whole (a home holds keys, tokens and shell history; /etc holds shadow and private keys); bind a directory inside it instead`);
      }
      const prior = binds.get(path);
      if (prior && prior.writable !== writable) {
        throw new SandboxSpecError('SANDBOX_PATH_CONFLICT', field, `${path} is listed both read-only and writable; keep it in one list`);
      }
      binds.set(path, { path, writable });
    });
  }
  const sorted = [...binds.values()].sort((a, b) => depth(a.path) - depth(b.path) || a.path.localeCompare(b.path));

  const cwd = checkAbsolute(spec.cwd, 'cwd');
  if (!sorted.some((b) => within(cwd, b.path))) {
    throw new SandboxSpecError('SANDBOX_CWD_OUTSIDE', 'cwd', `${cwd} is not inside any of readOnlyPaths or writablePaths; bind it (or a parent) or choose a cwd inside one`);
  }
  if (!isDirectory(cwd)) throw new SandboxSpecError('SANDBOX_PATH_MISSING', 'cwd', `${cwd} is not an existing directory`);

  const command = checkCommand(spec.command, env, cwd, [...layout.visibleRoots, ...sorted.map((b) => b.path)]);
  const tmpBytes = spec.tmpBytes ?? DEFAULT_TMP_BYTES;
  if (!Number.isSafeInteger(tmpBytes) || tmpBytes < 1024 * 1024) {
    throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'tmpBytes', 'must be a whole number of bytes, at least 1 MiB (1048576)');
  }
  if (spec.userDatabase !== undefined && typeof spec.userDatabase !== 'boolean') throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'userDatabase', 'must be true or false');
  return { command, args, binds: sorted, cwd, network: spec.network, env, tmpBytes, masks, userDatabase: spec.userDatabase ?? true };
}

/** Each mask as written and, when it exists, as the kernel resolves it (the sandbox binds real paths too). */
function maskList(list: unknown): string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'maskPaths', 'must be an array of absolute paths (may be empty)');
  const out = new Set<string>();
  list.forEach((p: unknown, i: number) => {
    const path = checkAbsolute(p, `maskPaths[${i}]`);
    out.add(path);
    out.add(safeRealpath(path));
  });
  return [...out];
}

function checkEnv(env: unknown): Record<string, string> {
  if (env === null || typeof env !== 'object' || Array.isArray(env)) {
    throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'env', 'must be an object of name → string value (may be empty)');
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const field = `env.${name}`;
    if (!ENV_NAME.test(name)) {
      throw new SandboxSpecError('SANDBOX_BAD_ENV', `env[${JSON.stringify(name)}]`, 'a variable name must match ^[A-Za-z_][A-Za-z0-9_]*$; rename or drop it');
    }
    if (name === SPAWN_MARKER_NAME) {
      throw new SandboxSpecError('SANDBOX_ENV_RESERVED', field, 'is set by the supervisor to find the tree\'s processes; remove it from env');
    }
    if (LAUNCHER_ENV.test(name)) {
      throw new SandboxSpecError('SANDBOX_ENV_RESERVED', field, 'would act on the sandbox launcher, which runs outside the sandbox (dynamic loader and libc variables); remove it from env');
    }
    // The value may be a secret: say what is wrong with it, never what it is.
    if (typeof value !== 'string' || value.includes('\0')) {
      throw new SandboxSpecError('SANDBOX_BAD_ENV', field, 'the value must be a string without NUL bytes');
    }
    out[name] = value;
  }
  return out;
}

function checkArgs(args: unknown): string[] {
  if (!Array.isArray(args)) throw new SandboxSpecError('SANDBOX_BAD_OPTION', 'args', 'must be an array of strings (may be empty)');
  return args.map((a: unknown, i) => {
    if (typeof a !== 'string' || a.includes('\0')) throw new SandboxSpecError('SANDBOX_BAD_ARG', `args[${i}]`, 'must be a string without NUL bytes');
    return a;
  });
}

function checkAbsolute(p: unknown, field: string): string {
  if (typeof p !== 'string' || p === '' || p.includes('\0')) {
    throw new SandboxSpecError('SANDBOX_BAD_PATH', field, 'must be a non-empty absolute path without NUL bytes');
  }
  if (!isAbsolute(p)) throw new SandboxSpecError('SANDBOX_BAD_PATH', field, `${JSON.stringify(p)} is relative; give an absolute path`);
  const normal = resolve(p);
  // The same string is the host source and the sandbox destination: `..` or `//` would make the two disagree.
  if (normal !== p) throw new SandboxSpecError('SANDBOX_BAD_PATH', field, `${JSON.stringify(p)} is not in normal form; write it as ${JSON.stringify(normal)}`);
  return p;
}

function checkBindPath(p: unknown, field: string, writable: boolean, layout: HostLayout, protectedPaths: readonly string[]): string {
  const path = checkAbsolute(p, field);
  if (path === '/' || path === resolve('/')) {
    throw new SandboxSpecError('SANDBOX_PATH_TOO_BROAD', field, 'binding / would show the whole host; bind only the directories the command needs');
  }
  for (const r of layout.reserved) {
    if (within(path, r)) throw new SandboxSpecError('SANDBOX_PATH_RESERVED', field, `${path} is under ${r}, which the sandbox provides itself (a private one); do not bind it from the host`);
  }
  if (writable) {
    for (const r of layout.noWriteRoots) {
      if (within(path, r) || within(r, path)) {
        throw new SandboxSpecError('SANDBOX_PATH_SYSTEM', field, `${path} overlaps ${r}, which holds programs and libraries the host runs; a writable bind there could plant code. Bind a workspace or scratch directory instead`);
      }
    }
  }
  let real: string;
  try {
    real = realpathSync(path);
    statSync(real);
  } catch {
    throw new SandboxSpecError('SANDBOX_PATH_MISSING', field, `${path} does not exist; create it first or remove it from the spec`);
  }
  protectedPaths.forEach((prot, i) => {
    const protReal = safeRealpath(prot);
    for (const [a, b] of [
      [path, prot],
      [real, protReal],
    ] as const) {
      if (within(a, b) || within(b, a)) {
        throw new SandboxSpecError('SANDBOX_PATH_PROTECTED', field, `${path} overlaps protectedPaths[${i}] (${prot}), which the sandbox must never see; bind a directory that neither contains nor lies inside it`);
      }
    }
  });
  return path;
}

function checkCommand(command: unknown, env: Record<string, string>, cwd: string, visible: readonly string[]): string {
  if (typeof command !== 'string' || command === '' || command.includes('\0')) {
    throw new SandboxSpecError('SANDBOX_BAD_COMMAND', 'command', 'must be a non-empty program name or absolute path without NUL bytes');
  }
  if (command.includes('/') && !isAbsolute(command)) {
    throw new SandboxSpecError('SANDBOX_BAD_COMMAND', 'command', `${JSON.stringify(command)} is a relative path; give an absolute path or a bare name found on env.PATH`);
  }
  if (!command.includes('/') && env.PATH === undefined) {
    throw new SandboxSpecError('SANDBOX_COMMAND_NOT_FOUND', 'env.PATH', `is not set, so the bare command ${JSON.stringify(command)} cannot be found; set env.PATH or give an absolute path`);
  }
  const found = resolveCommand(command, env.PATH, cwd);
  if (found === null) {
    const where = command.includes('/') ? 'no executable file there' : 'not on env.PATH';
    throw new SandboxSpecError('SANDBOX_COMMAND_NOT_FOUND', 'command', `${JSON.stringify(command)}: ${where}`);
  }
  const real = safeRealpath(found);
  for (const p of new Set([found, real])) {
    if (!visible.some((root) => within(p, root))) {
      throw new SandboxSpecError('SANDBOX_COMMAND_NOT_VISIBLE', 'command', `${p} would not exist inside the sandbox; add its directory to readOnlyPaths`);
    }
  }
  return found;
}

/** True when `p` is `root` or lies below it (lexically). */
/**
 * The first of `roots` that a bind of `path` would show whole (`path` equals it or contains it),
 * before or after resolving symlinks on either side; null when none. A path inside a root is fine.
 */
export function hiddenRootShown(path: string, roots: readonly string[] | ResolvedRoots): string | null {
  const real = safeRealpath(path);
  const pairs = 'pairs' in roots ? roots.pairs : resolvedRoots(roots).pairs;
  for (const { root, rootReal } of pairs) {
    if (within(root, path) || within(rootReal, real) || within(rootReal, path) || within(root, real)) return root;
  }
  return null;
}

/** Roots with their symlinks resolved, for comparing many paths against the same roots. */
export interface ResolvedRoots {
  readonly pairs: readonly { root: string; rootReal: string }[];
}

function resolvedRoots(roots: readonly string[]): ResolvedRoots {
  return { pairs: roots.map((root) => ({ root, rootReal: safeRealpath(root) })) };
}

/**
 * The directories a sandbox that promises "no home" must never bind whole: this user's home (as
 * the OS and $HOME name it), root's, and the directories that hold other users' homes. /etc too:
 * the sandbox shows only the loader and name-service files of it, never shadow or ssl/private.
 */
export function homeRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const out = new Set<string>(['/root', '/home', '/etc']);
  if (process.platform === 'darwin') out.add('/Users');
  for (const h of [homedir(), env.HOME]) if (typeof h === 'string' && isAbsolute(h) && h !== '/' && h !== resolve('/')) out.add(h);
  return [...out];
}

export function within(p: string, root: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return p.startsWith(prefix);
}

function depth(p: string): number {
  return p.split(sep).filter(Boolean).length;
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}
