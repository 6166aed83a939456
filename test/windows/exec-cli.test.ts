// `supervisor exec` on Windows (here under Wine): a tree-safe timeout through a Job Object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SKIP = process.platform === 'win32' ? false : `Windows only (process.platform is ${process.platform}); run it under Wine with npm run test:windows`;
const CLI = fileURLToPath(new URL('../../../bin/supervisor.js', import.meta.url));
const TREE = fileURLToPath(new URL('../../../test/fixtures/node-tree.mjs', import.meta.url));

test('exec --timeout kills a three-level tree on Windows and returns 124', { skip: SKIP, timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'supervisor-win-exec-'));
  try {
    // Three node starts under Wine on a loaded machine took over 3 s once: the timeout must leave
    // room for the whole tree to exist, or the test would prove less than it says.
    const r = spawnSync(process.execPath, [CLI, 'exec', '--json', '--timeout', '12', '--grace', '0.3', '--state-dir', dir, '--', process.execPath, TREE, '3', '--ignore-stdin-end'], {
      encoding: 'utf8',
      timeout: 50_000,
    });
    assert.equal(r.status, 124, r.stderr);
    const out = JSON.parse(r.stdout.trim());
    assert.equal(out.reason, 'timeout');
    assert.equal(out.killed.survivors, 0);
    assert.ok(out.killed.descendants >= 3, `the tree's descendants were killed: ${JSON.stringify(out.killed)}`);
    assert.match(out.stdout.tail, /ready/, 'the whole tree was running before the timeout');
    const pids = [...out.stdout.tail.matchAll(/pid (\d+)/g)].map((m: RegExpMatchArray) => Number(m[1]));
    assert.equal(pids.length, 3);
    assert.equal(out.pid, pids[0], "the pid exec reports is the command's own (suspended start, decision 85)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("exec at a terminal hands the command the supervisor's own stdin (an inheritable duplicate in the handle list)", { skip: SKIP, timeout: 60_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'supervisor-win-exec-'));
  try {
    const r = spawnSync(process.execPath, [CLI, 'exec', '--state-dir', dir, '--', process.execPath, '-e', "process.stdin.on('data', (c) => process.stdout.write('got:' + c))"], {
      encoding: 'utf8',
      input: 'hello from stdin',
      timeout: 50_000,
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /got:hello from stdin/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
