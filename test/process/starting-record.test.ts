// Decision 59: a leader spawned off the event loop is on record (`starting`) before it exists. A
// supervisor SIGKILLed after the spawn but before the pid is recorded leaves a tree that nothing
// names by pid; the next start's reconcile finds it by its cgroup and its SUPERVISOR_SPAWN_ID
// marker, kills all of it and marks the row interrupted.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ProcessSupervisor } from '../../src/process/index.js';
import { LinuxPlatform } from '../../src/process/linux/linux-platform.js';
import type { SpawnedLeader } from '../../src/process/platform.js';
import { alive, killMarked, markedPids, tempDir, waitFor } from '../helpers/procs.js';

const scenario = fileURLToPath(new URL('../scenarios/starting-then-hang.js', import.meta.url));
const require = createRequire(import.meta.url);
const Sqlite = require('better-sqlite3') as new (f: string, o: { readonly: boolean }) => { prepare(s: string): { all(): Record<string, unknown>[] }; close(): void };

function rows(state: string): Record<string, unknown>[] {
  const db = new Sqlite(`${state}/supervisor.db`, { readonly: true });
  try {
    return db.prepare('SELECT spawn_id, pid, status, cgroup, detail FROM spawns').all();
  } finally {
    db.close();
  }
}

describe('a tree whose spawn is still on its thread (starting record, no pid yet)', { skip: process.platform !== 'linux' }, () => {
  for (const mode of ['cgroups', 'no-cgroups'] as const) {
    test(`leaves no survivor after reconcile (${mode})`, async () => {
      const dir = tempDir();
      let spawnId = '';
      const child = spawn(process.execPath, [scenario, dir.path, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
      try {
        let out = '';
        child.stdout.on('data', (c: Buffer) => (out += c.toString()));
        const leader = Number(await waitFor('the tree to be spawned', () => /spawned (\d+)/.exec(out)?.[1] ?? (out.includes('no-async') ? '-1' : null), 20_000));
        assert.ok(leader > 0, 'the platform spawns off the event loop here');
        const [row] = rows(dir.path);
        assert.equal(row?.status, 'starting');
        assert.equal(row?.pid, null, 'the pid was never recorded');
        spawnId = String(row!.spawn_id);
        // The leader (sleep 61) and its child (sleep 60) run, both marked.
        await waitFor('leader and grandchild to carry the marker', () => markedPids(spawnId).length >= 2);
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
        assert.ok(alive(leader), 'the tree outlived its supervisor');

        const sup = ProcessSupervisor.open({ stateDir: dir.path, platform: new LinuxPlatform({ cgroups: mode === 'cgroups' }) });
        try {
          const report = sup.lastReconcile!;
          const entry = report.interrupted.find((e) => e.spawnId === spawnId);
          assert.ok(entry, 'the starting row was reconciled');
          assert.ok(entry.killed >= 2, `both processes were killed (${entry.killed})`);
          await waitFor('no marked survivor', () => markedPids(spawnId).length === 0);
          assert.equal(alive(leader), false);
          const after = rows(dir.path).find((r) => r.spawn_id === spawnId)!;
          assert.equal(after.status, 'interrupted');
          assert.match(String(after.detail), /while the tree was starting/);
        } finally {
          await sup.close();
        }
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        if (spawnId) killMarked([spawnId]);
        dir.remove();
      }
    });
  }

  test('a forced shutdown while the spawn is on its thread kills that tree by marker, and the spawn then fails', async () => {
    const dir = tempDir();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let spawned!: (pid: number) => void;
    const leaderPid = new Promise<number>((r) => (spawned = r));
    class Gate extends LinuxPlatform {
      override spawnLeaderAsync(c: string, a: readonly string[], o: { cwd: string; env: Readonly<Record<string, string>> }): Promise<SpawnedLeader> | null {
        const p = super.spawnLeaderAsync(c, a, o);
        return p && p.then(async (l) => (spawned(l.pid), await gate, l));
      }
    }
    const sup = ProcessSupervisor.open({ stateDir: dir.path, platform: new Gate({ cgroups: false }) });
    let spawnId = '';
    try {
      const tree = sup.spawnTreeAsync({ command: '/bin/sh', args: ['-c', 'sleep 60 & exec sleep 61'], artifacts: false });
      const leader = await leaderPid;
      assert.ok(leader > 0, 'the platform spawns off the event loop here');
      const [row] = rows(dir.path);
      assert.equal(row?.status, 'starting');
      spawnId = String(row!.spawn_id);
      await waitFor('leader and grandchild to carry the marker', () => markedPids(spawnId).length >= 2);
      const n = sup.killAllSync();
      assert.ok(n >= 2, `killAllSync counted the starting tree's processes (${n})`);
      await waitFor('no marked survivor', () => markedPids(spawnId).length === 0);
      assert.equal(alive(leader), false);
      assert.equal(rows(dir.path)[0]?.status, 'cancelled');
      release();
      await assert.rejects(tree, /shut down while the tree was starting/);
    } finally {
      release();
      if (spawnId) killMarked([spawnId]);
      await sup.close();
      dir.remove();
    }
  });
});
