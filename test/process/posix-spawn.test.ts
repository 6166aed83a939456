// The posix_spawn start path (decision 58): a tree's leader started without forking the
// supervisor keeps every lifecycle guarantee of Node's spawn(): its own session and group, its
// cgroup entered before the command runs, stdin from /dev/null (or inherited), no inherited ignored or blocked
// signal, the exit code or signal reported, the spawn record written before spawnTree returns,
// and a failed start leaves no descriptor behind. Node's path (SUPERVISOR_SPAWN=node) is the
// same suite in lifecycle.test.ts run with that variable.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { ProcessSupervisor } from '../../src/process/index.js';
import { LinuxPlatform } from '../../src/process/linux/linux-platform.js';
import { waitFor } from '../helpers/procs.js';
import { linuxSupervisorSuite } from './supervisor-suite.js';

/** This process's descriptors and what each points at (a file's path, pipe:[inode], socket:[inode]). */
function openDescriptors(): Map<string, string> {
  const fds = new Map<string, string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      fds.set(fd, readlinkSync(`/proc/self/fd/${fd}`));
    } catch {
      // Closed between the listing and the read (the listing's own descriptor among them).
    }
  }
  return fds;
}

describe('posix_spawn start path', { skip: process.platform !== 'linux' && 'Linux only' }, () => {
  const started = new Set<string>();
  let sup!: ProcessSupervisor;
  linuxSupervisorSuite('cgroup', started, (s) => (sup = s));
  const leaderOf = (t: unknown): { constructor: { name: string } } => (t as { child: { constructor: { name: string } } }).child;

  test('the leader is posix_spawned, in its own session and cgroup, with clean signals and stdin', async () => {
    const t = sup.spawnTree({
      command: 'sh',
      args: ['-c', 'cut -d" " -f5,6 /proc/$$/stat; grep -E "^(SigIgn|SigBlk)" /proc/$$/status; readlink /proc/$$/fd/0; grep "^0::" /proc/$$/cgroup'],
      cwd: '/tmp',
    });
    started.add(t.spawnId);
    assert.equal(leaderOf(t).constructor.name, 'NativeChild');
    // Recorded before spawnTree returned.
    assert.equal(sup.records.get(t.spawnId)?.pid, t.pid);
    const o = await t.done;
    assert.equal(o.reason, 'exited');
    assert.equal(o.exitCode, 0);
    const [ids, ign, blk, stdin, cg] = o.stdout.tail.trim().split('\n');
    assert.equal(ids, `${t.pid} ${t.pid}`, 'pgid and sid are the leader’s pid');
    // SIGPIPE (13) and every other signal (glibc’s internal 32 and 33 too) at its default; nothing blocked.
    assert.equal(BigInt(`0x${ign!.split("\t")[1]}`), 0n, ign);
    assert.equal(BigInt(`0x${blk!.split('\t')[1]}`), 0n, blk);
    assert.equal(stdin, '/dev/null');
    assert.ok(t.cgroup && cg!.endsWith(`/${t.spawnId}`), `in its cgroup from the start: ${cg}`);
  });

  test('an inherited stdin (exec at a terminal) is posix_spawned too: the child reads the supervisor’s fd 0', async () => {
    const t = sup.spawnTree({ command: 'sh', args: ['-c', 'readlink /proc/$$/fd/0'], stdin: 'inherit' });
    started.add(t.spawnId);
    assert.equal(leaderOf(t).constructor.name, 'NativeChild');
    assert.equal(sup.records.get(t.spawnId)?.pid, t.pid);
    const o = await t.done;
    assert.equal(o.exitCode, 0);
    assert.equal(o.stdout.tail.trim(), readlinkSync('/proc/self/fd/0'));
  });

  test('a leader with the inherited stdin gets no other descriptor of the supervisor (its store, its pipes)', async () => {
    // What a tree would look for: every descriptor it holds, and where each leads. ls writes to the
    // shell's own stdout and the lines are read here: a pipeline (ls | sed) would have the shell
    // hold the pipe while ls reads the list (fd 3 on a loaded machine), and `; true` keeps sh from
    // exec'ing ls, whose own directory descriptor would be listed.
    const t = sup.spawnTree({ command: 'sh', args: ['-c', 'ls -l /proc/$$/fd; true'], stdin: 'inherit' });
    started.add(t.spawnId);
    const o = await t.done;
    assert.equal(o.exitCode, 0);
    const fds = [...o.stdout.tail.matchAll(/ (\d+) -> (.*)$/gm)].map((m) => m[1]);
    assert.deepEqual(fds, ['0', '1', '2'], o.stdout.tail);
    assert.doesNotMatch(o.stdout.tail, /supervisor\.db/);
  });

  test('the stdout pipe of a posix_spawned leader holds 1 MiB (F_SETPIPE_SZ), stderr keeps the default', { skip: !existsSync('/usr/bin/python3') && 'needs /usr/bin/python3 for F_GETPIPE_SZ' }, async () => {
    const t = sup.spawnTree({
      command: '/usr/bin/python3',
      args: ['-c', 'import fcntl; print(fcntl.fcntl(1, 1032), fcntl.fcntl(2, 1032))'],
    });
    started.add(t.spawnId);
    assert.equal(leaderOf(t).constructor.name, 'NativeChild');
    const o = await t.done;
    assert.equal(o.exitCode, 0, o.stderr.tail);
    const [out, err] = o.stdout.tail.trim().split(' ').map(Number);
    assert.equal(out, 1024 * 1024);
    assert.ok(err! < out!, o.stdout.tail);
  });

    test('exit codes and signals are reported as with Node’s spawn()', async () => {
    const a = sup.spawnTree({ command: 'sh', args: ['-c', 'exit 7'] });
    const b = sup.spawnTree({ command: 'sh', args: ['-c', 'kill -TERM $$; sleep 5'] });
    started.add(a.spawnId).add(b.spawnId);
    const [oa, ob] = await Promise.all([a.done, b.done]);
    assert.deepEqual([oa.reason, oa.exitCode, oa.signal], ['exited', 7, null]);
    assert.deepEqual([ob.reason, ob.exitCode, ob.signal], ['exited', null, 'SIGTERM']);
  });

  test('a start that fails throws and leaves no descriptor open', async () => {
    const before = openDescriptors();
    assert.throws(() => sup.spawnTree({ command: 'sh', args: ['-c', 'true'], cwd: '/nonexistent-dir-for-test' }), /spawn|ENOENT|error 2/);
    // The pipes are closed at once; the artifact files as their writers end (on the threadpool, which
    // a loaded machine can hold up for seconds: a leak never closes, so a long bound loses nothing).
    // The store's own files are not the start's: the checkpoint thread opens the WAL when its first
    // tick comes, which on a loaded machine can be after the count above.
    const leftByTheStart = (): string[] => [...openDescriptors()].filter(([fd, target]) => before.get(fd) !== target && !/supervisor\.db(-wal|-shm)?$/.test(target)).map(([fd, target]) => `${fd} -> ${target}`);
    await waitFor('the artifact files and pipes closed', () => leftByTheStart().length === 0 || null, 30_000).catch((err: Error) => {
      throw new Error(`${err.message}; still open: ${leftByTheStart().join(', ')}`);
    });
  });

  test('a leader killed because its record could not be written leaves no pipe open (its readers never started)', async () => {
    const before = openDescriptors();
    const insert = sup.records.insert;
    sup.records.insert = () => {
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    };
    try {
      assert.throws(() => sup.spawnTree({ command: 'sh', args: ['-c', 'echo out; echo err >&2; sleep 30'] }), /the spawn record could not be written/);
    } finally {
      sup.records.insert = insert;
    }
    const pipesLeft = (): string[] => [...openDescriptors()].filter(([fd, target]) => before.get(fd) !== target && target.startsWith('pipe:')).map(([fd, target]) => `${fd} -> ${target}`);
    await waitFor('the leader\'s pipes closed', () => pipesLeft().length === 0 || null, 10_000).catch((err: Error) => {
      throw new Error(`${err.message}; still open: ${pipesLeft().join(', ')}`);
    });
  });

  test('SUPERVISOR_SPAWN=node, or a tree that needs stdin or a channel, takes Node’s spawn()', async () => {
    const t = sup.spawnTree({ command: 'cat', stdin: 'pipe' });
    started.add(t.spawnId);
    assert.equal(leaderOf(t).constructor.name, 'ChildProcess');
    t.stdin!.end();
    await t.done;
    const off = new LinuxPlatform({ posixSpawn: false });
    assert.equal(off.spawnLeader('/bin/true', [], { cwd: '/', env: {} }), null);
  });
});
