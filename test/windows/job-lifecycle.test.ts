// The Windows lifecycle through the supervisor itself: Job Objects entered before the command
// runs, whole-tree termination, the kernel killing the tree when the supervisor dies, start
// markers, exit codes and draining. Runs on Windows, and here under Wine (npm run test:windows).
// Where Wine differs from Windows the test says so.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const SKIP = process.platform === 'win32' ? false : `Windows only (process.platform is ${process.platform}); run it under Wine with npm run test:windows`;
const UNDER_WINE = process.env.SUPERVISOR_UNDER_WINE === '1';
const FIX = (name: string): string => fileURLToPath(new URL(`../../../test/fixtures/${name}`, import.meta.url));

describe('Windows job lifecycle', { skip: SKIP, timeout: 120_000 }, () => {
  // Loaded lazily: on Linux these modules must not even be imported for a skipped suite.
  let mod: typeof import('../../src/process/index.js');
  let win: typeof import('../../src/process/win32/win32-platform.js');
  let platform: import('../../src/process/win32/win32-platform.js').Win32Platform;
  let sup: import('../../src/process/index.js').ProcessSupervisor;
  let dir: string;
  const watched: Array<{ pid: number; marker: import('../../src/process/index.js').StartMarker }> = [];

  before(async () => {
    mod = await import('../../src/process/index.js');
    win = await import('../../src/process/win32/win32-platform.js');
    dir = mkdtempSync(join(tmpdir(), 'supervisor-win-'));
    platform = new win.Win32Platform();
    sup = mod.ProcessSupervisor.open({ stateDir: dir, platform });
  });

  afterEach(() => {
    // Nothing a test watched may outlive it.
    const alive = watched.filter((w) => platform.isSameProcess(w.pid, w.marker));
    watched.length = 0;
    assert.deepEqual(alive.map((w) => w.pid), [], 'processes outlived their test');
  });

  after(async () => {
    await sup.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function spawnTreeReady(args: string[], opts: Partial<import('../../src/process/index.js').SpawnTreeOptions> = {}) {
    let out = '';
    let ready!: () => void;
    const printed = new Promise<void>((r) => (ready = r));
    const tree = sup.spawnTree({
      command: process.execPath,
      args: [FIX('node-tree.mjs'), ...args],
      stdin: 'pipe',
      ...opts,
      onStdout: (c) => {
        out += c.toString();
        if (out.includes('ready')) ready();
      },
    });
    await Promise.race([printed, tree.done.then(() => Promise.reject(new Error(`tree ended before ready: ${out}`)))]);
    const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
    for (const pid of [tree.pid, ...pids]) {
      const marker = platform.startMarker(pid);
      if (marker) watched.push({ pid, marker });
    }
    return { tree, pids };
  }

  test('the leader (the command, started suspended with its stdin pipe) and every later descendant are in the job, which holds nothing else', async () => {
    const { tree, pids } = await spawnTreeReady(['3']);
    assert.equal(pids.length, 3, 'three levels of node');
    const inJob = new Set(platform.jobPids(tree.spawnId));
    assert.ok(inJob.has(tree.pid), 'the leader is in the job');
    for (const pid of pids) assert.ok(inJob.has(pid), `pid ${pid} is in the job`);
    // Wine adds a conhost.exe per console process in some setups; Windows may too. Nothing else.
    const extra = [...inJob].filter((p) => p !== tree.pid && !pids.includes(p));
    assert.ok(extra.length <= 3, `unexpected extra members: ${extra.join(', ')}${UNDER_WINE ? ' (Wine)' : ''}`);
    await tree.stop();
  });

  test('terminating the job kills a three-level tree', async () => {
    const { tree, pids } = await spawnTreeReady(['3'], { graceMs: 300 });
    const markers = pids.map((p) => platform.startMarker(p)!);
    const out = await tree.stop();
    assert.equal(out.reason, 'cancelled');
    await sleep(100);
    pids.forEach((p, i) => assert.equal(platform.isSameProcess(p, markers[i]!), false, `pid ${p} is gone`));
    assert.equal(out.killed.survivors, 0);
  });

  test('a child that ignores the graceful step (end of stdin) is still killed after the grace', async () => {
    const { tree, pids } = await spawnTreeReady(['2', '--ignore-stdin-end'], { graceMs: 500 });
    const t0 = Date.now();
    const out = await tree.stop();
    assert.ok(Date.now() - t0 >= 450, 'waited for the grace');
    assert.equal(out.exitCode, win.JOB_KILL_EXIT_CODE, 'ended by TerminateJobObject');
    for (const p of pids) assert.equal(platform.startMarker(p) === null || !platform.isSameProcess(p, platform.startMarker(p)!), true);
  });

  test('start markers are stable for one process and distinct between processes', async () => {
    const { tree, pids } = await spawnTreeReady(['2']);
    const a1 = platform.startMarker(pids[0]!)!;
    await sleep(50);
    const a2 = platform.startMarker(pids[0]!)!;
    const b = platform.startMarker(pids[1]!)!;
    assert.deepEqual(a1, a2);
    assert.notEqual(a1.startTime, b.startTime);
    assert.match(a1.startTime, /^\d+$/);
    assert.equal(platform.isSameProcess(pids[0]!, a1), true);
    assert.equal(platform.isSameProcess(pids[0]!, { ...a1, startTime: String(BigInt(a1.startTime) + 1n) }), false);
    await tree.stop();
  });

  test("a member's figures (decision 111): image name, start, CPU time and working set from one handle; state and parent n/a", async () => {
    const { tree, pids } = await spawnTreeReady(['2']);
    for (const pid of [tree.pid, ...pids]) {
      const marker = platform.startMarker(pid)!;
      const u = platform.usage(pid, marker.startTime);
      assert.ok(u, `pid ${pid} has figures`);
      assert.match(u.name, /^node(\.exe)?$/i, `pid ${pid}: ${u.name}`);
      assert.equal(u.state, null);
      assert.equal(u.ppid, null);
      assert.ok(Math.abs(u.startedAt - Date.now()) < 120_000, `started ${new Date(u.startedAt).toISOString()}`);
      assert.ok(u.cpuMs !== null && u.cpuMs >= 0);
      assert.ok(u.rssKib !== null && u.rssKib > 1024, `working set ${u.rssKib} KiB`);
      assert.equal(platform.usage(pid, String(BigInt(marker.startTime) + 1n)), null, 'another start time shows nothing');
    }
    await tree.stop();
  });

  test('exit codes come through and output is drained, counted and written to artifacts', async () => {
    const tree = sup.spawnTree({
      command: process.execPath,
      args: ['-e', "process.stdout.write('x'.repeat(1 << 20)); process.stderr.write('err'); process.exitCode = 7"],
    });
    const out = await tree.done;
    assert.equal(out.reason, 'exited');
    assert.equal(out.exitCode, 7);
    assert.equal(out.stdout.bytes, 1 << 20);
    assert.equal(out.stderr.tail, 'err');
    assert.equal(statSync(join(out.artifacts!.root, out.artifacts!.stdout)).size, 1 << 20);
    const rec = sup.records.get(tree.spawnId)!;
    assert.equal(rec.platform, 'win32');
    assert.equal(rec.status, 'exited');
  });

  test('a secret split across writes is redacted on Windows too', async () => {
    const secret = 'win-sEcReT-0123456789';
    const out = await sup.spawnTree({ command: process.execPath, args: [FIX('split-secret.mjs'), secret, '2'], redact: [secret] }).done;
    assert.equal(out.stdout.tail, 'before:[REDACTED]:after\n');
    assert.equal(readFileSync(join(out.artifacts!.root, out.artifacts!.stdout), 'utf8'), 'before:[REDACTED]:after\n');
  });

  test('when the supervisor process dies, the kernel kills its tree (the launcher path: SUPERVISOR_SPAWN=node, a data channel); the next start marks it interrupted', async () => {
    const ownerDir = mkdtempSync(join(tmpdir(), 'supervisor-win-owner-'));
    const owner = spawn(process.execPath, [fileURLToPath(new URL('../scenarios/win-owner.js', import.meta.url)), ownerDir, 'launcher'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let line = '';
    const info = await new Promise<{ spawnId: string; launcher: number; pids: number[] }>((resolve, reject) => {
      owner.stdout.on('data', (c) => {
        line += c;
        if (line.includes('\n')) resolve(JSON.parse(line.split('\n')[0]!));
      });
      owner.on('exit', (code) => reject(new Error(`owner exited early (${code})`)));
    });
    assert.notEqual(info.launcher, info.pids[0], 'with SUPERVISOR_SPAWN=node the tree is led by the launcher');
    const markers = [info.launcher, ...info.pids].map((p) => ({ pid: p, marker: platform.startMarker(p)! }));
    assert.ok(markers.every((m) => m.marker !== null), 'all tree processes were alive before the owner died');
    owner.kill(); // TerminateProcess: no handler runs in the owner
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && markers.some((m) => platform.isSameProcess(m.pid, m.marker))) await sleep(50);
    assert.deepEqual(markers.filter((m) => platform.isSameProcess(m.pid, m.marker)).map((m) => m.pid), [], 'the tree died with its owner');
    const next = mod.ProcessSupervisor.open({ stateDir: ownerDir });
    try {
      const report = next.lastReconcile!;
      assert.equal(report.interrupted.length, 1);
      assert.equal(report.interrupted[0]!.spawnId, info.spawnId);
      assert.equal(report.interrupted[0]!.leaderMatched, false, 'nothing left to kill');
      assert.equal(next.records.get(info.spawnId)!.status, 'interrupted');
    } finally {
      await next.close();
      rmSync(ownerDir, { recursive: true, force: true });
    }
  });
});
