// The Windows figures an operator is shown (`supervisor ps`, the web page), against a fake process
// table: runs on any OS. What one process handle answers becomes the same shape as Linux's and
// macOS's; what Windows does not have (a state, a parent from the job's list) is null, shown n/a.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { win32Usage, type Win32ProcessFacts } from '../../src/process/win32/process-usage.js';

// 2026-01-02T03:04:05.678Z as a FILETIME: 100 ns ticks since 1601-01-01, written out independently.
const START_MS = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const CREATION = BigInt(START_MS) * 10_000n + 11_644_473_600n * 10_000_000n;

const table = new Map<number, Win32ProcessFacts>([
  [4100, { creation: CREATION, running: true, cpu100ns: 12_345_678n, workingSetBytes: 5n * 1024n * 1024n + 512n, imagePath: 'C:\\Program Files\\Git\\usr\\bin\\sleep.exe' }],
  [4200, { creation: CREATION, running: false, cpu100ns: 0n, workingSetBytes: 0n, imagePath: null }],
  [4300, { creation: CREATION + 1n, running: true, cpu100ns: 0n, workingSetBytes: null, imagePath: null }],
]);
const read = (pid: number): Win32ProcessFacts | null => table.get(pid) ?? null;

test("a live process's figures: start from its creation time, CPU from kernel + user time, RSS from the working set, the image's file name", () => {
  assert.deepEqual(win32Usage(read, 4100, CREATION.toString()), { ppid: null, name: 'sleep.exe', state: null, startedAt: START_MS, cpuMs: 1234, rssKib: 5 * 1024 });
});

test('an exited process, another creation time (a reused pid) or one that cannot be opened shows nothing', () => {
  assert.equal(win32Usage(read, 4200, CREATION.toString()), null);
  assert.equal(win32Usage(read, 4300, CREATION.toString()), null);
  assert.equal(win32Usage(read, 4999, CREATION.toString()), null);
});

test('a working set or image name the handle would not give is null and empty (n/a), not a guess', () => {
  assert.deepEqual(win32Usage(read, 4300, (CREATION + 1n).toString()), { ppid: null, name: '', state: null, startedAt: START_MS, cpuMs: 0, rssKib: null });
});
