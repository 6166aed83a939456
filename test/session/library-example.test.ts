// The example docs/library.md shows is examples/library/call-terminal.mjs, byte for byte, and it
// runs: a child process imports the package by name, opens a session, has its approver asked once,
// gets the terminal's result and closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE = join(ROOT, 'examples', 'library', 'call-terminal.mjs');

test('docs/library.md shows the example file as it is', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8');
  const source = readFileSync(EXAMPLE, 'utf8');
  assert.ok(doc.includes('```js\n' + source + '```\n'), 'docs/library.md holds examples/library/call-terminal.mjs verbatim in a js block');
  assert.ok(doc.includes('node examples/library/call-terminal.mjs'), 'and says how to run it');
});

test('the library example runs: the approver is asked for the terminal, the command runs, the session closes', () => {
  const r = spawnSync(process.execPath, [EXAMPLE], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('approval asked:')),
    ['approval asked: terminal: echo hello from a supervised tree -> yes'],
    'the approver is asked exactly once, for the exact command',
  );
  const at = lines.indexOf('result (ok):');
  assert.ok(at >= 0, `a successful result is printed: ${r.stdout}`);
  assert.match(lines.slice(at + 1).join('\n'), /hello from a supervised tree/, 'the command ran and its output is in the model view');
  assert.match(r.stdout, /^session se_\S+: \d+ tool\(s\) in its catalog$/m);
  assert.equal(r.stderr, '', 'nothing on stderr');
});
