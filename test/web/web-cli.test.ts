// `supervisor web`'s parsing, help and usage errors, in-process (main(argv, io)).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMain } from '../helpers/cli.js';

describe('supervisor web: flags', () => {
  test('--help says what it serves, its options, and how it signs in', async () => {
    const r = await runMain('web', '--help');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^Usage: supervisor web \[--port N \| --socket PATH\] \[--state-dir DIR \| --store URL\] \[--open\] \[--json\]/);
    assert.match(r.stdout, /token in its\nfragment works once/);
    assert.match(r.stdout, /--socket PATH {4}listen on a UNIX socket instead \(0600/);
    assert.match(r.stdout, /--open {11}open the URL in a browser: \$BROWSER if set/);
    assert.match((await runMain('--help')).stdout, /\n {2}web \[--port N \| --socket PATH\]/);
    assert.match((await runMain('--help')).stdout, /\n {2}ps \[--json\] /);
  });

  test('supervisor ps: --help says what it lists; an argument is a usage error', async () => {
    const r = await runMain('ps', '--help');
    assert.equal(r.status, 0);
    assert.match(r.stdout, /^Usage: supervisor ps \[--json\] \[--state-dir DIR\]\n\nLists the process trees your runs hold now/);
    assert.match(r.stdout, /program name \(never its arguments\), age, CPU time,\nresident memory/);
    assert.match(r.stdout, /n\/a where this OS does not say\n\(Linux: \/proc; macOS: ps; Windows: /);
    assert.match(r.stdout, /supervisor cancel <spawn id> stops a whole tree, a task's or a running call's/);
    const extra = await runMain('ps', 'extra');
    assert.equal(extra.status, 2);
    assert.match(extra.stderr, /ps takes no arguments; see supervisor ps --help/);
  });

  test('a bad port, an argument, or a state dir without a store: exit 2 naming the fix', async () => {
    const port = await runMain('web', '--port', '70000');
    assert.equal(port.status, 2);
    assert.match(port.stderr, /--port must be a whole number from 0 to 65535, got "70000"/);
    assert.equal((await runMain('web', 'extra')).status, 2);
    const dir = mkdtempSync(join(tmpdir(), 'web-cli-'));
    try {
      const none = await runMain('web', '--state-dir', dir);
      assert.equal(none.status, 2);
      assert.match(none.stderr, /no store at .*supervisor\.db; run a session first, or pass --state-dir/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
