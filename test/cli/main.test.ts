// The command's surface: help that is true, clear errors, and honest "not implemented".
// Checked in-process through main(argv, io) (test/helpers/cli.ts); the last tests start the real
// binary, bin/supervisor.js, for the same answers: the launcher, the exit code a process returns,
// and the streams it writes to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/procs.js';
import { runMain as run } from '../helpers/cli.js';

const spawnCli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

test('--help lists every command, and each command answers its own --help', async () => {
  const r = await run('--help');
  assert.equal(r.status, 0);
  for (const c of ['exec', 'doctor', 'reconcile', 'audit', 'run', 'catalog', 'call']) {
    assert.match(r.stdout, new RegExp(`^  ${c}\\b`, 'm'));
  }
  for (const c of ['exec', 'doctor', 'reconcile', 'run', 'catalog', 'call']) {
    const h = await run(c, '--help');
    assert.equal(h.status, 0, `${c} --help`);
    assert.match(h.stdout, new RegExp(`supervisor ${c}`));
  }
});

test('an unknown command is a usage error naming it', async () => {
  const r = await run('frobnicate');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown command "frobnicate"/);
});

test('--version prints the package version', async () => {
  const r = await run('--version');
  assert.equal(r.status, 0);
  assert.match(r.stdout.trim(), /^\d+\.\d+\.\d+$/);
});

test('the real binary: --help, a command\'s --help, a usage error (exit 2 on stderr), --version', () => {
  const r = spawnCli('--help');
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
  for (const c of ['exec', 'doctor', 'reconcile', 'audit', 'run', 'catalog', 'call']) {
    assert.match(r.stdout, new RegExp(`^  ${c}\\b`, 'm'));
  }
  // A command whose module is imported on demand (the MCP SDK, the pipeline).
  const h = spawnCli('run', '--help');
  assert.equal(h.status, 0, 'run --help');
  assert.match(h.stdout, /supervisor run/);
  const u = spawnCli('frobnicate');
  assert.equal(u.status, 2);
  assert.equal(u.stdout, '');
  assert.match(u.stderr, /unknown command "frobnicate"/);
  const v = spawnCli('--version');
  assert.equal(v.status, 0);
  assert.match(v.stdout.trim(), /^\d+\.\d+\.\d+$/);
});

test('in-process and the real binary print the same help and the same usage error', async () => {
  for (const args of [['--help'], ['exec', '--help'], ['frobnicate']]) {
    const a = await run(...args);
    const b = spawnCli(...args);
    assert.deepEqual([a.status, a.stdout, a.stderr], [b.status, b.stdout, b.stderr], args.join(' '));
  }
});

test('a core with several issues is printed one issue per line, as docs/core-format.md shows; control characters in them stay escaped', async () => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'cli-issues-'));
  try {
    // Two unknown keys, one spelled with ESC[2J (YAML's "\e"): two issues in one CoreLoadError.
    writeFileSync(join(dir, 'agent.yaml'), 'name: t\nnmae: x\n"\\e[2Jdescr": y\n');
    const r = spawnCli('catalog', dir);
    assert.equal(r.status, 2, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    assert.match(lines[0]!, /^supervisor: core .* is invalid \(2 issues\):$/);
    assert.equal(lines.length, 3, r.stderr);
    assert.match(lines[1]!, /^  agent\.yaml:2:1: /);
    assert.match(lines[2]!, /^  agent\.yaml:3:1: .*\\x1b\[2Jdescr/);
    assert.equal(r.stderr.includes('\x1b'), false, 'no raw escape reaches the terminal');
    assert.equal(r.stderr.includes('\\n'), false, 'no newline shown as \\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
