// What CreateProcessW takes instead of an argv array and an environment object: one command line
// that the child's C runtime splits back into exactly the argv we were given, and one sorted
// UTF-16 environment block. Pure functions, tested on every OS.

export class WindowsArgumentError extends Error {
  readonly code = 'INVALID_ARGUMENT';
  constructor(message: string) {
    super(message);
    this.name = 'WindowsArgumentError';
  }
}

/**
 * One argument quoted by the MSVCRT / CommandLineToArgvW rules: unquoted when it has no blank and
 * no quote; otherwise in quotes, where a run of backslashes is doubled only before a quote (an
 * embedded one, escaped as \", or the closing one). `%` and `^` are not special here: they are
 * cmd.exe's, and no shell runs.
 */
export function quoteArgument(arg: string): string {
  if (arg.includes('\0')) throw new WindowsArgumentError('an argument contains a NUL character, which a Windows command line cannot carry');
  if (arg.length > 0 && !/[ \t\n\v"]/.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes++;
      continue;
    }
    if (ch === '"') {
      out += '\\'.repeat(2 * backslashes + 1) + '"';
    } else {
      out += '\\'.repeat(backslashes) + ch;
    }
    backslashes = 0;
  }
  // Before the closing quote, backslashes are doubled so that it stays a closing quote.
  return `${out}${'\\'.repeat(2 * backslashes)}"`;
}

/**
 * argv[0] is split by different rules (up to the next blank, or between quotes, with no escapes):
 * a program path has no quotes, so it is quoted whole when it has a blank.
 */
export function quoteProgram(program: string): string {
  if (program.includes('"') || program.includes('\0')) throw new WindowsArgumentError(`the program path ${JSON.stringify(program)} contains a quote or NUL, which Windows paths cannot`);
  return /[ \t]/.test(program) || program.length === 0 ? `"${program}"` : program;
}

/** The maximum CreateProcessW accepts, in UTF-16 code units, the terminating NUL included. */
export const MAX_COMMAND_LINE = 32_767;

export function buildCommandLine(program: string, args: readonly string[]): string {
  return checkLength([quoteProgram(program), ...args.map(quoteArgument)].join(' '));
}

function checkLength(line: string): string {
  if (line.length >= MAX_COMMAND_LINE) {
    throw new WindowsArgumentError(`the command line is ${line.length} characters; Windows accepts at most ${MAX_COMMAND_LINE - 1}: pass the data through a file or stdin instead`);
  }
  return line;
}

/** Scripts that only cmd.exe runs: CreateProcessW would start cmd.exe for them by rules of its own. */
export const BATCH_FILE = /\.(bat|cmd)$/i;

/** What a tree's leader is to CreateProcessW: the program to load and its whole command line. */
export interface WindowsProgram {
  application: string;
  commandLine: string;
}

/**
 * A resolved `.exe`/`.com` runs as itself; a `.bat`/`.cmd` runs as `cmd.exe /d /e:ON /v:OFF /s /c
 * "<line>"` (cmdArguments). Throws WindowsArgumentError, before anything starts, for what neither can carry.
 */
export function windowsProgram(command: string, args: readonly string[], env: Readonly<Record<string, string | undefined>> = process.env): WindowsProgram {
  if (!BATCH_FILE.test(command)) return { application: command, commandLine: buildCommandLine(command, args) };
  const cmd = cmdExePath(env);
  return { application: cmd, commandLine: checkLength(`${quoteProgram(cmd)} ${cmdArguments(command, args)}`) };
}

/** cmd.exe from the supervisor's own SystemRoot (not the child's PATH), else ComSpec. */
export function cmdExePath(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const root = env.SystemRoot ?? env.SYSTEMROOT;
  return root ? `${root}\\System32\\cmd.exe` : (env.ComSpec ?? 'C:\\Windows\\System32\\cmd.exe');
}

/**
 * cmd.exe's arguments that run `script` with `args`, each reaching the script as %1..%9 intact
 * and inert. /d: no AutoRun commands from the registry; /e:ON /v:OFF: command extensions on,
 * delayed (`!VAR!`) expansion off whatever the registry says; /s /c "...": cmd strips exactly the
 * outer quotes and runs the rest. Inside it, cmd's own rules (not the MSVCRT's) decide: a quoted
 * span keeps `& | < > ( ) ^` literal, so every argument with one of them (or a blank, or empty) is
 * quoted, and an embedded quote is doubled (`""` closes and reopens the span with nothing between).
 * Backslashes before a quote are doubled too, for a program the script hands %* on to. What no
 * quoting makes safe is refused (BatBadBut, CVE-2024-27980): `%`, which cmd expands before it looks
 * at quotes (Windows' `%%cd:~,%` trick does not hold under other cmd implementations such as
 * Wine's), and line breaks, which end the command.
 */
