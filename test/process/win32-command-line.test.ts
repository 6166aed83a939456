// The Windows command line and environment block, on every OS: built here, split back by a parser
// that follows the MSVCRT rules (the same rules the Wine test checks against a real child).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buildCommandLine, environmentBlock, quoteArgument, windowsProgram, WindowsArgumentError } from '../../src/process/win32/command-line.js';
import { HOSTILE_ARGS } from '../helpers/windows-args.js';

/** The MSVCRT (UCRT, 2008 and later) split of a command line: argv[0] by its own rule, then the rest. */
function splitCommandLine(line: string): string[] {
  let i = 0;
  let program = '';
  if (line[0] === '"') {
    const end = line.indexOf('"', 1);
    program = line.slice(1, end === -1 ? undefined : end);
    i = end === -1 ? line.length : end + 1;
  } else {
    while (i < line.length && line[i] !== ' ' && line[i] !== '\t') program += line[i++];
  }
  const argv = [program];
  for (;;) {
    while (line[i] === ' ' || line[i] === '\t') i++;
    if (i >= line.length) return argv;
    let arg = '';
    let quoted = false;
    while (i < line.length && (quoted || (line[i] !== ' ' && line[i] !== '\t'))) {
      if (line[i] === '\\') {
        let n = 0;
        while (line[i] === '\\') {
          n++;
          i++;
        }
        if (line[i] === '"') {
          arg += '\\'.repeat(Math.floor(n / 2));
          if (n % 2 === 1) {
            arg += '"';
            i++;
          }
        } else arg += '\\'.repeat(n);
      } else if (line[i] === '"') {
        if (quoted && line[i + 1] === '"') {
          arg += '"';
          i += 2;
        } else {
          quoted = !quoted;
          i++;
        }
      } else arg += line[i++];
    }
    argv.push(arg);
  }
}


test('hostile arguments split back exactly as given', () => {
  const program = 'C:\\Program Files\\nodejs\\node.exe';
  const line = buildCommandLine(program, HOSTILE_ARGS);
  assert.deepEqual(splitCommandLine(line), [program, ...HOSTILE_ARGS]);
});

test('random arguments of blanks, quotes and backslashes round-trip', () => {
  const alphabet = ['a', ' ', '\t', '"', '\\', '%', 'é'];
  for (let n = 0; n < 2_000; n++) {
    const bytes = randomBytes(12);
    const args = [0, 1, 2].map((k) => [...bytes.subarray(4 * k, 4 * k + 1 + (bytes[4 * k]! % 4))].map((b) => alphabet[b % alphabet.length]).join(''));
    assert.deepEqual(splitCommandLine(buildCommandLine('prog.exe', args)), ['prog.exe', ...args], JSON.stringify(args));
  }
});

test('quoting leaves simple arguments alone and refuses what a command line cannot carry', () => {
  assert.equal(quoteArgument('simple'), 'simple');
  assert.equal(quoteArgument('a\\b'), 'a\\b', 'backslashes not before a quote are literal');
  assert.equal(quoteArgument(''), '""');
  assert.equal(quoteArgument('x\\'), 'x\\', 'unquoted: a trailing backslash stays single');
  assert.equal(quoteArgument('x y\\'), '"x y\\\\"', 'quoted: doubled before the closing quote');
  assert.throws(() => quoteArgument('a\0b'), WindowsArgumentError);
  assert.throws(() => buildCommandLine('p.exe', ['x'.repeat(40_000)]), /at most 32766/);
});

/** What cmd.exe parses outside quotes, where `& | < > ( ) ^` act; a `"` toggles (cmd has no escape for it). */
function outsideQuotes(line: string): string {
  let quoted = false;
  let out = '';
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted) out += ch;
  }
  return out;
}

test('a batch file runs as cmd.exe /d /e:ON /v:OFF /s /c: no metacharacter of an argument is outside quotes, and %* splits back exactly', () => {
  const script = 'C:\\tools\\run server.cmd';
  const prefix = 'C:\\Windows\\System32\\cmd.exe /d /e:ON /v:OFF /s /c "';
  const alphabet = ['a', ' ', '"', '\\', '&', '|', '<', '>', '^', '(', ')', '!', ',', 'é'];
  const cases = [['', 'x"&calc&"', 'a\\" & calc', 'tail\\'], ...Array.from({ length: 2_000 }, () => {
    const bytes = randomBytes(12);
    return [0, 1, 2].map((k) => [...bytes.subarray(4 * k, 4 * k + 1 + (bytes[4 * k]! % 4))].map((b) => alphabet[b % alphabet.length]).join(''));
  })];
  for (const args of cases) {
    const { application, commandLine } = windowsProgram(script, args, { SystemRoot: 'C:\\Windows' });
    assert.equal(application, 'C:\\Windows\\System32\\cmd.exe', 'cmd.exe from SystemRoot, not from a PATH search');
    assert.ok(commandLine.startsWith(prefix) && commandLine.endsWith('"'), commandLine);
    // What /s leaves to cmd: the script and its arguments.
    const inner = commandLine.slice(prefix.length, -1);
    assert.doesNotMatch(outsideQuotes(inner), /[&|<>^()]/, `${JSON.stringify(args)} -> ${inner}`);
    // The script handing %* on to a program: the MSVCRT split gives the arguments back.
    assert.deepEqual(splitCommandLine(inner), [script, ...args], inner);
  }
});

test('a batch file argument with %, a line break or NUL is refused, naming the argument; so is a script path cmd cannot take', () => {
  for (const [arg, why] of [
    ['%PATH%', /argument 2 contains '%'/],
    ['100%', /argument 2 contains '%'/],
    ['a\nb', /argument 2 contains a line break/],
    ['a\rb', /argument 2 contains a line break/],
    ['a\0b', /argument 2 contains a line break or NUL/],
  ] as const) {
    assert.throws(() => windowsProgram('C:\\x\\s.bat', ['ok', arg]), (e: Error) => e instanceof WindowsArgumentError && why.test(e.message), JSON.stringify(arg));
  }
  for (const script of ['C:\\100%\\s.bat', 'C:\\a"b\\s.cmd']) assert.throws(() => windowsProgram(script, []), /batch file path/);
  assert.doesNotThrow(() => windowsProgram('C:\\x\\prog.exe', ['%PATH%', 'a\nb']), 'a program (no cmd.exe) takes them literally');
});

test('the environment block is sorted without regard to case, unique by name, and ends in two NULs', () => {
  const block = environmentBlock({ b: '2', A: '1', Path: 'C:\\bin', PATH: 'ignored', _x: 'u' }, { SystemRoot: 'C:\\Windows' });
  const text = block.toString('utf16le');
  assert.ok(text.endsWith('\0\0'));
  const entries = text.slice(0, -2).split('\0');
  assert.deepEqual(entries, ['A=1', 'b=2', 'Path=C:\\bin', 'SystemRoot=C:\\Windows', '_x=u']);
  assert.equal(environmentBlock({}, {}).toString('utf16le'), '\0\0');
  assert.throws(() => environmentBlock({ 'A=B': '1' }, {}), /not valid on Windows/);
  assert.throws(() => environmentBlock({ A: 'x\0y' }, {}), /NUL/);
});
