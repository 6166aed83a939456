// doctor's spawnPath and syntaxCheck lines: each found by doing the thing, not by reading a flag.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probeSpawnPath } from '../../src/process/spawn-path-probe.js';
import { probeSyntaxCheck } from '../../src/core/module-syntax.js';
import { ProbeChildren } from '../../src/process/probe-children.js';
import { markedPids } from '../helpers/procs.js';

const env = { PATH: '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: `spawn-path-probe-${process.pid}` };

async function withSpawnSetting<T>(value: string | undefined, fn: () => Promise<T>): Promise<T> {
  const before = process.env.SUPERVISOR_SPAWN;
  if (value === undefined) delete process.env.SUPERVISOR_SPAWN;
  else process.env.SUPERVISOR_SPAWN = value;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env.SUPERVISOR_SPAWN;
    else process.env.SUPERVISOR_SPAWN = before;
  }
}

test('spawnPath names the path each kind of tree takes, after starting and reaping a child on it', { skip: process.platform !== 'linux' && 'posix_spawn paths are Linux only' }, async () => {
  const usual = await withSpawnSetting(undefined, () => probeSpawnPath(env));
  assert.equal(usual.ok, true, usual.detail);
  assert.match(usual.detail, /posix_spawn on a thread of its own for background tasks, on the main thread for other plain trees/);
  const mainThread = await withSpawnSetting('main-thread', () => probeSpawnPath(env));
  assert.match(mainThread.detail, /^posix_spawn on the main thread .*SUPERVISOR_SPAWN=main-thread/);
  const node = await withSpawnSetting('node', () => probeSpawnPath(env));
  assert.match(node.detail, /^Node spawn\(\) for every tree \(SUPERVISOR_SPAWN=node\)/);
  // Every probe child was reaped: none carries the probe's marker any more.
  assert.deepEqual(markedPids(env.SUPERVISOR_SPAWN_ID), []);
});

test('syntaxCheck finds a known syntax error at its line', async () => {
  const children = new ProbeChildren();
  const r = await probeSyntaxCheck(children).finally(() => children.close());
  assert.equal(r.ok, true, r.detail);
  assert.match(r.detail, /line 2/);
});
