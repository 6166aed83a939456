// Fault injection, the disk (issue 16): the demo core runs with its state dir on a tiny tmpfs that
// fills up mid-run (ENOSPC / SQLITE_FULL). The run must end with one clear paragraph (no stack
// trace, exit 2, naming the state dir and the fix), leave no process behind, and keep its audit
// chain intact up to the last committed event; given room again, reconcile marks the session
// interrupted and `run --resume` finishes it. The tmpfs lives in a mount namespace of its own
// (`unshare -m`, root only); without one the test is skipped and says why.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { query, type Row } from '../helpers/store-query.js';
import { CLI, killMarked, markedPids, tempDir } from '../helpers/procs.js';

const require = createRequire(import.meta.url);
const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
/** Room for the session to start; the filler below takes the rest once the run is under way. */
const TMPFS_SIZE = '512k';

/**
 * Another writer on the same small disk: once the run has committed three events it takes every
 * free page, and keeps taking what is freed, until it is killed. Without it, whether the demo fills
 * 512 KiB depends on how far the WAL grows before a checkpoint resets it, a race with the
 * checkpointer that a loaded machine sometimes loses.
 */
const FILLER = `const [Sqlite, dir] = [require(process.argv[2]), process.argv[3]];
const fs = require('node:fs');
const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
for (;;) {
  try {
    const db = new Sqlite(dir + '/supervisor.db', { readonly: true, fileMustExist: true });
    try {
      if (db.prepare('SELECT count(*) AS n FROM runtime_events').get().n >= 3) break;
    } finally { db.close(); }
  } catch {}
  pause(20);
}
const fd = fs.openSync(dir + '/filler', 'w');
const page = Buffer.alloc(4096, 1);
const take = () => { try { for (;;) fs.writeSync(fd, page); } catch {} };
take();
setInterval(take, 10);
`;


/** Why a tmpfs cannot be mounted in a private mount namespace here, or null when it can. */
function whyNoTmpfs(): string | null {
  if (process.platform !== 'linux') return 'needs Linux mount namespaces';
  if (process.getuid?.() !== 0) return 'needs root to mount a tmpfs in a private mount namespace (unshare -m)';
  const probe = tempDir('enospc-probe-');
  try {
    const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs "$1"', 'sh', probe.path], { encoding: 'utf8' });
    if (r.error) return `unshare could not be run: ${r.error.message}`;
    if (r.status !== 0) return `a tmpfs cannot be mounted in a private mount namespace here: ${r.stderr.trim()}`;
    return null;
  } finally {
    probe.remove();
  }
}

function sh(script: string, args: string[], timeoutMs: number): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, 'sh', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 });

