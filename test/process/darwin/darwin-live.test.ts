// The macOS process layer against the real kernel. Runs only on macOS (the CI runner); elsewhere
// it is skipped and says why. Everything testable without a Mac is in proc-info.test.ts and
// darwin-platform.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import * as libproc from '../../../native-helpers/libproc.js';
import { DarwinPlatform } from '../../../src/process/darwin/darwin-platform.js';
import { LibprocSource } from '../../../src/process/darwin/libproc-source.js';
import { parseBsdInfo, parseProcArgs2 } from '../../../src/process/darwin/proc-info.js';
import type { DarwinProcessSource } from '../../../src/process/darwin/process-source.js';
import { PsSource } from '../../../src/process/darwin/ps-source.js';
import { ProcessSupervisor, type SupervisedTree } from '../../../src/process/index.js';
import type { TreeMember } from '../../../src/process/platform.js';

const onMac = process.platform === 'darwin';
const skip = onMac ? false : `macOS only (this is ${process.platform}); runs on the macOS CI runner`;
const FIXTURE = fileURLToPath(new URL('./fixtures/escapee-tree.js', import.meta.url));
const ID = 'sp_11112222333344445555aaaa';

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  // Alive or a zombie: a zombie counts as gone.
  const r = libproc.procPidBsdInfo(pid, true);
  return r.info === null || parseBsdInfo(r.info)?.zombie === true;
}

describe('libproc bindings on the real kernel', { skip }, () => {
  // An Apple platform binary and a third-party one (node): if only the first loses its
  // environment, SIP withholds it (see docs/security-model.md), the binding itself is fine.
  let child: ChildProcess;
  let nodeChild: ChildProcess;
  before(async () => {
    const env = { PATH: '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: ID, OTHER: 'x y' };
    child = spawn('/bin/sleep', ['30'], { env, stdio: 'ignore' });
    nodeChild = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { env, stdio: 'ignore' });
    await sleep(300);
  });
  after(() => {
    child.kill('SIGKILL');
    nodeChild.kill('SIGKILL');
  });

  test('proc_listallpids sees us and the child; proc_pidinfo describes us', () => {
    const pids = libproc.procListAllPids();
    assert.ok(pids.includes(process.pid));
    assert.ok(pids.includes(child.pid!));
    const r = libproc.procPidBsdInfo(process.pid);
    assert.ok(r.info, `proc_pidinfo failed with errno ${r.errno}`);
    const me = parseBsdInfo(r.info)!;
    assert.equal(me.pid, process.pid);
    assert.equal(me.ppid, process.ppid);
    assert.equal(me.zombie, false);
    const nowUs = BigInt(Date.now()) * 1000n;
    const startUs = BigInt(me.startTime);
    assert.ok(startUs <= nowUs && startUs >= nowUs - BigInt(Math.ceil(process.uptime() + 5)) * 1_000_000n, `start ${me.startTime} within this process's uptime`);
    assert.equal(libproc.getsid(process.pid).value >= 0, true);
  });

  test('KERN_PROCARGS2 of a node child: argv and the exact marker', () => {
    const r = libproc.sysctlProcArgs2(nodeChild.pid!);
    assert.ok(r.bytes, `sysctl KERN_PROCARGS2 failed with errno ${r.errno}`);
    const a = parseProcArgs2(r.bytes)!;
    assert.equal(a.execPath, process.execPath);
    assert.deepEqual(a.argv, [process.execPath, '-e', 'setTimeout(() => {}, 30000)']);
    assert.ok(a.env.includes(`SUPERVISOR_SPAWN_ID=${ID}`), `env: ${JSON.stringify(a.env)}`);
    assert.equal(new LibprocSource().environHas(nodeChild.pid!, 'SUPERVISOR_SPAWN_ID', ID), true);
  });

  test('KERN_PROCARGS2 of /bin/sleep (an Apple binary): argv and the exact marker', () => {
    const r = libproc.sysctlProcArgs2(child.pid!);
    assert.ok(r.bytes, `sysctl KERN_PROCARGS2 failed with errno ${r.errno}`);
    const a = parseProcArgs2(r.bytes)!;
    assert.equal(a.execPath, '/bin/sleep');
    assert.deepEqual(a.argv, ['/bin/sleep', '30']);
    assert.ok(a.env.includes(`SUPERVISOR_SPAWN_ID=${ID}`), `the kernel withheld the environment of an Apple binary? env: ${JSON.stringify(a.env)}`);
    assert.ok(a.env.includes('OTHER=x y'));
    const src = new LibprocSource();
    assert.equal(src.environHas(child.pid!, 'SUPERVISOR_SPAWN_ID', ID), true);
    assert.equal(src.environHas(child.pid!, 'SUPERVISOR_SPAWN_ID', ID.slice(0, -1)), false);
    assert.equal(src.environHas(process.pid, 'SUPERVISOR_SPAWN_ID', ID), false);
  });

  test('boot identity is kern.bootsessionuuid and stable', () => {
    const src = new LibprocSource();
    const id = src.bootId();
    assert.match(id, /^[0-9A-F-]{36}$/);
    assert.equal(new LibprocSource().bootId(), id);
    const cli = spawnSync('/usr/sbin/sysctl', ['-n', 'kern.bootsessionuuid'], { encoding: 'utf8' }).stdout.trim().toUpperCase();
    assert.equal(id, cli);
    assert.equal(new PsSource().bootId(), id);
  });

  test('the ps fallback agrees with libproc about the child (to the second)', () => {
    const a = new LibprocSource().info(child.pid!)!;
    const b = new PsSource().info(child.pid!)!;
    assert.equal(b.ppid, a.ppid);
    assert.equal(b.pgid, a.pgid);
    assert.equal(BigInt(b.startTime) / 1_000_000n, BigInt(a.startTime) / 1_000_000n);
    assert.equal(new PsSource().environHas(child.pid!, 'SUPERVISOR_SPAWN_ID', ID), true);
  });
});

