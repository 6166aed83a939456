// DarwinPlatform's membership and signalling rules, and the termination ladder on top of them,
// against an injected process table: runs on any OS, touches no real process.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DarwinPlatform } from '../../../src/process/darwin/darwin-platform.js';
import { LibprocSource } from '../../../src/process/darwin/libproc-source.js';
import { PsSource } from '../../../src/process/darwin/ps-source.js';
import { DarwinOnlyError, type DarwinProcessSource } from '../../../src/process/darwin/process-source.js';
import { parsePsDuration, parsePsUsage, PS_USAGE_FIELDS } from '../../../src/process/darwin/proc-info.js';
import { platformFor } from '../../../src/process/platform-select.js';
import type { TreeIdentity, TreeMember } from '../../../src/process/platform.js';
import { terminateTree, killTreeSync } from '../../../src/process/terminate.js';
import * as libproc from '../../../native-helpers/libproc.js';
import { FakeProcessTable, type FakeProc } from './darwin-fixtures.js';

const SELF = 50;
const T0 = 1_712_000_000_123_456n; // the leader's start, microseconds since the epoch
const ID = 'sp_00112233445566778899aabb';
const MARK = `SUPERVISOR_SPAWN_ID=${ID}`;

const tree: TreeIdentity = {
  spawnId: ID,
  pid: 100,
  pgid: 100,
  sid: 100,
  startMarker: { platform: 'darwin', bootId: 'BOOT-A', startTime: T0.toString() },
  cgroup: null,
  // Never consulted on macOS: orphans are re-parented to launchd, not to the supervisor.
  claimOrphan: () => {
    throw new Error('claimOrphan must not be called on macOS');
  },
};

const leader: FakeProc = { pid: 100, ppid: SELF, pgid: 100, sid: 100, start: T0, env: [MARK] };
const proc = (pid: number, over: Partial<FakeProc>): FakeProc => ({ pid, ppid: 100, pgid: 100, sid: 100, start: T0 + BigInt(pid), env: [MARK], ...over });

function setup(...ps: FakeProc[]): { table: FakeProcessTable; platform: DarwinPlatform; seen: Map<number, TreeMember> } {
  const table = new FakeProcessTable().add(
    // Always present: launchd, an older unrelated process, and the supervisor itself.
    { pid: 1, ppid: 0, pgid: 1, sid: 1, start: T0 - 10_000_000_000n },
    { pid: 77, ppid: 1, pgid: 77, sid: 77, start: T0 - 5_000_000n, env: ['HOME=/Users/x'] },
    { pid: SELF, ppid: 1, pgid: SELF, sid: SELF, start: T0 - 1_000_000n, env: [] },
    ...ps,
  );
  return { table, platform: new DarwinPlatform({ source: table, selfPid: SELF }), seen: new Map() };
}

const pids = (ms: TreeMember[]): number[] => ms.map((m) => m.pid).sort((a, b) => a - b);