export function cmdArguments(script: string, args: readonly string[]): string {
  if (/["%\r\n\0]/.test(script) || script.endsWith('\\')) {
    throw new WindowsArgumentError(`the batch file path ${JSON.stringify(script)} contains a quote, %, a line break or a trailing backslash, which cmd.exe cannot be given safely: rename or move the script`);
  }
  return `/d /e:ON /v:OFF /s /c ""${script}"${args.map((a, i) => ` ${quoteBatchArgument(a, i + 1)}`).join('')}"`;
}

/** cmd.exe's metacharacters, blanks and what it treats as separators: an argument with any is quoted. */
const BATCH_SPECIAL = /[\t &()[\]{}^=;!'+,`~|<>"]/;

/** One argument of a batch file, by cmd.exe's rules (see cmdArguments); `n` names it in errors. */
export function quoteBatchArgument(arg: string, n: number): string {
  if (/[\r\n\0]/.test(arg)) {
    throw new WindowsArgumentError(`batch file argument ${n} contains a line break or NUL, which would end cmd.exe's command: pass the data through a file, the environment or stdin`);
  }
  if (arg.includes('%')) {
    throw new WindowsArgumentError(
      `batch file argument ${n} contains '%', which cmd.exe expands as a variable even inside quotes (BatBadBut, CVE-2024-27980): pass it through a file, the environment or stdin, or run the script's interpreter (node, python) directly`,
    );
  }
  if (arg.length > 0 && !BATCH_SPECIAL.test(arg)) return arg;
  let out = '"';
  let backslashes = 0;
  for (const ch of arg) {
    if (ch === '\\') {
      backslashes++;
      out += ch;
      continue;
    }
    if (ch === '"') out += `${'\\'.repeat(backslashes)}"`;
    out += ch;
    backslashes = 0;
  }
  return `${out}${'\\'.repeat(backslashes)}"`;
}

/**
 * Variables Windows programs break without (Winsock needs SYSTEMROOT): copied from the supervisor
 * when the child's environment lacks them, as Node's spawn() (libuv) does, so a tree started
 * either way sees the same environment.
 */
export const REQUIRED_WINDOWS_VARIABLES = ['SYSTEMDRIVE', 'SYSTEMROOT', 'TEMP'] as const;

/**
 * The environment block: `NAME=value\0` entries sorted by name without regard to case (what
 * Windows requires of a block it is given), then one more NUL, in UTF-16LE. Names are unique
 * without regard to case; the first spelling given wins.
 */
export function environmentBlock(env: Readonly<Record<string, string>>, parent: Readonly<Record<string, string | undefined>> = process.env): Buffer {
  const entries = new Map<string, [string, string]>();
  for (const [name, value] of Object.entries(env)) {
    checkVariable(name, value);
    const key = name.toUpperCase();
    if (!entries.has(key)) entries.set(key, [name, value]);
  }
  for (const name of REQUIRED_WINDOWS_VARIABLES) {
    if (entries.has(name)) continue;
    const inherited = Object.entries(parent).find(([k, v]) => k.toUpperCase() === name && v !== undefined);
    if (inherited) entries.set(name, [inherited[0], inherited[1]!]);
  }
  const sorted = [...entries.entries()].sort(([a], [b]) => compareOrdinal(a, b));
  const text = sorted.map(([, [name, value]]) => `${name}=${value}\0`).join('');
  // An empty block is still two NULs.
  return Buffer.from(text.length === 0 ? '\0\0' : `${text}\0`, 'utf16le');
}

/** Code unit by code unit, as CompareStringOrdinal does on the upper-cased names. */
function compareOrdinal(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function checkVariable(name: string, value: string): void {
  // A leading '=' is Windows' own per-drive current directory (`=C:`); elsewhere '=' ends the name.
  if (name.length === 0 || name.indexOf('=', 1) !== -1 || name.includes('\0')) {
    throw new WindowsArgumentError(`environment variable name ${JSON.stringify(name)} is not valid on Windows: names are non-empty and contain no '=' or NUL`);
  }
  if (value.includes('\0')) throw new WindowsArgumentError(`environment variable ${name} contains a NUL character, which a Windows environment block cannot carry`);
}
