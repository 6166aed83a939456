// The macOS parsers, on any OS: proc_bsdinfo built byte by byte at the offsets of <sys/proc_info.h>,
// KERN_PROCARGS2 blocks with their edge cases, ps output, boot identity.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BSDINFO,
  SZOMB,
  SSLEEP,
  bootIdentity,
  envHas,
  parseBoottimeText,
  parseBsdInfo,
  parseLstart,
  parseProcArgs2,
  parsePsTable,
  parseTimeval,
  psCommandHasEnv,
  sameStart,
  startedBefore,
} from '../../../src/process/darwin/proc-info.js';
import { PsSource, PS_PATH, SYSCTL_PATH } from '../../../src/process/darwin/ps-source.js';
import { buildBsdInfo, buildProcArgs2 } from './darwin-fixtures.js';

describe('struct proc_bsdinfo', () => {
  test('the offsets follow from the header field list under LP64 alignment, 136 bytes in all', () => {
    // <sys/proc_info.h>, in order: [name, size, alignment].
    const fields: [string, number, number][] = [
      ['flags', 4, 4], ['status', 4, 4], ['xstatus', 4, 4], ['pid', 4, 4], ['ppid', 4, 4],
      ['uid', 4, 4], ['gid', 4, 4], ['ruid', 4, 4], ['rgid', 4, 4], ['svuid', 4, 4], ['svgid', 4, 4],
      ['rfu1', 4, 4], ['comm', 16, 1], ['name', 32, 1], ['nfiles', 4, 4], ['pgid', 4, 4], ['pjobc', 4, 4],
      ['tdev', 4, 4], ['tpgid', 4, 4], ['nice', 4, 4], ['startSec', 8, 8], ['startUsec', 8, 8],
    ];
    let off = 0;
    let maxAlign = 1;
    for (const [name, size, align] of fields) {
      off = Math.ceil(off / align) * align;
      maxAlign = Math.max(maxAlign, align);
      assert.equal((BSDINFO as Record<string, number>)[name], off, `offset of ${name}`);
      off += size;
    }
    assert.equal(Math.ceil(off / maxAlign) * maxAlign, BSDINFO.size);
    assert.equal(BSDINFO.size, 136);
    assert.equal(BSDINFO.commLen, 16);
    assert.equal(BSDINFO.nameLen, 32);
  });

  test('a buffer built at the documented offsets parses back field by field', () => {
    const buf = buildBsdInfo({
      pid: 4242,
      ppid: 4241,
      pgid: 4200,
      status: SSLEEP,
      flags: 0x20,
      uid: 501,
      ruid: 502,
      comm: 'node',
      name: 'node helper',
      startSec: 1_712_345_678n,
      startUsec: 987_654,
    });
    assert.equal(buf.length, 136);
    const p = parseBsdInfo(buf);
    assert.ok(p);
    assert.equal(p.pid, 4242);
    assert.equal(p.ppid, 4241);
    assert.equal(p.pgid, 4200);
    assert.equal(p.status, SSLEEP);
    assert.equal(p.flags, 0x20);
    assert.equal(p.uid, 501);
    assert.equal(p.ruid, 502);
    assert.equal(p.comm, 'node');
    assert.equal(p.name, 'node helper');
    assert.equal(p.startSec, 1_712_345_678n);
    assert.equal(p.startUsec, 987_654);
    assert.equal(p.startTime, '1712345678987654');
    assert.equal(p.zombie, false);
  });

  test('zombie status, a comm that fills all 16 bytes, and start times past 2^32 seconds', () => {
    const p = parseBsdInfo(buildBsdInfo({ pid: 7, status: SZOMB, comm: 'abcdefghijklmnop', startSec: 2n ** 33n, startUsec: 0 }));
    assert.ok(p);
    assert.equal(p.zombie, true);
    assert.equal(p.comm, 'abcdefghijklmnop', 'no NUL inside the array: exactly 16 bytes, nothing from pbi_name');
    assert.equal(p.startTime, (2n ** 33n * 1_000_000n).toString());
  });

  test('short buffers and impossible microseconds are rejected', () => {
    assert.equal(parseBsdInfo(Buffer.alloc(135)), null);
    assert.equal(parseBsdInfo(buildBsdInfo({ pid: 1, startSec: 1n, startUsec: 1_000_000 })), null);
  });
});

