import { test } from 'node:test';
import assert from 'node:assert/strict';
import { markedPids } from '../helpers/procs.js';
import { sandboxAvailability } from '../../src/process/index.js';
import { DOCTOR_MECHANISMS, DOCTOR_PROBE_MARKER_PREFIX, formatDoctor, runDoctor, runDoctorCommand } from '../../src/cli/doctor.js';

/** Live processes whose SUPERVISOR_SPAWN_ID is a doctor probe marker of this test process. */
const probeLeftovers = (): number[] => markedPids(`${DOCTOR_PROBE_MARKER_PREFIX}-${process.pid}-`, { prefix: true });

test('runDoctor reports the mechanisms known to work here and leaves no probe child behind', { skip: process.platform !== 'linux' && 'the doctor probes are measured on Linux' }, async () => {
  const report = await runDoctor();
  assert.deepEqual(Object.keys(report).sort(), [...DOCTOR_MECHANISMS].sort());
  for (const name of DOCTOR_MECHANISMS) {
    assert.equal(typeof report[name].ok, 'boolean', name);
    assert.ok(report[name].detail.trim().length > 0, `${name} has an empty detail`);
  }
  for (const name of ['platform', 'ffi', 'subreaper', 'pidfd', 'sqlite'] as const) {
    assert.equal(report[name].ok, true, `${name}: ${report[name].detail}`);
  }
  assert.match(report.sqlite.version ?? '', /^3\.\d+/);
  // The sandbox entry ran node inside the tier whenever the tier's own probe says it is usable.
  const tier = sandboxAvailability();
  assert.equal(report.sandbox.ok, tier.usable, report.sandbox.detail);
  assert.match(report.sandbox.detail, tier.usable ? /^usable \(bubblewrap\): node ran inside: interfaces \[lo\]/ : /^not usable/);
  assert.deepEqual(probeLeftovers(), [], 'a doctor probe child is still alive');

  const text = formatDoctor(report);
  for (const name of DOCTOR_MECHANISMS) assert.match(text, new RegExp(`^[✓✗·] ${name} `, 'm'));
});

test('runDoctorCommand: bad usage exits 2 naming the flag; --help exits 0', async () => {
  let out = '';
  const io = { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (out += s) } };
  assert.equal(await runDoctorCommand(['--jsn'], io), 2);
  assert.match(out, /unknown option '--jsn'/);
  out = '';
  assert.equal(await runDoctorCommand(['extra'], io), 2);
  assert.match(out, /unexpected argument 'extra'/);
  out = '';
  assert.equal(await runDoctorCommand(['--help'], io), 0);
  assert.match(out, /usage: supervisor doctor/);
  out = '';
  assert.equal(await runDoctorCommand(['--json'], io), 0);
  const parsed = JSON.parse(out) as Record<string, { ok: boolean; detail: string }>;
  assert.deepEqual(Object.keys(parsed).sort(), [...DOCTOR_MECHANISMS].sort());
  assert.deepEqual(probeLeftovers(), []);
});