const skip = whyNoTmpfs();
describe('fault injection: the store on a tmpfs that fills up mid-run', { skip: skip ?? false }, () => {
  const work = tempDir('enospc-');
  const spawnIds = new Set<string>();
  after(() => {
    killMarked(spawnIds);
    work.remove();
  });

  test(`a ${TMPFS_SIZE} state dir: one clear paragraph, exit 2, no survivor, the chain intact up to its last commit; resume finishes it elsewhere`, async () => {
    const state = join(work.path, 'state');
    const copy = join(work.path, 'copy');
    mkdirSync(state, { mode: 0o700 });
    mkdirSync(copy, { mode: 0o700 });
    // Inside the namespace: mount, start the filler, run (bounded: a hang is a failure), try
    // reconcile on the full disk, then copy the store out before the namespace and its tmpfs go.
    const filler = join(work.path, 'filler.cjs');
    writeFileSync(filler, FILLER);
    const script = [
      'set -u',
      `mount -t tmpfs -o size=${TMPFS_SIZE},mode=0700 tmpfs "$1"`,
      `"${process.execPath}" "${filler}" "${require.resolve('better-sqlite3')}" "$1" & filler=$!`,
      `timeout -s KILL 120 "${process.execPath}" "${CLI}" run "${DEMO}" --state-dir "$1" >"$2/run.out" 2>"$2/run.err"; echo $? >"$2/run.rc"`,
      'kill $filler; wait $filler',
      `timeout -s KILL 60 "${process.execPath}" "${CLI}" reconcile --state-dir "$1" >"$2/reconcile.out" 2>"$2/reconcile.err"; echo $? >"$2/reconcile.rc"`,
      'rm -f "$1/filler"',
      'cp -a "$1/." "$2/copy/"',
    ].join('\n');
    const r = await sh(script, [state, work.path], 240_000);
    assert.equal(r.status, 0, `the namespace script failed: ${r.stderr}`);
    const read = (f: string): string => readFileSync(join(work.path, f), 'utf8');
    for (const row of query(copy, 'SELECT spawn_id FROM spawns')) spawnIds.add(String(row.spawn_id));

    // The run: one paragraph naming the state dir and the fix, an exit code of the documented set.
    const rc = Number(read('run.rc'));
    const err = read('run.err');
    assert.notEqual(rc, 137, `the run hung on the full disk and was killed after 120 s; stderr: ${err}`);
    assert.notEqual(rc, 0, `the ${TMPFS_SIZE} tmpfs did not fill up: the run completed`);
    assert.equal(rc, 2, `exit ${rc}; stderr: ${err}`);
    assert.doesNotMatch(err, /\n\s+at /, 'no stack trace');
    const lines = err.trim().split('\n');
    assert.equal(lines.length, 1, `one paragraph: ${err}`);
    assert.match(lines[0]!, /^supervisor: /);
    assert.ok(lines[0]!.includes(state), `names the state dir: ${err}`);
    assert.match(lines[0]!, /full/);
    assert.match(lines[0]!, /free space .*--state-dir/);

    // Reconcile on the still-full disk: the same kind of answer, never a stack or a hang.
    const rrc = Number(read('reconcile.rc'));
    const rerr = read('reconcile.err');
    assert.ok(rrc === 0 || rrc === 2, `reconcile on the full disk: exit ${rrc}; ${rerr}`);
    assert.doesNotMatch(rerr, /\n\s+at /);

    // Nothing the run started is alive.
    for (const id of spawnIds) assert.deepEqual(markedPids(id), [], `a process marked ${id} survived the full disk`);

    // The copy, in a roomy place: the chain holds up to the last committed event, intact.
    // The demo's own session (its last turn starts a child session, which may exist too).
    const sessions = query(copy, "SELECT id, status FROM sessions WHERE id NOT IN (SELECT child_session_id FROM tasks WHERE child_session_id IS NOT NULL)");
    assert.equal(sessions.length, 1, 'the session was created before the disk filled');
    const session = String(sessions[0]!.id);
    const events = query(copy, 'SELECT seq, kind FROM runtime_events WHERE session_id = ? ORDER BY seq', session);
    const head = query(copy, 'SELECT seq FROM chain_heads WHERE session_id = ?', session)[0];
    assert.ok(events.length >= 2, `the run got going before the disk filled: ${events.length} event(s)`);
    assert.equal(head?.seq, events.length, 'the head names the last committed event');
    // Mid-run: the demo has six user turns; the disk filled before the fifth one ended. (The run may
    // still have ended its session with the failure: that write can reuse WAL pages already held.)
    const kinds = events.map((e) => String(e.kind));
    assert.ok(kinds.filter((k) => k === 'turn.ended').length < 5, `the disk filled mid-run: ${kinds.join(' ')}; ${err}`);
    const v = cli(['audit', 'verify', '--json', '--state-dir', copy]);
    assert.equal(v.status, 0, v.stdout + v.stderr);
    assert.equal((JSON.parse(v.stdout) as { intact: number }).intact, 1);

    // With room: the dead run's session is interrupted with the reason, and resume finishes it.
    const rec = cli(['reconcile', '--json', '--state-dir', copy]);
    assert.equal(rec.status, 0, rec.stderr);
    const after_ = query(copy, 'SELECT status, end_reason FROM sessions WHERE id = ?', session)[0]!;
    if (sessions[0]!.status === 'running') {
      assert.equal(after_.status, 'interrupted');
      assert.match(String(after_.end_reason), /stopped without ending it/);
    }
    const resumed = cli(['run', DEMO, '--resume', session, '--json', '--state-dir', copy]);
    for (const row of query(copy, 'SELECT spawn_id FROM spawns')) spawnIds.add(String(row.spawn_id));
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.equal(query(copy, 'SELECT status FROM sessions WHERE id = ?', session)[0]!.status, 'completed');
    assert.equal(cli(['audit', 'verify', '--session', session, '--state-dir', copy]).status, 0);
  });
});