describe('DarwinPlatform membership', () => {
  test('group members are found while the leader is held; strangers and other trees are not', () => {
    const { platform, seen } = setup(
      leader,
      proc(101, {}),
      proc(102, { ppid: 101, env: [] }), // cleared its environment, still in the group
      proc(200, { ppid: 1, pgid: 200, sid: 200, env: ['SUPERVISOR_SPAWN_ID=sp_other'] }),
      proc(201, { ppid: 1, pgid: 201, sid: 201, env: [`${MARK}0`, `SUPERVISOR_SPAWN_ID_X=${ID}`] }),
    );
    const live = platform.members(tree, true, seen);
    assert.deepEqual(pids(live), [100, 101, 102]);
    assert.ok(live.every((m) => !m.escapee && !m.leftSession));
    assert.deepEqual([...seen.keys()].sort((a, b) => a - b), [100, 101, 102]);
    assert.equal(seen.get(101)!.startTime, (T0 + 101n).toString());
  });

  test('a marked setsid escapee whose parent died is found, and counted as an escapee', () => {
    const { platform, seen } = setup(leader, proc(400, { ppid: 1, pgid: 400, sid: 400 }));
    const live = platform.members(tree, true, seen);
    assert.deepEqual(pids(live), [100, 400]);
    const esc = live.find((m) => m.pid === 400)!;
    assert.equal(esc.leftSession, true);
    assert.equal(esc.escapee, true);
  });

  test('the marked escapee is still found once the leader is gone and no longer vouches for its group', () => {
    const { platform, seen } = setup(proc(400, { ppid: 1, pgid: 400, sid: 400 }), proc(102, { ppid: 1, env: [] }));
    // 102 is in the old group but unmarked and never seen: without the leader the group id proves nothing.
    assert.deepEqual(pids(platform.members(tree, false, seen)), [400]);
  });

  test('a process that started before the leader is ignored, even in the group, with the marker, or as a "child"', () => {
    const { platform, seen } = setup(
      leader,
      proc(500, { start: T0 - 1n }),
      proc(501, { ppid: 100, pgid: 501, sid: 501, start: T0 - 2_000_000n, env: [] }),
    );
    assert.deepEqual(pids(platform.members(tree, true, seen)), [100]);
  });

  test('descendants of members are members, whatever their group, session or environment', () => {
    const { platform, seen } = setup(
      leader,
      proc(101, {}),
      proc(102, { ppid: 101, pgid: 102, sid: 102, env: [] }), // setsid, cleared env
      proc(103, { ppid: 102, pgid: 102, sid: 102, env: [] }),
      proc(104, { ppid: 103, pgid: 104, sid: 102, env: [] }),
      proc(600, { ppid: 1, pgid: 600, sid: 600, env: [] }), // unrelated, started later
    );
    const live = platform.members(tree, true, seen);
    assert.deepEqual(pids(live), [100, 101, 102, 103, 104]);
    for (const pid of [102, 103, 104]) assert.equal(live.find((m) => m.pid === pid)!.leftSession, true, `${pid} left the session`);
  });

  test('members seen before stay members after the leader is gone, and their children with them', () => {
    const { table, platform, seen } = setup(leader, proc(101, { env: [] }), proc(102, { ppid: 101, env: [] }));
    assert.deepEqual(pids(platform.members(tree, true, seen)), [100, 101, 102]);
    table.exit(100); // the leader exits and is reaped: 101 goes to launchd
    table.add(proc(103, { ppid: 102, pgid: 103, sid: 103, env: [] }));
    const live = platform.members(tree, false, seen);
    assert.deepEqual(pids(live), [101, 102, 103]);
    assert.equal(live.find((m) => m.pid === 101)!.escapee, true, 're-parented to launchd');
  });

  test('zombies are never live members', () => {
    const { platform, seen } = setup(leader, proc(101, { zombie: true }));
    assert.deepEqual(pids(platform.members(tree, true, seen)), [100]);
  });

  test('a process of the group that the source cannot attribute to a session is still a member', () => {
    const { table, platform, seen } = setup(leader, proc(101, { pgid: 100 }));
    table.sid = () => null; // as with the ps fallback
    const live = platform.members(tree, true, seen);
    assert.deepEqual(pids(live), [100, 101]);
    assert.equal(live.find((m) => m.pid === 101)!.leftSession, false, 'same group: assumed to be in the session');
  });
});

