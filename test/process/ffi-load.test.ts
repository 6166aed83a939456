// Loading ffi-rs (issue 17: it is on every start of `exec`). Its loader asks process.report for a
// full diagnostic report only to learn whether libc is glibc: 6–25 ms here. On Linux the answer is
// in /proc/self/maps, so the report is not built (decision 65).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

const LIBC = new URL('../../native-helpers/libc.js', import.meta.url).href;

test('loading ffi-rs on glibc Linux builds no diagnostic report, and libc calls still work', { skip: process.platform !== 'linux' }, () => {
  const script = `
    let reports = 0;
    const real = process.report.getReport;
    process.report.getReport = (...a) => { reports++; return real.apply(process.report, a); };
    const libc = await import(${JSON.stringify(LIBC)});
    const available = libc.libcAvailable();
    const fd = libc.pidfdOpen(process.pid);
    console.log(JSON.stringify({ reports, available, pidfd: fd.value >= 0, restored: process.report.getReport !== real ? 'wrapped' : 'real' }));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim());
  assert.equal(out.available, true);
  assert.equal(out.pidfd, true);
  assert.equal(out.reports, 0, 'process.report.getReport was called while loading ffi-rs');
  // The test's own wrapper is still in place: the loader restored what it found.
  assert.equal(out.restored, 'wrapped');
});
