// `supervisor cancel sp_…` from another terminal: a running `supervisor run` whose model's
// foreground terminal call holds a tree with an escapee (setsid); the command asks the run that owns
// it to stop it, the whole tree is gone, the call returns a cancelled result, the cancel is in the
// session's audit chain, and the run goes on to its end. The refusals are checked against the live
// tree and a foreign principal's record: nothing is requested, nothing is stopped.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { alive, CLI, fixture, markedPids, tempDir, waitFor } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { foregroundCallCore } from '../helpers/foreground-call-core.js';
import { openStore, SessionStore, SpawnRecordStore, verifyChain } from '../../src/store/index.js';
import { readStat } from '../../src/process/linux/procfs.js';
import { localPrincipal } from '../../src/session/principal.js';

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });

/** A bound on how long a run takes to reach its call on a loaded machine, not a measurement. */
const REACH_MS = 90_000;

describe('supervisor cancel <spawn id>', { skip: process.platform !== 'linux' && 'POSIX shell commands and /proc' }, () => {
  const dirs: { remove(): void }[] = [];
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test("stops a foreground call's whole tree (escapee included), records it in the audit chain, and the run goes on; refuses malformed, unknown, foreign and ended ids", async () => {
    const state = tempDir('tree-cancel-');
    dirs.push(state);
    const run = spawn(process.execPath, [CLI, 'run', foregroundCallCore('setsid sleep 301 & sleep 302'), '--approve', 'terminal', '--json', '--state-dir', state.path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout.on('data', (c) => (out += c));
    run.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => run.once('close', r));
    const db = await waitFor('the run to open its store', () => {
      try {
        return openStore(join(state.path, 'supervisor.db'), { checkpointer: false });
      } catch {
        return null;
      }
    }, REACH_MS);
    try {
      const spawnId = await waitFor("the call's tree", () => (db.prepare("SELECT spawn_id FROM spawns WHERE status = 'running' AND command LIKE '%sh'").pluck().get() as string | undefined) ?? null, REACH_MS);
      const pids = await waitFor('both sleeps', () => {
        const p = markedPids(spawnId);
        return p.filter((pid) => readStat(pid)?.name === 'sleep').length === 2 ? p : null;
      }, REACH_MS);
      const requested = () => db.prepare('SELECT cancel_requested_at FROM spawns WHERE spawn_id = ?').pluck().get(spawnId);

      // Refusals: each says why on stderr, exits 2, and nothing is asked of the run.
      const malformed = cli('cancel', 'sp_../../etc', '--json', '--state-dir', state.path);
      assert.equal(malformed.status, 2, malformed.stderr);
      assert.equal(JSON.parse(malformed.stdout).refused, 'malformed');
      assert.match(malformed.stderr, /is not a spawn id \(sp_ and 24 hex digits/);
      const forged = cli('cancel', 'sp_\x1b]0;pwned\x07\u202e', '--state-dir', state.path);
      assert.equal(forged.status, 2);
      assert.match(forged.stderr, /sp_\\x1b\]0;pwned\\x07\\u202e is not a spawn id/, 'the id is shown escaped');
      assert.doesNotMatch(forged.stderr, /[\x1b\x07\u202e]/, 'no raw control or bidi character reaches the terminal');
      const unknown = cli('cancel', 'sp_0123456789abcdef01234567', '--state-dir', state.path);
      assert.equal(unknown.status, 2);
      assert.match(unknown.stderr, /no live process tree sp_0123456789abcdef01234567 of yours/);
      // Another principal's live tree (its session and record as their run would write them) reads as unknown.
      const owner = { pid: 2_000_000_000, startMarker: 'linux:foreign-boot:1' };
      new SessionStore(db).createSession({ principal: 'mallory' }, { coreDir: '/tmp/core', coreRevision: 'rev', runtime: 'local', owner });
      const foreign = 'sp_f0f0f0f0f0f0f0f0f0f0f0f0';
      new SpawnRecordStore(db).insert({ spawnId: foreign, pid: pids[0]!, pgid: pids[0]!, sid: pids[0]!, platform: 'linux', bootId: 'foreign-boot', startMarker: 'linux:foreign-boot:1', cgroup: null, command: 'sh', ownerPid: owner.pid, ownerStartMarker: owner.startMarker, startedAt: Date.now() });
      const theirs = cli('cancel', foreign, '--json', '--state-dir', state.path);
      assert.equal(theirs.status, 2, theirs.stderr);
      assert.equal(JSON.parse(theirs.stdout).refused, 'not-found');
      assert.equal(db.prepare('SELECT cancel_requested_at FROM spawns WHERE spawn_id = ?').pluck().get(foreign), null, "nothing was written on another principal's tree");
      assert.equal(requested(), null);
      for (const pid of pids) assert.equal(alive(pid), true, `pid ${pid} still runs after the refusals`);

      // A tree of ours whose owning run is gone: the request is stored, nobody acts, and the command says what to do.
      const orphaned = 'sp_0a0a0a0a0a0a0a0a0a0a0a0a';
      const deadOwner = { pid: 2_000_000_001, startMarker: 'linux:gone-boot:1' };
      new SessionStore(db).createSession({ principal: localPrincipal() }, { coreDir: '/tmp/core', coreRevision: 'rev', runtime: 'local', owner: deadOwner });
      new SpawnRecordStore(db).insert({ spawnId: orphaned, pid: 2_000_000_002, pgid: 2_000_000_002, sid: 2_000_000_002, platform: 'linux', bootId: 'gone-boot', startMarker: 'linux:gone-boot:2', cgroup: null, command: 'sh', ownerPid: deadOwner.pid, ownerStartMarker: deadOwner.startMarker, startedAt: Date.now() });
      const waited = cli('cancel', orphaned, '--wait', '0', '--state-dir', state.path);
      assert.equal(waited.status, 1, waited.stderr);
      assert.match(waited.stdout, new RegExp(`^${orphaned}  running after 0 s: its run \\(pid 2000000001\\) has not stopped it yet; if that run is gone, supervisor reconcile stops the tree$`, 'm'));
      const listed = cli('ps', '--state-dir', state.path);
      assert.match(listed.stdout, new RegExp(`^${orphaned}  sh  running  .*  stopping \\(cancel asked by supervisor cancel at a terminal \\(pid \\d+\\)\\)$`, 'm'));
      assert.doesNotMatch(listed.stdout, new RegExp(`^${spawnId} .*stopping`, 'm'), 'nobody asked about the live tree yet');

      const t0 = Date.now();
      const c = cli('cancel', spawnId, '--json', '--state-dir', state.path);
      assert.equal(c.status, 0, c.stdout + c.stderr);
      const answer = JSON.parse(c.stdout) as { status: string; requested: string; sessionId: string };
      assert.equal(answer.requested, 'requested');
      assert.equal(answer.status, 'cancelled');
      assert.deepEqual(markedPids(spawnId), [], 'nothing of the tree is left');
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
      assert.ok(Date.now() - t0 < 15_000);

      // The run goes on: the call returned a cancelled result to the model, whose next turn ends the run.
      assert.equal(await exited, 0, out);
      const events = out.trim().split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as { type: string; tool?: string; isError?: boolean; view?: { output?: string } }];
        } catch {
          return [];
        }
      });
      const result = events.find((e) => e.type === 'tool_result' && e.tool === 'terminal');
      assert.equal(result?.isError, true);
      assert.match(result?.view?.output ?? '', /^\[cancelled\]/);
      assert.ok(events.some((e) => e.type === 'final' || /done/.test(JSON.stringify(e))), out);

      // The audit chain of the call's session holds who asked, and it still verifies.
      const audit = db.prepare("SELECT payload FROM runtime_events WHERE session_id = ? AND kind = 'tree.cancelled'").pluck().all(answer.sessionId) as string[];
      assert.equal(audit.length, 1);
      const recorded = JSON.parse(audit[0]!) as { spawn_id: string; requested_by: string; outcome: string; killed: { descendants: number; escapees: number; survivors: number } };
      assert.equal(recorded.spawn_id, spawnId);
      assert.match(recorded.requested_by, /^supervisor cancel at a terminal \(pid \d+\)$/);
      assert.equal(recorded.outcome, 'cancelled');
      assert.equal(recorded.killed.survivors, 0);
      assert.ok(recorded.killed.escapees >= 1, JSON.stringify(recorded));
      assert.equal(verifyChain(db, answer.sessionId).ok, true);

      const again = cli('cancel', spawnId, '--state-dir', state.path);
      assert.equal(again.status, 2);
      assert.match(again.stderr, new RegExp(`tree ${spawnId} ended already \\(cancelled at .* UTC\\); nothing to cancel`));
    } finally {
      run.kill('SIGKILL');
      db.close();
    }
  });

  test("stops an MCP server's tree (a setsid'd grandchild that ignores TERM, a double-forked one) while a call waits on it; the call fails, the run goes on", async () => {
    const state = tempDir('tree-cancel-mcp-');
    dirs.push(state);
    const started = join(state.path, 'server-started');
    const core = makeCore({
      'agent.yaml': 'name: t\ngrants: ["mcp.connect:fx", "mcp.call:fx"]\napproval: { default: auto }\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'agent/mcp/fx.yaml': [
        'name: fx',
        'transport:',
        '  type: stdio',
        `  command: ${JSON.stringify(process.execPath)}`,
        `  args: [${JSON.stringify(fixture('mcp/server.mjs'))}, grandchildren, --marker, ${JSON.stringify(started)}]`,
        'approval: { connect: auto, call: auto }',
        '',
      ].join('\n'),
      'script.yaml': 'turns:\n  - tool_calls:\n      - { name: fx_slow, arguments: { ms: 100000 } }\n  - text: done\n',
    });
    const run = spawn(process.execPath, [CLI, 'run', core, '--approve', 'mcp.connect.fx', '--json', '--state-dir', state.path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    run.stdout.on('data', (c) => (out += c));
    run.stderr.on('data', (c) => (out += c));
    const exited = new Promise<number | null>((r) => run.once('close', r));
    let db: ReturnType<typeof openStore> | undefined;
    try {
      const store = await waitFor('the run to open its store', () => {
        try {
          return openStore(join(state.path, 'supervisor.db'), { checkpointer: false });
        } catch {
          return null;
        }
      }, REACH_MS);
      db = store;
      const spawnId = await waitFor("the server's tree", () => (store.prepare("SELECT spawn_id FROM spawns WHERE status = 'running' AND command LIKE '%node'").pluck().get() as string | undefined) ?? null, REACH_MS);
      // The server, its two sleeping grandchildren (one setsid'd and ignoring TERM), and the slow call in flight.
      const pids = await waitFor('the server and its grandchildren', () => {
        const p = markedPids(spawnId);
        return p.filter((pid) => readStat(pid)?.name === 'sleep').length === 2 ? p : null;
      }, REACH_MS);
      await waitFor('the slow call to report progress', () => /"type":"progress","callId":"[^"]+","tool":"fx_slow"/.test(out) || null, REACH_MS);
      const c = cli('cancel', spawnId, '--json', '--state-dir', state.path);
      assert.equal(c.status, 0, c.stdout + c.stderr);
      assert.equal((JSON.parse(c.stdout) as { status: string }).status, 'cancelled');
      assert.deepEqual(markedPids(spawnId), [], 'nothing of the server tree is left');
      for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
      assert.equal(await exited, 0, out);
      const result = out.trim().split('\n').flatMap((l) => {
        try {
          return [JSON.parse(l) as { type: string; tool?: string; ok?: boolean; isError?: boolean }];
        } catch {
          return [];
        }
      }).find((e) => e.type === 'tool_result' && e.tool === 'fx_slow');
      assert.equal(result?.ok, false, `the call failed: ${JSON.stringify(result)}`);
      assert.equal(store.prepare("SELECT COUNT(*) FROM runtime_events WHERE kind = 'tree.cancelled' AND json_extract(payload, '$.spawn_id') = ?").pluck().get(spawnId), 1);
    } finally {
      run.kill('SIGKILL');
      db?.close();
    }
  });
});