describe('DarwinPlatform signalling', () => {
  test('one group signal while the leader is held, a verified bare signal for every other member, none for the leader', () => {
    const { table, platform, seen } = setup(leader, proc(101, { ignoresTerm: true }), proc(400, { ppid: 1, pgid: 400, sid: 400 }));
    const live = platform.signalTree(tree, 'SIGTERM', true, seen);
    assert.deepEqual(pids(live), [100, 101, 400], 'counted before the signal');
    assert.deepEqual(table.groupSignals(), [{ pgid: 100, signal: 'SIGTERM' }]);
    assert.deepEqual(table.signalled('SIGTERM').sort((a, b) => a - b), [101, 400]);
    assert.ok(!table.signalled().includes(100), 'the leader is reached through its group only');
  });

  test('without the leader held there is no group signal; a leader still alive and unchanged gets a verified bare one', () => {
    const { table, platform, seen } = setup(leader, proc(101, {}));
    platform.signalTree(tree, 'SIGKILL', false, seen);
    assert.deepEqual(table.groupSignals(), []);
    assert.deepEqual(table.signalled('SIGKILL').sort((a, b) => a - b), [100, 101]);
  });

  test('a reused pid is never signalled: a stale sighting does not make a stranger a member', () => {
    const { table, platform, seen } = setup(leader, proc(101, {}));
    platform.members(tree, true, seen);
    // The tree dies; pid 101 is reused by a stranger (later start, own group, no marker).
    table.procs.clear();
    table.add({ pid: 1, ppid: 0, pgid: 1, sid: 1, start: 1n }, { pid: 101, ppid: 1, pgid: 101, sid: 101, start: T0 + 999_000n, env: [] });
    const live = platform.signalTree(tree, 'SIGKILL', false, seen);
    assert.deepEqual(live, []);
    assert.deepEqual(table.signals, []);
    assert.ok(table.procs.has(101));
  });

  test('a reused pid is never signalled: the start time is checked again right before kill', () => {
    const { table, platform, seen } = setup(leader, proc(101, { ppid: 1, pgid: 101, sid: 101 }));
    // Between the scan and the bare signal (here: while the group is signalled), 101 exits and a
    // stranger takes its pid.
    table.beforeKill = () => {
      table.procs.delete(101);
      table.add({ pid: 101, ppid: 1, pgid: 101, sid: 101, start: T0 + 5_000_000n, env: [] });
    };
    const live = platform.signalTree(tree, 'SIGKILL', true, seen);
    assert.deepEqual(pids(live), [100, 101], 'the scan saw the member');
    assert.deepEqual(table.signalled(), [], 'but the stranger was not signalled');
    assert.ok(table.procs.has(101) && !table.procs.get(101)!.zombie);
  });

  test("a reused leader pid: its stranger's group is neither trusted nor signalled", () => {
    const { table, platform, seen } = setup(
      { pid: 100, ppid: 1, pgid: 100, sid: 100, start: T0 + 50_000_000n, env: [] }, // not the leader
      { pid: 150, ppid: 100, pgid: 100, sid: 100, start: T0 + 51_000_000n, env: [] },
    );
    assert.equal(platform.isSameProcess(100, tree.startMarker), false);
    const live = platform.signalTree(tree, 'SIGKILL', false, seen);
    assert.deepEqual(live, []);
    assert.deepEqual(table.signals, []);
  });

  test('never launchd, never the supervisor, never a bare 0 or -1', () => {
    const { table, platform, seen } = setup(
      { ...leader, pgid: 1 }, // a corrupt identity must not turn into kill(-1) or kill(1)
    );
    platform.signalTree({ ...tree, pgid: 1 }, 'SIGKILL', true, seen);
    assert.ok(table.signals.every((s) => s.pid !== 1 && s.pid !== -1 && s.pid !== 0 && s.pid !== SELF && s.pid !== -SELF));
  });
});

