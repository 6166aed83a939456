// Windows smoke test of the Job Object chain the Win32 platform will use, end to end through ffi-rs:
// CreateJobObjectW + KILL_ON_JOB_CLOSE, CreateProcessW suspended, AssignProcessToJobObject,
// ResumeThread, QueryInformationJobObject (pid list), GetProcessTimes, CloseHandle(job) kills the tree.
// Runs on Windows, or here under Wine: scripts/wine/node.sh --test dist/test/windows/wine-smoke.test.js
// (docs/windows-under-wine.md). Skips elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

type Ffi = typeof import('ffi-rs');

const SKIP = process.platform === 'win32' ? false : `Windows only (process.platform is ${process.platform}); run it with scripts/wine/node.sh`;

const JobObjectBasicProcessIdList = 3;
const JobObjectExtendedLimitInformation = 9;
const JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x2000;
const CREATE_SUSPENDED = 0x4;
const CREATE_NO_WINDOW = 0x08000000;
const WAIT_OBJECT_0 = 0;
const WAIT_TIMEOUT = 258;
const STILL_ACTIVE = 259;
const FILETIME_UNIX_EPOCH_MS = 11644473600000n; // 1601-01-01 to 1970-01-01

test('Job Object lifecycle through ffi-rs (kernel32)', { skip: SKIP, timeout: 60_000 }, async () => {
  const ffi = createRequire(import.meta.url)('ffi-rs') as Ffi;
  const T = ffi.DataType;
  ffi.open({ library: 'kernel32', path: 'kernel32.dll' });
  const call = (funcName: string, retType: number, params: Array<[number, unknown]>): unknown =>
    ffi.load({
      library: 'kernel32',
      funcName,
      retType: retType as never,
      paramsType: params.map(([t]) => t) as never,
      paramsValue: params.map(([, v]) => v),
    });
  const NULL: [number, unknown] = [T.BigInt, 0n];
  const handle = (h: bigint): [number, unknown] => [T.BigInt, h];
  const closeHandle = (h: bigint): number => call('CloseHandle', T.I32, [handle(h)]) as number;

  const job = call('CreateJobObjectW', T.BigInt, [NULL, NULL]) as bigint;
  assert.notEqual(job, 0n, 'CreateJobObjectW returned NULL');
  let jobOpen = true;
  let hProcess = 0n;
  try {
    // JOBOBJECT_EXTENDED_LIMIT_INFORMATION: 144 bytes, BasicLimitInformation.LimitFlags at 16.
    const limits = Buffer.alloc(144);
    limits.writeUInt32LE(JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, 16);
    assert.equal(
      call('SetInformationJobObject', T.I32, [handle(job), [T.I32, JobObjectExtendedLimitInformation], [T.U8Array, limits], [T.U32, 144]]),
      1,
      'SetInformationJobObject(KILL_ON_JOB_CLOSE) failed',
    );

    // STARTUPINFOW: 104 bytes, cb at 0. PROCESS_INFORMATION: hProcess @0, hThread @8, pid @16, tid @20.
    const si = Buffer.alloc(104);
    si.writeUInt32LE(104, 0);
    const pi = Buffer.alloc(24);
    const commandLine = 'cmd.exe /c ping -n 30 127.0.0.1 >nul';
    const created = call('CreateProcessW', T.I32, [
      NULL, // lpApplicationName: taken from the command line
      [T.WString, commandLine],
      NULL,
      NULL,
      [T.I32, 0], // bInheritHandles
      [T.U32, CREATE_SUSPENDED | CREATE_NO_WINDOW],
      NULL, // environment: the parent's
      NULL, // current directory: the parent's
      [T.U8Array, si],
      [T.U8Array, pi],
    ]);
    assert.equal(created, 1, `CreateProcessW(${commandLine}) failed`);
    hProcess = pi.readBigUInt64LE(0);
    const hThread = pi.readBigUInt64LE(8);
    const pid = pi.readUInt32LE(16);
    assert.ok(hProcess !== 0n && hThread !== 0n && pid > 0, `PROCESS_INFORMATION not filled: ${pi.toString('hex')}`);
    console.log(`created suspended: pid ${pid}`);

    assert.equal(call('AssignProcessToJobObject', T.I32, [handle(job), handle(hProcess)]), 1, 'AssignProcessToJobObject failed');
    assert.equal(call('ResumeThread', T.U32, [handle(hThread)]), 1, 'ResumeThread: previous suspend count should be 1');
    closeHandle(hThread);

    // JOBOBJECT_BASIC_PROCESS_ID_LIST: assigned count @0, count in list @4, ULONG_PTR ids from 8.
    // Wait for ping.exe (cmd's child) to join: the job holds grandchildren too.
    const listJob = (): number[] => {
      const buf = Buffer.alloc(8 + 8 * 64);
      const ok = call('QueryInformationJobObject', T.I32, [handle(job), [T.I32, JobObjectBasicProcessIdList], [T.U8Array, buf], [T.U32, buf.length], NULL]);
      assert.equal(ok, 1, 'QueryInformationJobObject(BasicProcessIdList) failed');
      const n = buf.readUInt32LE(4);
      return Array.from({ length: n }, (_, i) => Number(buf.readBigUInt64LE(8 + 8 * i)));
    };
    let members = listJob();
    for (let i = 0; i < 50 && members.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      members = listJob();
    }
    console.log(`job members: ${members.join(', ')}`);
    assert.ok(members.includes(pid), `the job's pid list [${members.join(', ')}] lacks the child ${pid}`);
    assert.ok(members.length >= 2, `cmd.exe's child ping.exe never joined the job: [${members.join(', ')}]`);

    // GetProcessTimes: creation time as a FILETIME (100 ns units since 1601).
    const times = [Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8), Buffer.alloc(8)];
    assert.equal(call('GetProcessTimes', T.I32, [handle(hProcess), ...times.map((b): [number, unknown] => [T.U8Array, b])]), 1, 'GetProcessTimes failed');
    const createdMs = Number(times[0]!.readBigUInt64LE(0) / 10_000n - FILETIME_UNIX_EPOCH_MS);
    console.log(`creation time: ${new Date(createdMs).toISOString()}`);
    assert.ok(Math.abs(Date.now() - createdMs) < 120_000, `creation time ${new Date(createdMs).toISOString()} is not recent`);

    assert.equal(call('WaitForSingleObject', T.U32, [handle(hProcess), [T.U32, 0]]), WAIT_TIMEOUT, 'the child ended before the job was closed');

    // Closing the only job handle kills every process in it.
    const t0 = Date.now();
    assert.equal(closeHandle(job), 1, 'CloseHandle(job) failed');
    jobOpen = false;
    assert.equal(call('WaitForSingleObject', T.U32, [handle(hProcess), [T.U32, 2000]]), WAIT_OBJECT_0, 'the child outlived CloseHandle(job) by 2 s');
    const code = Buffer.alloc(4);
    assert.equal(call('GetExitCodeProcess', T.I32, [handle(hProcess), [T.U8Array, code]]), 1, 'GetExitCodeProcess failed');
    assert.notEqual(code.readUInt32LE(0), STILL_ACTIVE);
    console.log(`killed by CloseHandle(job) in ${Date.now() - t0} ms, exit code ${code.readUInt32LE(0)}`);
    for (const other of members.filter((p) => p !== pid)) {
      assert.throws(() => process.kill(other, 0), `job member ${other} is still running`);
    }
  } finally {
    if (jobOpen) closeHandle(job);
    if (hProcess !== 0n) closeHandle(hProcess);
  }
});
