// The lifecycle layer against real hostile process trees, with and without a per-tree cgroup.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ProcessSupervisor, SpawnError, type SpawnTreeOptions, type SupervisedTree } from '../../src/process/index.js';
import { spawn } from 'node:child_process';
import { alive, fixture, markedPids, waitFor } from '../helpers/procs.js';
import { linuxSupervisorSuite } from './supervisor-suite.js';

const started = new Set<string>();

function track(t: SupervisedTree): SupervisedTree {
  started.add(t.spawnId);
  return t;
}

/** Spawns a fixture and resolves once it printed `ready` (its traps and children are in place). */
async function spawnReady(sup: ProcessSupervisor, opts: SpawnTreeOptions): Promise<SupervisedTree> {
  let out = '';
  let ready!: () => void;
  const printed = new Promise<void>((r) => (ready = r));
  const tree = track(
    sup.spawnTree({
      ...opts,
      onStdout: (c) => {
        out += c.toString();
        if (out.includes('ready')) ready();
      },
    }),
  );
  await Promise.race([printed, tree.done.then(() => Promise.reject(new Error(`${opts.command} ended before it was ready`)))]);
  return tree;
}

async function waitReady(tree: SupervisedTree, count: number): Promise<number[]> {
  return waitFor(`${count} marked processes of ${tree.spawnId}`, () => {
    const pids = markedPids(tree.spawnId);
    return pids.length >= count ? pids : null;
  });
}