describe('DarwinPlatform identity and capabilities', () => {
  test('startMarker and isSameProcess: boot id, zombie, start time', () => {
    const { table, platform } = setup(leader);
    const m = platform.startMarker(100);
    assert.deepEqual(m, { platform: 'darwin', bootId: 'BOOT-A', startTime: T0.toString() });
    assert.equal(platform.isSameProcess(100, m!), true);
    assert.equal(platform.isSameProcess(100, { ...m!, startTime: (T0 + 1n).toString() }), false);
    assert.equal(platform.isSameProcess(100, { ...m!, platform: 'linux' }), false);
    assert.equal(platform.startMarker(12345), null);
    table.procs.get(100)!.zombie = true;
    assert.ok(platform.startMarker(100), 'a zombie still has a start marker (the spawn path reads it even if the child exited at once)');
    assert.equal(platform.isSameProcess(100, m!), false, 'but it is not alive');
    table.procs.get(100)!.zombie = false;
    table.boot = 'BOOT-B';
    assert.equal(platform.isSameProcess(100, m!), false, 'another boot');
  });

  test('a coarse source (ps) compares a microsecond marker by its second', () => {
    const { table, platform } = setup(leader);
    table.coarseStartTime = true;
    assert.equal(platform.isSameProcess(100, { platform: 'darwin', bootId: 'BOOT-A', startTime: ((T0 / 1_000_000n) * 1_000_000n + 999_999n).toString() }), true);
  });

  test('init: no subreaper, no pidfd, no cgroup; prepareSpawn leaves the command alone; nothing to reap or release', () => {
    const { platform, seen } = setup(leader);
    assert.deepEqual(platform.init(), { subreaper: false, pidfd: false, cgroup: false });
    assert.deepEqual(platform.prepareSpawn(ID, '/bin/sleep', ['30']), { command: '/bin/sleep', args: ['30'], cgroup: null });
    assert.equal(platform.reapAdopted(seen, new Set()), 0);
    platform.releaseTree(tree);
    assert.equal(platform.source.kind, 'fake');
  });
});

