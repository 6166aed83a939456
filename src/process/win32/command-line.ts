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
  const line = [quoteProgram(program), ...args.map(quoteArgument)].join(' ');
  if (line.length >= MAX_COMMAND_LINE) {
    throw new WindowsArgumentError(`the command line is ${line.length} characters; Windows accepts at most ${MAX_COMMAND_LINE - 1}: pass the data through a file or stdin instead`);
  }
  return line;
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
