// A supervisor process that owns one tree and then waits to be killed: the Windows test kills this
// process hard and checks that the kernel, closing the job handle, kills the tree.
// Usage: win-owner.js STATE_DIR [plain|stdin-pipe]. Plain: stdin NUL; stdin-pipe: a stdin pipe; both
// are started suspended as the command itself. Otherwise a data channel too, so through the launcher.
import { fileURLToPath } from 'node:url';
import { ProcessSupervisor } from '../../src/process/index.js';

const stateDir = process.argv[2]!;
const shape = process.argv[3];
const fixture = fileURLToPath(new URL('../../../test/fixtures/node-tree.mjs', import.meta.url));
const sup = ProcessSupervisor.open({ stateDir });
let out = '';
const tree = sup.spawnTree({
  command: process.execPath,
  args: [fixture, '3', '--ignore-stdin-end'],
  stdin: shape === 'plain' ? 'ignore' : 'pipe',
  channel: shape !== 'plain' && shape !== 'stdin-pipe',
  onStdout: (c) => {
    out += c.toString();
    if (out.includes('ready')) {
      const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
      process.stdout.write(JSON.stringify({ spawnId: tree.spawnId, launcher: tree.pid, pids }) + '\n');
    }
  },
});
setInterval(() => {}, 1000);