describe('DarwinPlatform usage (what supervisor ps and the web page show)', () => {
  const sleeper = proc(101, { ps: { stat: 'S+', rss: 1536, time: '1:02.50', name: 'sleep' } });

  test("a member's figures: ppid, name, state, RSS and CPU from ps, its start from the checked marker", () => {
    const { platform } = setup(leader, sleeper);
    const u = platform.usage(101, (T0 + 101n).toString());
    assert.deepEqual(u, { ppid: 100, name: 'sleep', state: 'S', startedAt: Number((T0 + 101n) / 1000n), cpuMs: 62_500, rssKib: 1536 });
  });

  test('another start (a reused pid), a zombie, or a pid gone shows nothing', () => {
    const { table, platform } = setup(leader, sleeper);
    assert.equal(platform.usage(101, (T0 + 1n).toString()), null);
    assert.equal(platform.usage(4242, T0.toString()), null);
    table.procs.get(101)!.zombie = true;
    assert.equal(platform.usage(101, (T0 + 101n).toString()), null);
  });

  test("a ps row of another process (its elapsed time says it started an hour later) is not shown as this one's", () => {
    const { platform } = setup(leader, proc(101, { ps: { stat: 'R', rss: 9, time: '0:00.01', name: 'stranger', startedMsLater: 3_600_000 } }));
    assert.equal(platform.usage(101, (T0 + 101n).toString()), null);
  });

  test('a source without figures: the start and parent are known, CPU, RSS and state are null (shown n/a)', () => {
    const { table } = setup(leader, sleeper);
    const bare: DarwinProcessSource = {
      kind: 'bare',
      coarseStartTime: false,
      bootId: () => table.bootId(),
      list: () => table.list(),
      info: (pid) => table.info(pid),
      sid: (pid) => table.sid(pid),
      environHas: (pid, n, v) => table.environHas(pid, n, v),
      kill: (pid, sig) => table.kill(pid, sig),
    };
    const u = new DarwinPlatform({ source: bare, selfPid: SELF }).usage(101, (T0 + 101n).toString());
    assert.deepEqual(u, { ppid: 100, name: '', state: null, startedAt: Number((T0 + 101n) / 1000n), cpuMs: null, rssKib: null });
  });

  test('one ps for every member of a look; the figures of each, its identity checked first', () => {
    const { table, platform } = setup(leader, sleeper, proc(102, { ps: { stat: 'R', rss: 99, time: '0:00.01', name: 'sh' } }), proc(103, {}));
    const many = platform.usageOfMany([...[101, 102].map((pid) => ({ pid, startTime: (T0 + BigInt(pid)).toString() })), { pid: 103, startTime: '1' }]);
    assert.equal(table.psRuns.length, 1, 'one ps for the whole look');
    assert.deepEqual(table.psRuns[0]!.slice(-2), ['-p', '101,102'], 'only the members whose identity held');
    assert.deepEqual([many.get(101)?.name, many.get(102)?.name], ['sleep', 'sh']);
    assert.equal(many.get(103), null, 'another start than the walk saw: nothing shown');
  });

  test("a ps answer refused as a whole (a pid gone, a name with a newline forging a row) is asked again per pid, and a forged row is never used", () => {
    // 104's name holds a newline followed by a row that claims 101's figures.
    const forger = proc(104, { ps: { stat: 'S', rss: 10, time: '0:00.00', name: `evil\n  101   100 R   999999  99:00.00    00:01 forged` } });
    const { table, platform } = setup(leader, sleeper, forger);
    const many = platform.usageOfMany([101, 104].map((pid) => ({ pid, startTime: (T0 + BigInt(pid)).toString() })));
    assert.deepEqual(table.psRuns.map((r) => r[r.length - 1]), ['101,104', '101', '104'], 'refused as a whole, then one pid at a time');
    assert.equal(many.get(101)?.rssKib, 1536, "101's own figures, not the forged ones");
    assert.equal(many.get(104)?.name, 'evil', 'the name is cut at the newline');
    assert.equal(many.get(104)?.rssKib, 10);
  });

  test("ps's durations: macOS CPU time (minutes unbounded, hundredths), procps's and etime's hours and days", () => {
    assert.equal(parsePsDuration('0:00.05'), 50);
    assert.equal(parsePsDuration('1:02.50'), 62_500);
    assert.equal(parsePsDuration('125:01.00'), 7_501_000);
    assert.equal(parsePsDuration('01:02:03'), 3_723_000);
    assert.equal(parsePsDuration('2-03:04:05'), ((2 * 24 + 3) * 3600 + 4 * 60 + 5) * 1000);
    for (const bad of ['', '5', '1:60', '1:61:00', 'a:00', '-1:00', '1:00.1234']) assert.equal(parsePsDuration(bad), null, bad);
  });

  test("ps's row: only the asked pid's first line; a name with spaces is kept, a newline in it cannot forge a figure", () => {
    assert.deepEqual(parsePsUsage('  101   100 Ss     2048   0:01.25    01:05 my tool\n', 101), { pid: 101, ppid: 100, state: 'S', rssKib: 2048, cpuMs: 1250, elapsedMs: 65_000, name: 'my tool' });
    assert.equal(parsePsUsage('  102   100 S 1 0:00.00 00:01 sleep\n', 101), null, 'another pid');
    const forged = parsePsUsage('  101   100 S 10 0:00.00 00:01 evil\n  101   100 R 999999 99:00.00 00:01 x\n', 101);
    assert.equal(forged?.rssKib, 10);
    assert.equal(forged?.name, 'evil');
    assert.equal(parsePsUsage('', 101), null);
    assert.equal(parsePsUsage('  101   100 S 10 soon 00:01 x\n', 101), null);
  });

  test('the ps source asks for exactly those columns of exactly those pids', () => {
    const asked: string[][] = [];
    const src = new PsSource((file, args) => {
      asked.push([file, ...args]);
      return '  101   100 R      512   0:00.10    00:02 node\n';
    });
    assert.deepEqual(src.usage([101]), new Map([[101, { pid: 101, ppid: 100, state: 'R', rssKib: 512, cpuMs: 100, elapsedMs: 2000, name: 'node' }]]));
    assert.deepEqual(asked, [['/bin/ps', '-o', PS_USAGE_FIELDS, '-p', '101']]);
    assert.deepEqual(src.usage([0, -1]), new Map());
    assert.equal(asked.length, 1, 'no ps for no real pid');
  });
});

