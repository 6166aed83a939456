// The Windows command line and environment block, on every OS: built here, split back by a parser
// that follows the MSVCRT rules (the same rules the Wine test checks against a real child).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { buildCommandLine, environmentBlock, quoteArgument, WindowsArgumentError } from '../../src/process/win32/command-line.js';
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
