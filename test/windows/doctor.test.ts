// `supervisor doctor` on Windows (here under Wine): it finds Job Objects by trying them, and
// shows the Linux and macOS mechanisms as not applicable rather than missing, and says which start
// path trees take (the suspended CreateProcessW, proven with a stdin pipe; data channels too) and
// which still take the launcher.
import { test } from 'node:test';
import assert from 'node:assert/strict';

const SKIP = process.platform === 'win32' ? false : `Windows only (process.platform is ${process.platform}); run it under Wine with npm run test:windows`;

test('doctor reports the Windows mechanisms it finds', { skip: SKIP, timeout: 60_000 }, async () => {
  const { runDoctor, formatDoctor } = await import('../../src/cli/doctor.js');
  const report = await runDoctor();
  for (const name of ['ffi', 'jobObjects', 'sqlite'] as const) assert.equal(report[name].ok, true, `${name}: ${report[name].detail}`);
  for (const name of ['subreaper', 'pidfd', 'cgroupV2', 'libproc'] as const) assert.equal(report[name].applicable, false, name);
  assert.equal(report.spawnPath.ok, true, report.spawnPath.detail);
  assert.match(report.spawnPath.detail, /^CreateProcessW suspended into the tree's Job Object for trees whose stdin is NUL, inherited or a pipe .*with or without a data channel .*fd 3.*lpReserved2.*\.bat\/\.cmd/);
  assert.match(report.spawnPath.detail, /it ran "exit 7" from its stdin pipe/, 'the probe went through a stdin pipe');
  assert.match(report.spawnPath.detail, /only a command that is no \.exe, \.com, \.bat or \.cmd uses the Node launcher.*SUPERVISOR_SPAWN=node/, 'says which trees still take the launcher');
  const text = formatDoctor(report);
  assert.match(text, /✓ jobObjects/);
  assert.doesNotMatch(text, /not available here: .*subreaper/);
});