for (const mode of ['cgroup', 'no-cgroup'] as const) {
  describe(`lifecycle (${mode})`, () => {
    let sup!: ProcessSupervisor;
    linuxSupervisorSuite(mode, started, (s) => (sup = s));

    test('a spawn record exists as soon as the pid does and is final when the tree is gone', async () => {
      const tree = track(sup.spawnTree({ command: 'sleep', args: ['30'], graceMs: 200 }));
      const rec = sup.records.get(tree.spawnId);
      assert.ok(rec, 'record written synchronously by spawnTree');
      assert.equal(rec.status, 'running');
      assert.equal(rec.pid, tree.pid);
      assert.equal(rec.pgid, tree.pid);
      assert.equal(rec.startMarker, `linux:${tree.startMarker.bootId}:${tree.startMarker.startTime}`);
      assert.equal(rec.cgroup, tree.cgroup);
      assert.match(tree.spawnId, /^sp_[0-9a-f]{24}$/);
      // posix_spawn returns once the child is past execve's point of no return; the kernel sets the
      // new image's environment bounds a moment later, so /proc may show it empty for that moment.
      await waitFor('the marker in the child’s environment', () => readFileSync(`/proc/${tree.pid}/environ`, 'latin1').split('\0').includes(`SUPERVISOR_SPAWN_ID=${tree.spawnId}`) || null, 2_000);
      const out = await tree.stop();
      assert.equal(out.reason, 'cancelled');
      const fin = sup.records.get(tree.spawnId)!;
      assert.equal(fin.status, 'cancelled');
      assert.ok(fin.endedAt! >= fin.startedAt);
    });

    test('a child that ignores SIGTERM is killed after the grace', async () => {
      const tree = await spawnReady(sup, { command: fixture('ignore-term.sh'), graceMs: 300 });
      await waitReady(tree, 1);
      const t0 = Date.now();
      const out = await tree.stop();
      const took = Date.now() - t0;
      assert.equal(out.reason, 'cancelled');
      assert.equal(out.signal, 'SIGKILL');
      assert.ok(took >= 280, `KILL came only after the grace (took ${took} ms)`);
      assert.equal(out.killed.survivors, 0);
      assert.deepEqual(markedPids(tree.spawnId), []);
    });

    test('a child that forks 20 children loses all of them', async () => {
      const tree = await spawnReady(sup, { command: fixture('fork-20.sh'), graceMs: 500 });
      await waitReady(tree, 21);
      const out = await tree.stop();
      assert.equal(out.killed.descendants, 20);
      assert.equal(out.killed.survivors, 0);
      assert.deepEqual(markedPids(tree.spawnId), []);
    });

    test('a double-forked grandchild re-parented to the supervisor is killed and reaped', async () => {
      const tree = await spawnReady(sup, { command: fixture('double-fork.sh'), graceMs: 500 });
      await waitReady(tree, 2);
      // The subshell that forks the orphan exits right after; on a loaded machine it can still be
      // there (and be the orphan's parent) when the tree is first seen ready. Wait for it to go.
      const ppidOf = (pid: number): number => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        } catch {
          return -1; // gone since it was listed
        }
      };
      // The orphan: a marked process whose parent is no longer one of the tree's (the leader's own
      // foreground sleep keeps the leader as its parent). Re-parented to init would fail below.
      const orphan = await waitFor('the orphan re-parented out of the tree', () => {
        const marked = markedPids(tree.spawnId);
        return marked.find((p) => p !== tree.pid && !marked.includes(ppidOf(p))) ?? null;
      });
      assert.equal(ppidOf(orphan), process.pid, 'the subreaper adopted the orphan');
      const out = await tree.stop();
      assert.ok(out.killed.escapees >= 1);
      assert.deepEqual(markedPids(tree.spawnId), []);
      // Reaped, not a zombie: its /proc entry is gone.
      assert.throws(() => readFileSync(`/proc/${orphan}/stat`), /ENOENT/);
    });

    test('a setsid escapee that ignores TERM and holds stdout is killed at the timeout', async () => {
      const tree = track(sup.spawnTree({ command: fixture('setsid-escapee.sh'), graceMs: 200, timeoutMs: 800 }));
      const out = await tree.done;
      assert.equal(out.reason, 'timeout');
      assert.ok(out.killed.escapees >= 1, `escapees: ${JSON.stringify(out.killed)}`);
      assert.equal(out.killed.survivors, 0);
      assert.match(out.stdout.tail, /tick/);
      // Bounded by the timeout and the grace, not by the escapee (it would tick for ever, the leader
      // sleeps 300 s). The slack is for a loaded machine: 2.75 s was measured at load 25 for a 1 s bound.
      assert.ok(out.durationMs < 800 + 200 + 5000, `bounded: ${out.durationMs} ms`);
      assert.deepEqual(markedPids(tree.spawnId), []);
    });

    test('an escapee with an empty environment, setsid and a dead parent is still found', async () => {
      const tree = await spawnReady(sup, { command: fixture('clear-env-escapee.sh'), graceMs: 200 });
      // `ready` is printed after the double fork; give the grandchild its exec of env -i setsid sleep.
      const before = Date.now();
      await waitFor('the unmarked escapee', () => Date.now() - before > 200);
      const out = await tree.stop();
      assert.ok(out.killed.escapees >= 1, `found the unmarked escapee: ${JSON.stringify(out.killed)}`);
      assert.equal(out.killed.survivors, 0);
    });

    test('a child that other code in the supervisor spawned is never claimed as an orphan', async () => {
      const tree = await spawnReady(sup, { command: fixture('clear-env-escapee.sh'), graceMs: 200 });
      // Started after the tree, a detached direct child with no marker: it looks like an orphan.
      const bystander = spawn('sleep', ['30'], { detached: true, stdio: 'ignore', env: {} });
      try {
        await waitFor('the bystander to run', () => readFileSync(`/proc/${bystander.pid}/cmdline`, 'latin1').startsWith('sleep'));
        const out = await tree.stop();
        assert.ok(out.killed.escapees >= 1, 'the real escapee is still found');
        assert.equal(alive(bystander.pid!), true, 'the bystander was left alone');
      } finally {
        bystander.kill('SIGKILL');
      }
    });

    test('a leader that exits at once: its grandchildren are killed and the drain is bounded', async () => {
      const tree = track(sup.spawnTree({ command: fixture('exit-leaving-grandchildren.sh'), graceMs: 200, drainAfterExitMs: 300 }));
      const out = await tree.done;
      assert.equal(out.reason, 'exited');
      assert.equal(out.exitCode, 0);
      assert.equal(out.killed.descendants, 3);
      assert.ok(out.killed.escapees >= 1);
      assert.match(out.stdout.tail, /ready/);
      assert.ok(out.durationMs < 2000, `drain after exit is bounded: ${out.durationMs} ms`);
      assert.deepEqual(markedPids(tree.spawnId), []);
    });

    test('concurrent cancels share one outcome', async () => {
      const tree = await spawnReady(sup, { command: fixture('ignore-term.sh'), graceMs: 200 });
      await waitReady(tree, 1);
      const [a, b, c] = await Promise.all([tree.stop('cancelled'), tree.stop('timeout'), tree.stop()]);
      assert.equal(a, b);
      assert.equal(b, c);
      assert.equal(a.reason, 'cancelled');
      assert.equal(await tree.stop('timeout'), a, 'a stop after the end returns the same outcome');
    });

    test('a flood of output is counted exactly, bounded in memory, and written to a 0600 artifact', async () => {
      const mib = 256; // hundreds of MB: memory stays bounded, counters stay exact
      const tree = track(sup.spawnTree({ command: process.execPath, args: [fixture('flood.mjs'), String(mib)] }));
      const out = await tree.done;
      assert.equal(out.reason, 'exited');
      assert.equal(out.stdout.bytes, mib * 1024 * 1024);
      assert.equal(out.stdout.chars, mib * 1024 * 1024);
      assert.equal(out.stdout.truncated, true);
      assert.equal(out.stdout.tail.length, 12_000);
      const file = join(out.artifacts!.root, out.artifacts!.stdout);
      const st = statSync(file);
      assert.equal(st.size, mib * 1024 * 1024);
      assert.equal(st.mode & 0o777, 0o600);
      assert.equal(statSync(out.artifacts!.root).mode & 0o777, 0o700);
      assert.ok(out.artifacts!.root.startsWith(join(sup.stateDir, 'artifacts')), 'root derived from the state dir');
    });

    test('a secret printed one byte per write is redacted from the tail and the artifact', async () => {
      const secret = 'hunter2-sEcReT-ü-value';
      const tree = track(
        sup.spawnTree({ command: process.execPath, args: [fixture('split-secret.mjs'), secret, '1'], redact: [secret] }),
      );
      const out = await tree.done;
      assert.equal(out.reason, 'exited');
      assert.ok(!out.stdout.tail.includes(secret));
      assert.match(out.stdout.tail, /^before:\[REDACTED\]:after\n$/);
      const art = readFileSync(join(out.artifacts!.root, out.artifacts!.stdout), 'utf8');
      assert.equal(art, 'before:[REDACTED]:after\n');
    });

    test('exit codes and signals of the leader are reported', async () => {
      const a = await track(sup.spawnTree({ command: 'sh', args: ['-c', 'echo out; echo err >&2; exit 7'] })).done;
      assert.equal(a.exitCode, 7);
      assert.equal(a.stdout.tail, 'out\n');
      assert.equal(a.stderr.tail, 'err\n');
      const b = await track(sup.spawnTree({ command: 'sh', args: ['-c', 'kill -KILL $$'] })).done;
      assert.equal(b.exitCode, null);
      assert.equal(b.signal, 'SIGKILL');
      assert.equal(b.reason, 'exited');
    });

    test('an unknown command is a clear spawn error and nothing is recorded as running', () => {
      assert.throws(
        () => sup.spawnTree({ command: 'definitely-not-a-command-xyz', env: { PATH: '/usr/bin:/bin' } }),
        (e: unknown) => e instanceof SpawnError && e.code === 'COMMAND_NOT_FOUND' && /definitely-not-a-command-xyz/.test(e.message),
      );
      assert.equal(sup.records.running().length, 0);
    });

    test('an abort signal cancels the tree', async () => {
      const ac = new AbortController();
      const tree = await spawnReady(sup, { command: fixture('fork-20.sh'), graceMs: 200, signal: ac.signal });
      await waitReady(tree, 21);
      ac.abort();
      const out = await tree.done;
      assert.equal(out.reason, 'cancelled');
      assert.deepEqual(markedPids(tree.spawnId), []);
    });
  });
}
