// The command's surface: help that is true, clear errors, and honest "not implemented".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI } from '../helpers/procs.js';

const run = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

test('--help lists every command, and each command answers its own --help', () => {
  const r = run('--help');
  assert.equal(r.status, 0);
  for (const c of ['exec', 'doctor', 'reconcile', 'audit', 'run', 'catalog', 'call']) {
    assert.match(r.stdout, new RegExp(`^  ${c}\\b`, 'm'));
  }
  for (const c of ['exec', 'doctor', 'reconcile', 'run', 'catalog', 'call']) {
    const h = run(c, '--help');
    assert.equal(h.status, 0, `${c} --help`);
    assert.match(h.stdout, new RegExp(`supervisor ${c}`));
  }
});

test('an unknown command is a usage error naming it', () => {
  const r = run('frobnicate');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown command "frobnicate"/);
});


test('--version prints the package version', () => {
  const r = run('--version');
  assert.equal(r.status, 0);
  assert.match(r.stdout.trim(), /^\d+\.\d+\.\d+$/);
});