describe('KERN_PROCARGS2', () => {
  const ID = 'sp_0123456789abcdef01234567';
  const MARK = `SUPERVISOR_SPAWN_ID=${ID}`;

  test('argc, exec path, NUL padding, argv and the environment', () => {
    const buf = buildProcArgs2({ execPath: '/bin/sleep', padTo: 16, argv: ['sleep', '30'], env: ['PATH=/usr/bin:/bin', MARK, 'HOME=/Users/x'] });
    const a = parseProcArgs2(buf);
    assert.ok(a);
    assert.equal(a.argc, 2);
    assert.equal(a.execPath, '/bin/sleep');
    assert.deepEqual(a.argv, ['sleep', '30']);
    assert.deepEqual(a.env, ['PATH=/usr/bin:/bin', MARK, 'HOME=/Users/x']);
    assert.equal(a.truncated, false);
    assert.equal(envHas(a, 'SUPERVISOR_SPAWN_ID', ID), true);
  });

  test('trailing NUL padding and kernel "apple" strings after the environment do not disturb the match', () => {
    const buf = Buffer.concat([
      buildProcArgs2({ execPath: '/usr/bin/env', argv: ['env'], env: [MARK] }),
      Buffer.from('ptr_munge=\0main_stack=\0executable_file=0x1a01000009,0x2f3\0\0\0\0', 'latin1'),
    ]);
    const a = parseProcArgs2(buf);
    assert.ok(a);
    assert.equal(envHas(a, 'SUPERVISOR_SPAWN_ID', ID), true);
    assert.ok(a.env.includes('main_stack='));
  });

  test('no environment (withheld by the kernel, or cleared): no match, not truncated', () => {
    const a = parseProcArgs2(buildProcArgs2({ execPath: '/bin/sh', argv: ['sh', '-c', 'exec env -i sleep 9'], env: [] }));
    assert.ok(a);
    assert.deepEqual(a.env, []);
    assert.equal(a.truncated, false);
    assert.equal(envHas(a, 'SUPERVISOR_SPAWN_ID', ID), false);
  });

  test('the marker as a prefix of another name, a longer value, or in argv does not match', () => {
    const a = parseProcArgs2(
      buildProcArgs2({
        execPath: '/bin/x',
        argv: ['x', MARK, `--env=${MARK}`],
        env: [`SUPERVISOR_SPAWN_ID_PARENT=${ID}`, `XSUPERVISOR_SPAWN_ID=${ID}`, `SUPERVISOR_SPAWN_ID=${ID}0`, `SUPERVISOR_SPAWN_ID= ${ID}`],
      }),
    );
    assert.ok(a);
    assert.equal(envHas(a, 'SUPERVISOR_SPAWN_ID', ID), false);
    // ...while the longer value is itself found exactly.
    assert.equal(envHas(a, 'SUPERVISOR_SPAWN_ID', `${ID}0`), true);
  });

  test('a buffer cut inside a value never yields the cut-off prefix as a match', () => {
    const full = buildProcArgs2({ execPath: '/bin/x', argv: ['x'], env: ['A=1', `SUPERVISOR_SPAWN_ID=${ID}9`] });
    // Cut right after "…=ID", before the final "9" and its NUL.
    const cut = full.subarray(0, full.length - 2);
    const a = parseProcArgs2(cut);
    assert.ok(a);
    assert.equal(a.truncated, true);
    assert.deepEqual(a.env, ['A=1']);
    assert.equal(envHas(a, 'SUPERVISOR_SPAWN_ID', ID), false);
  });

  test('truncated inside the exec path or argv: nothing from the environment', () => {
    const full = buildProcArgs2({ execPath: '/usr/local/bin/tool', argv: ['tool', 'arg-one'], env: [MARK] });
    const inPath = parseProcArgs2(full.subarray(0, 10));
    assert.ok(inPath);
    assert.equal(inPath.truncated, true);
    assert.deepEqual(inPath.env, []);
    const pathEnd = full.indexOf(0, 4);
    const inArgv = parseProcArgs2(full.subarray(0, full.indexOf('arg-one', pathEnd) + 3));
    assert.ok(inArgv);
    assert.equal(inArgv.truncated, true);
    assert.deepEqual(inArgv.argv, ['tool']);
    assert.equal(envHas(inArgv, 'SUPERVISOR_SPAWN_ID', ID), false);
  });

  test('more argc than strings: truncated, no environment guessed', () => {
    const buf = buildProcArgs2({ execPath: '/bin/x', argv: ['a', 'b'], env: [MARK], argc: 5 });
    const a = parseProcArgs2(buf);
    assert.ok(a);
    assert.equal(a.truncated, true);
    assert.deepEqual(a.env, []);
  });

  test('impossible headers are rejected', () => {
    assert.equal(parseProcArgs2(Buffer.alloc(3)), null);
    const neg = Buffer.alloc(8);
    neg.writeInt32LE(-1, 0);
    assert.equal(parseProcArgs2(neg), null);
    const huge = Buffer.alloc(8);
    huge.writeInt32LE(1000, 0);
    assert.equal(parseProcArgs2(huge), null);
    assert.equal(envHas(null, 'SUPERVISOR_SPAWN_ID', ID), false);
  });

  test('the synthetic no-read-procargs answer (argc 1, path, NUL, path) has no environment', () => {
    const buf = Buffer.concat([Buffer.from([1, 0, 0, 0]), Buffer.from('/usr/libexec/x\0\0/usr/libexec/x\0', 'latin1')]);
    const a = parseProcArgs2(buf);
    assert.ok(a);
    assert.deepEqual(a.argv, ['/usr/libexec/x']);
    assert.deepEqual(a.env, []);
  });
});

