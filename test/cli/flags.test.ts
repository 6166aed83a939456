// The core commands' flag parser: the same answers whatever does the tokenizing underneath.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../src/cli/flags.js';
import { UsageError } from '../../src/cli/usage.js';

const spec = { bool: ['json'], value: ['state-dir', 'args'], multi: ['approve'] };
const parse = (...argv: string[]) => parseFlags(argv, spec, 'call');

test('values inline and separate, repeatable values, booleans, positionals around them', () => {
  const f = parse('core', '--state-dir=/s', 'tool', '--json', '--approve', 'a', '--approve=b', '--args', '{"x":1}');
  assert.deepEqual(f.positionals, ['core', 'tool']);
  assert.equal(f.value.get('state-dir'), '/s');
  assert.equal(f.value.get('args'), '{"x":1}');
  assert.deepEqual(f.multi.get('approve'), ['a', 'b']);
  assert.ok(f.bool.has('json'));
  assert.equal(f.help, false);
});

test('a value may look like a flag or be empty; -- ends the flags; a single dash is a positional', () => {
  const f = parse('--args', '--json', '--state-dir=', '-', '-x', '-5', '--', '--json', '-h');
  assert.equal(f.value.get('args'), '--json');
  assert.equal(f.value.get('state-dir'), '');
  assert.equal(f.bool.has('json'), false);
  assert.deepEqual(f.positionals, ['-', '-x', '-5', '--json', '-h']);
});

test('-h and --help anywhere before --', () => {
  assert.equal(parse('core', '-h').help, true);
  assert.equal(parse('--help', 'core').help, true);
});

test('refusals name the flag and the fix', () => {
  const refused = (argv: string[], message: RegExp) => assert.throws(() => parse(...argv), (e: unknown) => e instanceof UsageError && message.test(e.message));
  refused(['--args'], /^--args needs a value; see supervisor call --help$/);
  refused(['--json=yes'], /^--json takes no value$/);
  refused(['--args', 'a', '--args=b'], /^--args given twice$/);
  refused(['--frobnicate'], /^unknown option --frobnicate for call; see supervisor call --help$/);
  refused(['--frobnicate=1'], /^unknown option --frobnicate for call/);
});
