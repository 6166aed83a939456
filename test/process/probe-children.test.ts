// The doctor's probe children are supervised trees: a missing command and a timeout are outcomes,
// and close() leaves nothing behind, not even a setsid escapee that ignores TERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProbeChildren, outcomeText } from '../../src/process/probe-children.js';
import { fixture, markedPids } from '../helpers/procs.js';

const LINUX = process.platform !== 'linux' && 'the probes are measured on Linux';

test('run(): output and exit code; a missing command is ENOENT; a timeout kills the tree and says so', { skip: LINUX }, async () => {
  const children = new ProbeChildren();
  try {
    const ok = await children.run('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3']);
    assert.deepEqual([ok.code, ok.signal, ok.stdout, ok.stderr, ok.error], [3, null, 'out\n', 'err\n', undefined]);
    assert.equal(outcomeText(ok), 'exit code 3: err');
    const missing = await children.run('no-such-command-for-doctor', []);
    assert.equal(missing.error, 'ENOENT');
    const t0 = Date.now();
    const slow = await children.run('sleep', ['30'], undefined, 300);
    assert.equal(slow.error, 'timed out after 300 ms');
    assert.ok(Date.now() - t0 < 3_000, `the timeout took ${Date.now() - t0} ms`);
  } finally {
    await children.close();
  }
});

test('close(): every probe tree is gone, a setsid escapee that ignores TERM included, and no child starts after it', { skip: LINUX }, async () => {
  const children = new ProbeChildren();
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  const tree = children.start('/bin/sh', [fixture('setsid-escapee.sh')], undefined, { onStdout: (c) => c.toString().includes('ready') && ready() });
  await started;
  assert.ok(markedPids(tree.spawnId).length >= 2, 'the escapee carries the tree marker');
  await children.close();
  assert.deepEqual(markedPids(tree.spawnId), []);
  assert.throws(() => children.start('true', []), { code: 'SUPERVISOR_CLOSED' });
});
