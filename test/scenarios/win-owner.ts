// A supervisor process that owns one tree and then waits to be killed: the Windows test kills this
// process hard and checks that the kernel, closing the job handle, kills the tree.
import { fileURLToPath } from 'node:url';
import { ProcessSupervisor } from '../../src/process/index.js';

const stateDir = process.argv[2]!;
const fixture = fileURLToPath(new URL('../../../test/fixtures/node-tree.mjs', import.meta.url));
const sup = ProcessSupervisor.open({ stateDir });
let out = '';
const tree = sup.spawnTree({
  command: process.execPath,
  args: [fixture, '3', '--ignore-stdin-end'],
  stdin: 'pipe',
  onStdout: (c) => {
    out += c.toString();
    if (out.includes('ready')) {
      const pids = [...out.matchAll(/pid (\d+)/g)].map((m) => Number(m[1]));
      process.stdout.write(JSON.stringify({ spawnId: tree.spawnId, launcher: tree.pid, pids }) + '\n');
    }
  },
});
setInterval(() => {}, 1000);