describe('ps output (the fallback)', () => {
  test('the table: pid, ppid, pgid, state and lstart (C locale, UTC) to whole-second start times', () => {
    const text = [
      '    1     0     1 Ss   Mon Jan  1 00:00:00 2024',
      '  501     1   501 S    Tue Feb 13 09:05:07 2024',
      '  777   501   501 Z    Fri Apr  5 19:34:38 2024',
      '',
    ].join('\n');
    const { rows, rejected } = parsePsTable(text);
    assert.equal(rejected, 0);
    assert.deepEqual(
      rows.map((r) => [r.pid, r.ppid, r.pgid, r.zombie]),
      [
        [1, 0, 1, false],
        [501, 1, 501, false],
        [777, 501, 501, true],
      ],
    );
    assert.equal(rows[0]!.startTime, String(Date.UTC(2024, 0, 1, 0, 0, 0) * 1000));
    assert.equal(rows[2]!.startTime, String(Date.UTC(2024, 3, 5, 19, 34, 38) * 1000));
  });

  test('lines that are not exactly the requested columns are rejected, and a pid seen twice is dropped', () => {
    const text = [
      '  600     1   600 S    Mon Jan  1 00:00:00 2024',
      // A line as it would look if a command column were present (it is never requested).
      '  601     1   601 S    Mon Jan  1 00:00:00 2024 evil name',
      // A forged row for an existing pid, as a newline inside a command name could produce.
      '  600     1     7 S    Mon Jan  1 00:00:00 2024',
      '  602     1   602 S    Xyz Jan  1 00:00:00 2024',
      '  603     1   603 S    Tue Jan  1 00:00:00 2024', // 2024-01-01 was a Monday
      '  604     1   604 S    Fri Feb 30 00:00:00 2024',
      'garbage',
      '  605     1   605 R+   Wed Jan 31 23:59:59 2024',
    ].join('\n');
    const { rows, rejected } = parsePsTable(text);
    assert.deepEqual(
      rows.map((r) => r.pid),
      [605],
    );
    assert.equal(rejected, 7);
  });

  test('lstart parsing checks the calendar', () => {
    assert.equal(parseLstart('Thu', 'Feb', 29, 12, 0, 0, 2024), BigInt(Date.UTC(2024, 1, 29, 12) / 1000));
    assert.equal(parseLstart('Thu', 'Feb', 29, 12, 0, 0, 2023), null);
    assert.equal(parseLstart('Mon', 'Foo', 1, 0, 0, 0, 2024), null);
  });

  test('ps -E command lines with odd command names: only a whole NAME=value token matches', () => {
    const ID = 'sp_aaaaaaaaaaaaaaaaaaaaaaaa';
    const yes = [
      `/bin/sleep 30 PATH=/bin SUPERVISOR_SPAWN_ID=${ID} HOME=/x`,
      `my prog (with parens) [x] SUPERVISOR_SPAWN_ID=${ID}`,
      `SUPERVISOR_SPAWN_ID=${ID}\tTERM=xterm ./a\\nb`,
      `weird\nname\n SUPERVISOR_SPAWN_ID=${ID}\n`,
    ];
    const no = [
      `/bin/sleep 30 PATH=/bin SUPERVISOR_SPAWN_ID=${ID}0`,
      `prog --flag=SUPERVISOR_SPAWN_ID=${ID}`,
      `prog SUPERVISOR_SPAWN_ID_OLD=${ID}`,
      `prog "SUPERVISOR_SPAWN_ID=${ID}"`,
      `(sleep)`,
      '',
    ];
    for (const t of yes) assert.equal(psCommandHasEnv(t, 'SUPERVISOR_SPAWN_ID', ID), true, JSON.stringify(t));
    for (const t of no) assert.equal(psCommandHasEnv(t, 'SUPERVISOR_SPAWN_ID', ID), false, JSON.stringify(t));
  });

  test('PsSource runs /bin/ps and sysctl with fixed arguments and parses their answers', () => {
    const calls: string[] = [];
    const answers: Record<string, string | null> = {
      [`${SYSCTL_PATH} -n kern.bootsessionuuid`]: '5D6E7F80-1A2B-4C3D-8E9F-0123456789AB\n',
      [`${PS_PATH} -axo pid=,ppid=,pgid=,stat=,lstart=`]: '  900     1   900 Ss   Mon Jan  1 00:00:00 2024\n  901   900   900 S    Mon Jan  1 00:00:01 2024\n',
      [`${PS_PATH} -o pid=,ppid=,pgid=,stat=,lstart= -p 901`]: '  901   900   900 S    Mon Jan  1 00:00:01 2024\n',
      [`${PS_PATH} -o pid=,ppid=,pgid=,stat=,lstart= -p 902`]: null,
      [`${PS_PATH} -wwE -o command= -p 901`]: 'sleep 5 SUPERVISOR_SPAWN_ID=sp_x TMPDIR=/tmp\n',
    };
    const src = new PsSource((file, args) => {
      const key = [file, ...args].join(' ');
      calls.push(key);
      if (!(key in answers)) throw new Error(`unexpected command ${key}`);
      return answers[key]!;
    });
    assert.equal(src.kind, 'ps');
    assert.equal(src.coarseStartTime, true);
    assert.equal(src.bootId(), '5D6E7F80-1A2B-4C3D-8E9F-0123456789AB');
    assert.deepEqual(
      src.list().map((p) => p.pid),
      [900, 901],
    );
    assert.deepEqual(src.info(901), { pid: 901, ppid: 900, pgid: 900, zombie: false, startTime: String(Date.UTC(2024, 0, 1, 0, 0, 1) * 1000) });
    assert.equal(src.info(902), null);
    assert.equal(src.sid(901), null);
    assert.equal(src.environHas(901, 'SUPERVISOR_SPAWN_ID', 'sp_x'), true);
    assert.equal(src.environHas(901, 'SUPERVISOR_SPAWN_ID', 'sp_y'), false);
    assert.ok(calls.every((c) => c.startsWith('/')), 'absolute tool paths only');
  });

  test('PsSource fails loudly when the table cannot be read (an empty table would read as "tree gone")', () => {
    const src = new PsSource(() => null);
    assert.throws(() => src.list(), /process table cannot be read/);
    assert.equal(src.bootId(), '');
  });
});

