// The leader of a supervised tree on Windows that the suspended start does not take (decisions 85,
// 109: trees with an IPC or data channel, or every tree with SUPERVISOR_SPAWN=node). It runs no command until the supervisor has put
// it into the tree's Job Object and said "go" over the IPC channel, so the command and everything
// it starts are in the job from their first instruction (no breakaway is allowed).
// `--verbatim CMD LINE`: CMD gets LINE as its command line untouched (cmd.exe for a batch file, with
// the line the supervisor quoted by cmd's rules, decision 108).
// Child-side: imports nothing from the supervisor.
import { spawn } from 'node:child_process';

const verbatim = process.argv[2] === '--verbatim';
const [command, ...args] = process.argv.slice(verbatim ? 3 : 2);
let started = false;

if (!command || typeof process.send !== 'function') {
  process.stderr.write('job-launcher: usage: node job-launcher-entry.js CMD [ARGS...] with an IPC channel\n');
  process.exit(125);
}

// If the supervisor dies before "go", the channel closes and nothing is ever started.
process.on('disconnect', () => {
  if (!started) process.exit(125);
});

process.once('message', (m: unknown) => {
  if (m !== 'go') {
    process.stderr.write('job-launcher: unexpected control message; refusing to start\n');
    process.exit(125);
  }
  started = true;
  const child = spawn(command, args, { stdio: 'inherit', windowsHide: true, windowsVerbatimArguments: verbatim });
  child.on('error', (err) => {
    process.stderr.write(`job-launcher: cannot start ${command}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code) => process.exit(code ?? 1));
  // Not from inside the message handler: Node's IPC code still touches the channel after it.
  setImmediate(() => process.disconnect());
});
