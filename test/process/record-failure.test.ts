// A spawn record that cannot be written (a full disk: SQLITE_FULL) kills the tree and refuses the
// spawn — and leaves nothing behind that keeps the supervisor alive. Found by the ENOSPC case of
// the fault-injection suite: `supervisor run` printed its error and then never exited, the killed
// tool host's pipes still open in its event loop. Runs in a child process, so a hang is a failure
// here, not a hung test runner.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { fixture, markedPids, tempDir } from '../helpers/procs.js';

const PROCESS_INDEX = fileURLToPath(new URL('../../src/process/index.js', import.meta.url));

/** A supervisor whose spawn records fail like a full disk; prints the spawn id and error, then closes. */
const SCRIPT = `
import { ProcessSupervisor } from ${JSON.stringify(PROCESS_INDEX)};
const [stateDir, command, ...args] = process.argv.slice(1);
const sup = ProcessSupervisor.open({ stateDir });
let spawnId = null;
sup.records.insert = (r) => {
  spawnId = r.spawnId;
  throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
};
try {
  sup.spawnTree({ command, args });
  console.log('spawned');
} catch (err) {
  console.log(JSON.stringify({ spawnId, error: err.message }));
}
await sup.close();
`;

describe('a spawn record that cannot be written', { skip: process.platform === 'win32' && 'POSIX fixtures' }, () => {
  const dirs: { remove(): void }[] = [];
  after(() => {
    for (const d of dirs) d.remove();
  });

  for (const [what, command, args] of [
    ['a single process', 'sleep', ['30']],
    ['a tree with grandchildren', process.execPath, [fixture('node-tree.mjs'), '3']],
  ] as const) {
    test(`${what}: the spawn is refused, the tree killed, and the process exits`, async () => {
      const state = tempDir('record-failure-');
      dirs.push(state);
      const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, state.path, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.on('close', (c, s) => r([c, s])));
      clearTimeout(timer);
      assert.equal(signal, null, `the supervisor did not exit within 15 s after the refused spawn (killed); stdout: ${out} stderr: ${err}`);
      assert.equal(code, 0, err);
      const result = JSON.parse(out.trim().split('\n').at(-1)!) as { spawnId: string; error: string };
      assert.match(result.error, /the spawn record could not be written, so the process was killed: database or disk is full/);
      assert.deepEqual(markedPids(result.spawnId), [], 'nothing of the refused tree runs');
    });
  }
});
