// The leader of a supervised tree on Windows that the suspended start does not take (decisions 85,
// 109, 116: every tree with SUPERVISOR_SPAWN=node, or where that start is not available). It runs no command until the supervisor has put
// it into the tree's Job Object and said "go" over the IPC channel, so the command and everything
// it starts are in the job from their first instruction (no breakaway is allowed).
// `--verbatim CMD LINE`: CMD gets LINE as its command line untouched (cmd.exe for a batch file, with
// the line the supervisor quoted by cmd's rules, decision 108).
// A tree's data channel is the launcher's fd SUPERVISOR_CHANNEL_FD (4, after the IPC slot); the
// command gets it as the same fd, so the variable stays true for it.
// Child-side: imports nothing from the supervisor.
import { spawn, type StdioOptions } from 'node:child_process';

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
  const child = spawn(command, args, { stdio: commandStdio(), windowsHide: true, windowsVerbatimArguments: verbatim });
  child.on('error', (err) => {
    process.stderr.write(`job-launcher: cannot start ${command}: ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code) => process.exit(code ?? 1));
  // Not from inside the message handler: Node's IPC code still touches the channel after it.
  setImmediate(() => process.disconnect());
});

/** The launcher's stdio, and its data channel (if the tree has one) at the same fd; nothing else. */
function commandStdio(): StdioOptions {
  const channelFd = Number(process.env.SUPERVISOR_CHANNEL_FD);
  if (!Number.isInteger(channelFd) || channelFd < 3) return 'inherit';
  return [0, 1, 2, ...Array<'ignore'>(channelFd - 3).fill('ignore'), channelFd];
}