describe('the termination ladder on DarwinPlatform', () => {
  test('TERM to the group and the escapee, KILL for the one that ignores TERM, then nothing left', async () => {
    const { table, platform, seen } = setup(
      leader,
      proc(101, {}),
      proc(102, { ppid: 101, ignoresTerm: true, env: [] }),
      proc(400, { ppid: 1, pgid: 400, sid: 400 }),
    );
    const tally = new Map<string, TreeMember>();
    const report = await terminateTree({
      platform,
      tree,
      graceMs: 40,
      pollMs: 2,
      killPhaseMs: 1_000,
      // Node holds the leader until it exits (the fake reaps at once).
      leaderHeld: () => table.procs.has(100),
      leaders: () => new Set(table.procs.has(100) ? [100] : []),
      seen,
      tally,
    });
    assert.deepEqual(report, { descendants: 3, escapees: 1, survivors: 0 });
    assert.deepEqual(table.groupSignals(), [{ pgid: 100, signal: 'SIGTERM' }]);
    assert.ok(table.signalled('SIGTERM').includes(400));
    assert.deepEqual(table.signalled('SIGKILL'), [102]);
    assert.deepEqual([...table.procs.keys()].sort((a, b) => a - b), [1, SELF, 77]);
  });

  test('a survivor is reported, never hidden', async () => {
    const { table, platform, seen } = setup(leader, proc(101, { ignoresTerm: true }));
    table.kill = (pid, signal) => {
      table.signals.push({ pid, signal, delivered: false });
      return false; // nothing dies (e.g. EPERM)
    };
    const report = await terminateTree({
      platform,
      tree,
      graceMs: 5,
      pollMs: 1,
      killPhaseMs: 30,
      leaderHeld: () => true,
      leaders: () => new Set([100]),
      seen,
      tally: new Map(),
    });
    assert.equal(report.survivors, 2);
  });

  test('the synchronous last resort (killTreeSync) reaches the same members', () => {
    const { table, platform, seen } = setup(leader, proc(101, { ignoresTerm: true }), proc(400, { ppid: 1, pgid: 400, sid: 400 }));
    const report = killTreeSync({ platform, tree, leaderHeld: () => table.procs.has(100), leaders: () => new Set(), seen, tally: new Map() });
    assert.deepEqual(report, { descendants: 2, escapees: 1, survivors: 0 });
  });
});

describe('off macOS nothing reaches the OS', { skip: process.platform === 'darwin' ? 'this is macOS' : false }, () => {
  test('the default source, the libproc and ps sources and the raw bindings refuse with a clear error', () => {
    assert.throws(() => new DarwinPlatform().init(), (e: unknown) => e instanceof DarwinOnlyError && /only on macOS/.test(e.message));
    assert.throws(() => new DarwinPlatform().startMarker(process.pid), DarwinOnlyError);
    assert.throws(() => new LibprocSource(), DarwinOnlyError);
    assert.throws(() => new PsSource(), DarwinOnlyError);
    assert.equal(libproc.libprocAvailable(), false);
    assert.throws(() => libproc.procListAllPids(), /exist only on macOS/);
    assert.throws(() => libproc.sysctlProcArgs2(process.pid), /exist only on macOS/);
  });

  test('selecting the darwin platform constructs it without touching the OS', () => {
    const p = platformFor('darwin');
    assert.equal(p.name, 'darwin');
    assert.deepEqual(p.prepareSpawn(ID, 'true', []), { command: 'true', args: [], cgroup: null });
  });
});
