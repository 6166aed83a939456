// A kill by stale record must never hit a process that reused the pid. Reuse is forced inside a
// private pid namespace (never on the host's), where ns_last_pid is ours to write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../helpers/procs.js';

const scenario = fileURLToPath(new URL('../scenarios/pid-reuse.js', import.meta.url));

test('a reused pid is never signalled, by a stale handle or by reconciliation', () => {
  const probe = spawnSync('unshare', ['-p', '-f', '--mount-proc', 'true']);
  if (probe.status !== 0) {
    // Without private pid namespaces the reuse cannot be forced safely; say so, never pass silently.
    assert.fail(`unshare -p -f --mount-proc is not usable here (${probe.stderr.toString().trim()}); run as root or with user namespaces`);
  }
  const dir = tempDir();
  try {
    const r = spawnSync('unshare', ['-p', '-f', '--mount-proc', process.execPath, scenario, dir.path], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 0, `scenario failed: ${r.stderr}`);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!);
    assert.equal(out.reused, true, `pid reuse was forced (old ${out.oldPid}, new ${out.strangerPid})`);
    assert.equal(out.strangerPgid, out.oldPid, 'the stranger leads a group with the stale pgid');
    assert.equal(out.aliveAfterStaleKill, true, 'the stale in-process kill left the stranger alone');
    assert.equal(out.staleKillTally, 0, 'the stale kill found no member');
    assert.equal(out.aliveAfterReconcile, true, 'reconciliation left the stranger alone');
    assert.equal(out.report.interrupted.length, 1);
    assert.equal(out.report.interrupted[0].leaderMatched, false);
    assert.equal(out.report.interrupted[0].killed, 0);
    assert.equal(out.statusAfter, 'interrupted');
  } finally {
    dir.remove();
  }
});