describe('boot identity and start-time comparison', () => {
  test('kern.boottime timeval (LP64: int64 sec, int32 usec, padding)', () => {
    const b = Buffer.alloc(16);
    b.writeBigInt64LE(1_712_000_000n, 0);
    b.writeInt32LE(123_456, 8);
    assert.deepEqual(parseTimeval(b), { sec: 1_712_000_000n, usec: 123_456 });
    assert.equal(parseTimeval(Buffer.alloc(8)), null);
    assert.equal(parseTimeval(null), null);
    assert.deepEqual(parseBoottimeText('{ sec = 1712345678, usec = 123456 } Fri Apr  5 19:34:38 2024'), { sec: 1_712_345_678n });
    assert.equal(parseBoottimeText(null), null);
  });

  test('the boot id prefers kern.bootsessionuuid and never contains a colon', () => {
    assert.equal(bootIdentity('5d6e7f80-1a2b-4c3d-8e9f-0123456789ab', { sec: 5n }), '5D6E7F80-1A2B-4C3D-8E9F-0123456789AB');
    assert.equal(bootIdentity(null, { sec: 1_712_000_000n }), 'boottime-1712000000');
    assert.equal(bootIdentity('bad:value', null), '');
    for (const id of [bootIdentity('5d6e7f80-1a2b-4c3d-8e9f-0123456789ab', null), bootIdentity(null, { sec: 1n })]) assert.ok(!id.includes(':'));
  });

  test('exact comparison with microseconds; by the second when the source is coarse', () => {
    assert.equal(sameStart('1712345678987654', '1712345678987654', false), true);
    assert.equal(sameStart('1712345678987654', '1712345678000000', false), false);
    assert.equal(sameStart('1712345678987654', '1712345678000000', true), true);
    assert.equal(startedBefore('1712345677999999', '1712345678000000', false), true);
    assert.equal(startedBefore('1712345678000000', '1712345678987654', false), true);
    assert.equal(startedBefore('1712345678000000', '1712345678987654', true), false, 'same second: not before');
  });
});
