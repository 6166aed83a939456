// A supervisor that starts one sandboxed `sleep 60`, prints its tree as a JSON line, and waits to
// be killed. The test SIGKILLs this process and checks that the sandbox dies with it.
import { ProcessSupervisor, sandboxCommand } from '../../src/process/index.js';

const stateDir = process.argv[2]!;
const cwd = process.argv[3]!;
const sup = ProcessSupervisor.open({ stateDir });
const cmd = sandboxCommand({
  command: 'sleep',
  args: ['60'],
  readOnlyPaths: [cwd],
  writablePaths: [],
  cwd,
  network: false,
  env: { PATH: '/usr/bin:/bin' },
  protectedPaths: [stateDir],
});
const tree = sup.spawnTree({ ...cmd, artifacts: false });
process.stdout.write(`${JSON.stringify({ pid: tree.pid, spawnId: tree.spawnId })}\n`);
setInterval(() => undefined, 60_000);
