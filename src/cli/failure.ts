// The CLI's one error boundary. Every failure a user can cause or meet (a flag, a core file, a rule,
// a state dir that is a file or read-only, a store from a newer release, a full disk) becomes one
// paragraph naming what failed, the path or field, and the fix, with an exit code from the
// documented set. Anything else is a bug: the user sees "internal error" and the path of a 0600
// file holding the stack, never the stack itself. With --json the same object goes to stderr.
import { cliIo } from './io.js';
import { closeSync, mkdtempSync, openSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
// The core's error type only: the loader behind core/index.js (yaml, ajv, re2js) would cost every
// command's start, --help included.
import { CoreLoadError, formatIssue, MAX_LISTED_ISSUES } from '../core/errors.js';
import { displayJson, displayText } from '../redaction/index.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';

/** The documented exit codes of a failure (README, *Exit status*). */
export const EXIT = { usage: 2, internal: 70 } as const;

export interface Failure {
  /** Stable code, e.g. USAGE, STORE_TOO_NEW, ENOTDIR, INTERNAL. */
  code: string;
  message: string;
  exit: number;
  /** Internal errors only: where the stack was written. */
  stackFile?: string;
}

/** Error classes of this project whose messages are written for users: name the file, field and fix. */
const USER_FACING = new Set([
  'CatalogBuildError',
  'CoreLoadError',
  'ApprovalRuleError',
  'CapabilitySyntaxError',
  'ApprovalPolicyError',
  'SandboxSpecError',
  'SandboxUnavailableError',
  'RuntimeSetupError',
  'LoopbackAddressError',
  'StoreError',
  'StoreInputError',
  'SessionNotFoundError',
  'ChainInconsistentError',
  'SpawnError',
  'CgroupError',
  'SecretError',
  'ProviderError',
  'UrlPolicyError',
  'McpError',
  'RedactionError',
]);

/** What to tell the user about a failure of the operating system or SQLite on a path. */
const SYSTEM_FIX: Record<string, string> = {
  ENOENT: 'it does not exist and cannot be made here (a missing parent, or a filesystem such as /proc or /sys that takes no new directories); choose another directory (--state-dir DIR or SUPERVISOR_STATE_DIR)',
  ENOTDIR: 'a part of this path is a file, not a directory; choose another directory (--state-dir DIR or SUPERVISOR_STATE_DIR)',
  EEXIST: 'something that is not a directory is in the way; choose another directory (--state-dir DIR or SUPERVISOR_STATE_DIR)',
  EACCES: 'permission denied; use a directory you own (--state-dir DIR or SUPERVISOR_STATE_DIR) or fix its permissions',
  EPERM: 'operation not permitted; use a directory you own (--state-dir DIR or SUPERVISOR_STATE_DIR)',
  EROFS: 'the filesystem is read-only; choose a writable directory (--state-dir DIR or SUPERVISOR_STATE_DIR)',
  ENOSPC: 'the disk is full; free space or choose another directory (--state-dir DIR); the store keeps every event committed before this one',
  EDQUOT: 'the disk quota is exhausted; free space or choose another directory (--state-dir DIR)',
  ENAMETOOLONG: 'the path is too long; choose a shorter directory',
  ELOOP: 'the path has a symlink loop; choose another directory',
  SQLITE_READONLY: 'the store cannot be written (a read-only file or directory); fix its permissions or use another --state-dir',
  SQLITE_CANTOPEN: 'the store cannot be opened; check that the state dir exists and is writable, or use another --state-dir',
  SQLITE_FULL: 'the disk is full; free space there or use another --state-dir; the store keeps every event committed before this one, and the next start marks the run interrupted (continue it with run --resume ID)',
  SQLITE_IOERR: 'the disk reported an I/O error; check the filesystem or use another --state-dir',
  SQLITE_CORRUPT: 'the store file is damaged; keep it for inspection and use another --state-dir',
  SQLITE_NOTADB: 'the store path holds a file that is not a supervisor store; use another --state-dir',
};

function systemFailure(err: Error & { code?: unknown; path?: unknown; syscall?: unknown }, stateDir?: string): Failure | null {
  const code = typeof err.code === 'string' ? err.code : '';
  const key = Object.keys(SYSTEM_FIX).find((k) => code === k || code.startsWith(`${k}_`));
  if (key === undefined) return null;
  // SQLite names no file: its errors are about the store, which lives in the command's state dir.
  const where = typeof err.path === 'string' ? `${err.path}: ` : code.startsWith('SQLITE_') && stateDir !== undefined ? `the store in ${stateDir}: ` : '';
  const what = typeof err.syscall === 'string' ? `${err.syscall} failed (${code})` : `${code}: ${firstLine(err.message)}`;
  return { code, message: `${where}${what}; ${SYSTEM_FIX[key]}`, exit: EXIT.usage };
}

function firstLine(s: string): string {
  return s.split('\n', 1)[0]!;
}

/** The failure a user should see for `err`, or null when it is a bug. `stateDir`: the command's, named in store errors. */
export function expectedFailure(err: unknown, stateDir?: string): Failure | null {
  if (!(err instanceof Error)) return null;
  if (err instanceof UsageError) return { code: 'USAGE', message: err.message, exit: EXIT.usage };
  const named = USER_FACING.has(err.name) || USER_FACING.has(err.constructor?.name ?? '');
  if (named) {
    // A wrapped system error (a store that cannot be opened) says more through its cause.
    const cause = (err as { cause?: unknown }).cause;
    const sys = cause instanceof Error ? systemFailure(cause, stateDir) : null;
    const own = (err as { code?: unknown }).code;
    const code = typeof own === 'string' ? own : err.name;
    return { code, message: sys ? `${firstLine(err.message)} (${sys.message})` : err.message, exit: EXIT.usage };
  }
  return systemFailure(err as Error & { code?: unknown }, stateDir);
}

/** Where an internal error's stack goes: the state dir if it takes a file, else a private temp dir. */
function writeStack(err: unknown, argv: readonly string[]): string | undefined {
  const text = `supervisor ${argv.join(' ')}\n${new Date().toISOString()} pid ${process.pid} node ${process.version}\n\n${err instanceof Error ? (err.stack ?? String(err)) : String(err)}\n`;
  const name = `internal-error-${Date.now()}-${process.pid}.log`;
  for (const dir of [stateDirOf(argv), () => mkdtempSync(join(tmpdir(), 'supervisor-error-'))]) {
    try {
      const file = join(dir(), name);
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
      return file;
    } catch {
      // next place
    }
  }
  return undefined;
}

function stateDirOf(argv: readonly string[]): () => string {
  const i = argv.indexOf('--state-dir');
  return () => (i >= 0 && argv[i + 1] ? resolve(argv[i + 1]!) : defaultStateDir());
}

/**
 * Prints `err` as the user should see it and returns the exit code. `failureExit` replaces the
 * usage code for commands that document their own (exec: 125, the supervisor failed).
 */
export function reportFailure(err: unknown, argv: readonly string[], failureExit?: number): number {
  const json = argv.includes('--json');
  let stateDir: string | undefined;
  try {
    stateDir = stateDirOf(argv)();
  } catch {
    stateDir = undefined;
  }
  const expected = expectedFailure(err, stateDir);
  let f: Failure;
  if (expected) f = expected.code === 'USAGE' || failureExit === undefined ? expected : { ...expected, exit: failureExit };
  else {
    const stackFile = writeStack(err, argv);
    f = {
      code: 'INTERNAL',
      message: `internal error: ${err instanceof Error ? firstLine(err.message) : String(err)}${stackFile ? `; the details are in ${stackFile}` : ''}; please report it`,
      exit: failureExit ?? EXIT.internal,
      ...(stackFile ? { stackFile } : {}),
    };
  }
  if (json) cliIo().stderr.write(`${displayJson({ error: f })}
`);
  else cliIo().stderr.write(`supervisor: ${readableLines(err, f)}
`);
  return f.exit;
}

/**
 * The message for a person: one sanitised line, or, for a core with several issues, one sanitised
 * line per issue (docs/core-format.md). The line breaks come from the issue list itself, never from
 * the text, so a key or a value holding a newline cannot forge a line.
 */
function readableLines(err: unknown, f: Failure): string {
  // The core's error, as thrown or wrapped (session layer, usage) with the same message.
  let core: unknown = err;
  for (let i = 0; i < 4 && core instanceof Error && !(core instanceof CoreLoadError); i++) core = (core as { cause?: unknown }).cause;
  if (core instanceof CoreLoadError && f.message === core.message) {
    const n = core.issues.length;
    const lines = [`core ${core.dir} is invalid (${n} issue${n === 1 ? '' : 's'}):`, ...core.issues.slice(0, MAX_LISTED_ISSUES).map((i) => `  ${formatIssue(i)}`)];
    if (n > MAX_LISTED_ISSUES) lines.push(`  ... and ${n - MAX_LISTED_ISSUES} more (see error.issues)`);
    return lines.map((l) => displayText(l)).join('\n');
  }
  return displayText(f.message);
}
