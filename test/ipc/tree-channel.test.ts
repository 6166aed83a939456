// spawnTree's opt-in data pipe: the child finds it on the fd SUPERVISOR_CHANNEL_FD names, frames
// flow both ways, and the pipe is destroyed with the tree. Trees without it are unchanged.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ProcessSupervisor } from '../../src/process/index.js';
import { Channel, IpcError } from '../../src/ipc/index.js';
import { z } from 'zod';
import { markedPids, tempDir, waitFor } from '../helpers/procs.js';

// A bare echo over the data pipe: reads frames and writes each one back.
const ECHO = `
const net = require('node:net');
const fd = Number(process.env.SUPERVISOR_CHANNEL_FD);
const s = new net.Socket({ fd, readable: true, writable: true });
s.pipe(s);
`;

describe('spawnTree channel: true', { skip: process.platform === 'win32' && 'the win32 index is covered by the wine suite' }, () => {
  const state = tempDir();
  let sup: ProcessSupervisor;
  before(() => (sup = ProcessSupervisor.open({ stateDir: state.path })));
  after(async () => {
    await sup.close();
    state.remove();
  });

  test('a frame sent on the pipe comes back; the fd is 3; the pipe ends with the tree', async () => {
    const tree = sup.spawnTree({ command: process.execPath, args: ['-e', `console.log(process.env.SUPERVISOR_CHANNEL_FD);${ECHO}`], channel: true, artifacts: false });
    assert.ok(tree.channel);
    const got: unknown[] = [];
    const errors: IpcError[] = [];
    const ch = new Channel<unknown, unknown>(tree.channel, { incoming: z.unknown(), onMessage: (m) => got.push(m), onError: (e) => errors.push(e) });
    ch.send({ n: 1 });
    ch.send({ n: 2 });
    for (let i = 0; i < 200 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(got, [{ n: 1 }, { n: 2 }]);
    const out = await tree.stop();
    assert.equal(out.stdout.tail.trim(), '3');
    assert.equal(tree.channel.destroyed, true);
    // The channel hears of the close from the socket's 'close' event, a tick or more after the
    // destroy (a loaded CI machine once asserted before it): wait for it, boundedly.
    await waitFor('the channel to report its close', () => errors.length > 0 || null, 5_000);
    assert.deepEqual(errors.map((e) => e.code), ['IPC_CLOSED']);
    assert.deepEqual(markedPids(tree.spawnId), []);
  });

  test('without the option there is no pipe and no variable', async () => {
    // (fd 3 itself may exist in any node child: node opens its own descriptors at startup.)
    const tree = sup.spawnTree({ command: process.execPath, args: ['-e', 'console.log(String(process.env.SUPERVISOR_CHANNEL_FD))'], artifacts: false });
    assert.equal(tree.channel, null);
    const out = await tree.done;
    assert.equal(out.stdout.tail.trim(), 'undefined');
  });
});
