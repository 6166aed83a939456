// The programs a command may name and still be read-only, each with the check that refuses the
// flags and operands that would write, run or never end; and the interactive ones, refused though
// they only read.
import { allOf, flagRules, longName, noArgs } from './flags.js';
import { show } from './verdict.js';

interface SafeProgram {
  /**
   * Present for programs with unsafe flags or operands. Those arguments must be literal (no
   * expansion, no glob) because a file named `-delete` in the workspace would otherwise turn
   * `find *` into a deletion. Returns the reason the arguments are unsafe, or null.
   */
  check?: (args: string[]) => string | null;
}

const findCheck = flagRules('find', [
  { exact: ['-exec', '-execdir', '-ok', '-okdir'], what: 'can run programs' },
  { exact: ['-delete'], what: 'deletes files' },
  { exact: ['-fprint', '-fprint0', '-fprintf', '-fls'], what: 'writes a file' },
]);

const rgCheck = flagRules('rg', [
  { long: ['pre', 'pre-glob'], what: 'runs a preprocessor program' },
  { short: 'z', long: ['search-zip'], what: 'runs decompression programs' },
  { long: ['hostname-bin'], what: 'runs a program' },
]);

/** Only `sed -n 'Np'` / `sed -n 'N,Mp'` [files]: every other script can write (`w`, `-i`) or run (`e`). */
function sedCheck(args: string[]): string | null {
  const [flag, script, ...files] = args;
  const ok =
    flag === '-n' &&
    script !== undefined &&
    /^[0-9]+(?:,[0-9]+)?p$/.test(script) &&
    // GNU sed takes options after operands too, so a "file" starting with '-' could be `-i`.
    files.every((f) => f !== '' && !f.startsWith('-'));
  return ok ? null : "sed is read-only only as sed -n 'Np' or 'N,Mp' with file names";
}

const sortCheck = flagRules('sort', [
  { short: 'o', long: ['output'], what: 'writes a file' },
  { long: ['compress-program'], what: 'runs a program' },
]);

const tailCheck = allOf(
  flagRules('tail', [{ short: 'fF', long: ['follow'], what: 'never ends' }]),
  // Obsolete `tail +5f file` follows too.
  (args) => {
    const a = args.find((x) => x.startsWith('+') && x.includes('f'));
    return a === undefined ? null : `tail with ${show(a)} never ends`;
  },
);

/** date: `-s`/`--set` and any operand other than `+FORMAT` set the system clock. */
function dateCheck(args: string[]): string | null {
  const valueLongs = ['date', 'file', 'reference'];
  let operandsOnly = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!operandsOnly && a === '--') {
      operandsOnly = true;
      continue;
    }
    const long = operandsOnly ? null : longName(a);
    if (long !== null) {
      if ('set'.startsWith(long)) return `date with ${show(a)} sets the system clock`;
      if (!a.includes('=') && valueLongs.some((l) => l.startsWith(long))) i++;
      continue;
    }
    if (!operandsOnly && a.length > 1 && a.startsWith('-')) {
      // Walk the cluster the way getopt does: a value-taking letter swallows the rest of the
      // word (`-dyesterday`, `-Iseconds`) or, at the end of it, the next word (`-d yesterday`).
      for (let k = 1; k < a.length; k++) {
        const ch = a[k]!;
        if (ch === 's') return `date with ${show(a)} sets the system clock`;
        if (ch === 'I') break;
        if ('dfr'.includes(ch)) {
          if (k === a.length - 1) i++;
          break;
        }
      }
      continue;
    }
    if (!a.startsWith('+')) return `date with the operand ${show(a)} sets the system clock`;
  }
  return null;
}

const base64Check = flagRules('base64', [{ short: 'o', long: ['output'], what: 'writes a file' }]);

const XXD_FLAGS = new Set([
  'a', 'autoskip', 'b', 'bits', 'C', 'capitalize', 'E', 'EBCDIC', 'e', 'h', 'help', 'i', 'include',
  'p', 'ps', 'postscript', 'plain', 'r', 'revert', 'd', 'u', 'v', 'version',
]);
const XXD_VALUE_FLAGS = new Set(['c', 'cols', 'g', 'groupsize', 'l', 'len', 'n', 'name', 'o', 'offset', 's', 'seek', 'R']);

/** xxd writes its second operand (`xxd in out`, `xxd -r hex out`); options end at the first operand. */
function xxdCheck(args: string[]): string | null {
  let operands = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (operands > 0 || a === '-' || !a.startsWith('-')) {
      operands++;
      continue;
    }
    if (a === '--') {
      // Everything after `--` is an operand.
      operands += args.length - i - 1;
      break;
    }
    // xxd reads `--cols` as `-cols`.
    const opt = a.startsWith('--') ? a.slice(2) : a.slice(1);
    if (XXD_FLAGS.has(opt)) continue;
    if (XXD_VALUE_FLAGS.has(opt)) {
      i++;
      continue;
    }
    if (/^[cglos][+-]?(?:0x)?[0-9a-fA-F]+$/.test(opt)) continue;
    return `xxd option ${show(a)} is not recognized`;
  }
  return operands > 1 ? 'xxd with a second operand writes its output to that file' : null;
}

