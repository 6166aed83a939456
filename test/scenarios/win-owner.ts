// A supervisor process that owns one tree and then waits to be killed: the Windows test kills this
// process hard and checks that the kernel, closing the job handle, kills the tree.
// Usage: win-owner.js STATE_DIR [plain|stdin-pipe|channel|launcher]. Plain: stdin NUL; stdin-pipe: a
// stdin pipe; channel: a stdin pipe and a data channel; all started suspended as the command itself.
// Launcher: the channel shape with SUPERVISOR_SPAWN=node, so through the Node launcher.
import { fileURLToPath } from 'node:url';
import { ProcessSupervisor } from '../../src/process/index.js';

const stateDir = process.argv[2]!;
const shape = process.argv[3];
const fixture = fileURLToPath(new URL('../../../test/fixtures/node-tree.mjs', import.meta.url));
if (shape === 'launcher') process.env.SUPERVISOR_SPAWN = 'node';
const sup = ProcessSupervisor.open({ stateDir });
let out = '';
const tree = sup.spawnTree({
  command: process.execPath,
  args: [fixture, '3', '--ignore-stdin-end'],
  stdin: shape === 'plain' ? 'ignore' : 'pipe',
  channel: shape === 'channel' || shape === 'launcher',
  onStdout: (c) => {
    out += c.toString();
    if (out.includes('ready')) {
      const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
      process.stdout.write(JSON.stringify({ spawnId: tree.spawnId, launcher: tree.pid, pids }) + '\n');
    }
  },
});
setInterval(() => {}, 1000);