for (const kind of ['libproc', 'ps'] as const) {
  describe(`a supervised tree on macOS (${kind})`, { skip }, () => {
    let dir: string;
    let sup: ProcessSupervisor;
    let platform: DarwinPlatform;
    const all = new Set<number>();

    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'sup-darwin-'));
      const source: DarwinProcessSource = kind === 'libproc' ? new LibprocSource() : new PsSource();
      platform = new DarwinPlatform({ source });
      sup = ProcessSupervisor.open({ stateDir: dir, platform });
      assert.deepEqual(sup.capabilities, { subreaper: false, pidfd: false, cgroup: false });
    });

    after(async () => {
      for (const pid of all) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      await sup.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test('group members, a setsid escapee and a double-forked orphan are all found and killed', async () => {
      let out = '';
      let ready!: () => void;
      const printed = new Promise<void>((r) => (ready = r));
      const tree: SupervisedTree = sup.spawnTree({
        command: process.execPath,
        args: [FIXTURE],
        graceMs: 500,
        onStdout: (c) => {
          out += c.toString();
          if (out.includes('ready')) ready();
        },
      });
      assert.match(sup.records.get(tree.spawnId)!.startMarker, /^darwin:[0-9A-F-]{36}:\d+$/);
      await printed;
      const seen = new Map<number, TreeMember>();
      const members = platform.members(
        { spawnId: tree.spawnId, pid: tree.pid, pgid: tree.pgid, sid: tree.sid, startMarker: tree.startMarker, cgroup: null },
        true,
        seen,
      );
      for (const m of members) all.add(m.pid);
      // node, sh (ignores TERM), sh (setsid), the orphaned sleep, and the sleeps of the two loops (some of the time).
      assert.ok(members.length >= 4, `members: ${JSON.stringify(members)}`);
      assert.ok(members.some((m) => m.leftSession), 'the setsid child is found');
      assert.ok(members.some((m) => m.pid !== tree.pid && m.escapee && !m.leftSession), 'the double-forked orphan (re-parented to launchd) is found');
      const outcome = await tree.stop();
      assert.equal(outcome.reason, 'cancelled');
      assert.equal(outcome.killed.survivors, 0);
      assert.ok(outcome.killed.descendants >= 3, JSON.stringify(outcome.killed));
      assert.ok(outcome.killed.escapees >= 1, JSON.stringify(outcome.killed));
      for (const pid of all) assert.ok(gone(pid), `pid ${pid} is gone`);
    });

    test('a start marker matches only the process it was taken from', () => {
      const child = spawn('/bin/sleep', ['30'], { detached: true, stdio: 'ignore', env: { PATH: '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: ID } });
      all.add(child.pid!);
      const marker = platform.startMarker(child.pid!)!;
      assert.equal(platform.isSameProcess(child.pid!, marker), true);
      assert.equal(platform.isSameProcess(child.pid!, { ...marker, startTime: (BigInt(marker.startTime) - 2_000_000n).toString() }), false);
      child.kill('SIGKILL');
    });
  });
}