const UNIQ_SHORT = 'cdDiuz';
const UNIQ_SHORT_VALUE = 'fsw';
const UNIQ_LONG = ['count', 'repeated', 'ignore-case', 'unique', 'zero-terminated', 'help', 'version', 'all-repeated', 'group'];
const UNIQ_LONG_VALUE = ['skip-fields', 'skip-chars', 'check-chars'];

/** uniq writes its second operand; GNU getopt permutes, so operands may come anywhere. */
function uniqCheck(args: string[]): string | null {
  let operands = 0;
  let operandsOnly = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (operandsOnly || a === '-' || !a.startsWith('-')) {
      operands++;
      continue;
    }
    if (a === '--') {
      operandsOnly = true;
      continue;
    }
    const long = longName(a);
    if (long !== null) {
      // Exact names only: an abbreviation's value-taking is not worth re-deriving here.
      if (UNIQ_LONG_VALUE.includes(long)) {
        if (!a.includes('=')) i++;
        continue;
      }
      if (UNIQ_LONG.includes(long)) continue;
      return `uniq option ${show(a)} is not recognized`;
    }
    const letters = a.slice(1);
    for (let k = 0; k < letters.length; k++) {
      const ch = letters[k]!;
      if (/[0-9]/.test(ch) || UNIQ_SHORT.includes(ch)) continue;
      if (UNIQ_SHORT_VALUE.includes(ch)) {
        if (k === letters.length - 1) i++;
        break;
      }
      return `uniq option ${show(a)} is not recognized`;
    }
  }
  return operands > 1 ? 'uniq with a second operand writes its output to that file' : null;
}

const treeCheck = flagRules('tree', [
  { short: 'o', long: ['output'], what: 'writes a file' },
  { short: 'R', what: 'writes 00Tree.html files in every directory' },
]);

function printfCheck(args: string[]): string | null {
  return args[0]?.startsWith('-v') ? 'printf with -v assigns a shell variable' : null;
}

const fileCheck = flagRules('file', [
  { short: 'C', long: ['compile'], what: 'writes a compiled magic file' },
  { short: 'zZ', long: ['uncompress', 'uncompress-noreport'], what: 'runs decompression programs' },
]);

/** BSD-style `ps e` prints every process's environment, which can hold other processes' secrets. */
function psCheck(args: string[]): string | null {
  const a = args.find((x) => !x.startsWith('-') && x.includes('e'));
  return a === undefined ? null : `ps with ${show(a)} prints process environments, which can hold secrets`;
}

/** bash's `test -v 'a[$(cmd)]'` evaluates the subscript, running cmd. */
function testCheck(args: string[]): string | null {
  const a = args.find((x) => x === '-v' || x === '-R');
  return a === undefined ? null : `test with ${a} evaluates a variable name, which can run code in bash`;
}

const ALWAYS_SAFE = [
  'cat', 'ls', 'pwd', 'echo', 'head', 'wc', 'grep', 'egrep', 'fgrep', 'cut', 'tr', 'nl', 'stat',
  'du', 'df', 'uname', 'whoami', 'id', 'printenv', 'which', 'type', 'basename', 'dirname',
  'realpath', 'readlink', 'true', 'false', 'diff', 'cmp', 'sha1sum', 'sha224sum', 'sha256sum',
  'sha384sum', 'sha512sum', 'md5sum', 'column', 'jq', 'od', 'hexdump',
] as const;

export const READ_ONLY = new Map<string, SafeProgram>([
  ...ALWAYS_SAFE.map((n): [string, SafeProgram] => [n, {}]),
  ['find', { check: findCheck }],
  ['rg', { check: rgCheck }],
  ['sed', { check: sedCheck }],
  ['sort', { check: sortCheck }],
  ['tail', { check: tailCheck }],
  ['date', { check: dateCheck }],
  ['base64', { check: base64Check }],
  ['xxd', { check: xxdCheck }],
  ['uniq', { check: uniqCheck }],
  ['tree', { check: treeCheck }],
  ['printf', { check: printfCheck }],
  ['file', { check: fileCheck }],
  ['env', { check: noArgs('env', 'runs a program or changes the environment') }],
  ['hostname', { check: noArgs('hostname', 'can set the host name') }],
  ['ps', { check: psCheck }],
  ['test', { check: testCheck }],
  ['[', { check: testCheck }],
]);

/** Read-only in effect, but they wait for a terminal (and pagers can run shell commands). */
export const INTERACTIVE = new Set(['less', 'more', 'most', 'vi', 'vim', 'nano', 'top', 'htop', 'watch']);
