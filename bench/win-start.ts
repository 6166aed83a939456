// `scripts/wine/node.sh dist/bench/win-start.js [n] [--json]` (Windows, or under Wine): what a tree
// start costs with the Node launcher versus the suspended CreateProcessW (decisions 85, 86), the
// kinds alternating call by call so each sees the same machine. A plain tree is `cmd.exe /c exit 0`;
// a stdin-pipe tree (the shape of an MCP stdio server) is `cmd.exe /d /q` sent `exit 0` on its stdin;
// a channel tree (the shape of an authored tool host) is node.exe echoing its data channel (fd 3),
// sent "ping" and its EOF, the echo checked.
//   launcher          spawnTree() with SUPERVISOR_SPAWN=node: Node spawns the launcher, which spawns cmd
//   suspended         spawnTree(): pipes, CreateProcessW, AssignProcessToJobObject, ResumeThread
//   suspended-thread  spawnTreeAsync(): the same with CreateProcessW on a thread of ffi-rs's
//   launcher-stdin    the stdin-pipe tree through the launcher (Node's stdin pipe)
//   suspended-stdin   the stdin-pipe tree started suspended, stdin a token-proven named pipe (decision 107)
//   launcher-channel  the channel tree through the launcher (Node's pipe as fd 4, after the IPC slot)
//   suspended-channel the channel tree started suspended, fd 3 a token-proven duplex pipe in lpReserved2 (decision 116)
//   suspended-node    control for the channel pair: node.exe -e 0 started suspended, no channel (what node.exe costs)
// Per kind, in milliseconds:
//   spawn      spawnTree() returning, or spawnTreeAsync() settling
//   blocked    the longest the event loop was held during the start (a 1 ms timer's worst lateness)
//   lifecycle  call to the tree's outcome (exit seen, pipes drained, job emptied, record ended)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ProcessSupervisor } from '../src/process/index.js';
import { Win32Platform, type WindowsStartPath } from '../src/process/win32/win32-platform.js';
import { median, quantile } from './stats.js';

if (process.platform !== 'win32') {
  console.error(`bench/win-start: Windows only (process.platform is ${process.platform}); run it with scripts/wine/node.sh dist/bench/win-start.js`);
  process.exit(2);
}

const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 20);
const json = process.argv.includes('--json');
const cmd = process.env.ComSpec ?? 'C:\\Windows\\System32\\cmd.exe';

/** A supervisor whose platform made its start-path choice with SUPERVISOR_SPAWN as given. */
function supervisorFor(path: WindowsStartPath, dir: string): { sup: ProcessSupervisor; platform: Win32Platform } {
  const before = process.env.SUPERVISOR_SPAWN;
  if (path === 'launcher') process.env.SUPERVISOR_SPAWN = 'node';
  else delete process.env.SUPERVISOR_SPAWN;
  try {
    const platform = new Win32Platform();
    platform.init();
    if (platform.startPath.path !== path) throw new Error(`asked for ${path}, got ${platform.startPath.path}: ${platform.startPath.why}`);
    return { sup: ProcessSupervisor.open({ stateDir: join(dir, path), platform }), platform };
  } finally {
    if (before === undefined) delete process.env.SUPERVISOR_SPAWN;
    else process.env.SUPERVISOR_SPAWN = before;
  }
}

type Kind = 'launcher' | 'suspended' | 'suspended-thread' | 'launcher-stdin' | 'suspended-stdin' | 'launcher-channel' | 'suspended-channel' | 'suspended-node';
/** The channel tree: echoes its data channel until EOF, then exits. */
const CHANNEL_ECHO = "const s = new (require('node:net').Socket)({ fd: Number(process.env.SUPERVISOR_CHANNEL_FD), readable: true, writable: true }); s.pipe(s);";
type Metric = 'spawn' | 'blocked' | 'lifecycle';

/** The worst lateness of a 1 ms timer while it runs: how long the loop was held at once. */
function loopWatch(): () => number {
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last - 1);
    last = now;
  }, 1);
  return () => {
    clearInterval(timer);
    return Math.max(worst, performance.now() - last - 1);
  };
}

async function once(sup: ProcessSupervisor, kind: Kind): Promise<Record<Metric, number>> {
  const stop = loopWatch();
  await new Promise((r) => setTimeout(r, 2));
  const t0 = performance.now();
  const stdinPipe = kind.endsWith('-stdin');
  const channel = kind.endsWith('-channel');
  const tree =
    kind === 'suspended-thread'
      ? await sup.spawnTreeAsync({ command: cmd, args: ['/c', 'exit', '0'] })
      : sup.spawnTree(
          channel
            ? { command: process.execPath, args: ['-e', CHANNEL_ECHO], channel: true }
            : kind === 'suspended-node'
              ? { command: process.execPath, args: ['-e', '0'] }
              : stdinPipe
              ? { command: cmd, args: ['/d', '/q'], stdin: 'pipe' }
              : { command: cmd, args: ['/c', 'exit', '0'] },
        );
  const t1 = performance.now();
  tree.stdin?.end('exit 0\r\n');
  let echoed = '';
  const channelClosed = tree.channel ? new Promise<void>((r) => tree.channel!.once('close', () => r())) : null;
  tree.channel?.on('data', (c: Buffer) => (echoed += c.toString()));
  tree.channel?.end('ping');
  await new Promise((r) => setTimeout(r, 2));
  const blocked = stop();
  const [out] = await Promise.all([tree.done, channelClosed]);
  const t2 = performance.now();
  if (out.exitCode !== 0) throw new Error(`${kind}: the command ended with ${String(out.exitCode)} (${out.reason}): ${out.stderr.tail}`);
  if (channel && echoed !== 'ping') throw new Error(`${kind}: the channel echoed ${JSON.stringify(echoed)}, not "ping"`);
  return { spawn: t1 - t0, blocked, lifecycle: t2 - t0 };
}

const dir = mkdtempSync(join(tmpdir(), 'supervisor-win-start-'));
const kinds: Kind[] = ['launcher', 'suspended', 'suspended-thread', 'launcher-stdin', 'suspended-stdin', 'launcher-channel', 'suspended-channel', 'suspended-node'];
const launcher = supervisorFor('launcher', dir);
const suspended = supervisorFor('suspended', dir);
const supOf = (k: Kind): ProcessSupervisor => (k.startsWith('launcher') ? launcher.sup : suspended.sup);
const metrics: Metric[] = ['spawn', 'blocked', 'lifecycle'];
const samples = Object.fromEntries(kinds.map((k) => [k, { spawn: [], blocked: [], lifecycle: [] }])) as unknown as Record<Kind, Record<Metric, number[]>>;
try {
  // One warm-up each (module loads, ffi-rs's first calls), not counted.
  for (const k of kinds) await once(supOf(k), k);
  for (let i = 0; i < n; i++) {
    for (const k of i % 2 === 0 ? kinds : [...kinds].reverse()) {
      const s = await once(supOf(k), k);
      for (const m of metrics) samples[k][m].push(s[m]);
    }
  }
} finally {
  await launcher.sup.close();
  await suspended.sup.close();
  rmSync(dir, { recursive: true, force: true });
}

const round = (x: number): number => Math.round(x * 10) / 10;
const stat = (xs: number[]) => ({ median: round(median(xs)), p90: round(quantile(xs, 0.9)), min: round(Math.min(...xs)) });
const summary = Object.fromEntries(kinds.map((k) => [k, Object.fromEntries(metrics.map((m) => [m, stat(samples[k][m])]))])) as Record<Kind, Record<Metric, ReturnType<typeof stat>>>;
const wine = process.env.SUPERVISOR_UNDER_WINE === '1';
const commands = { plain: `${cmd} /c exit 0`, stdinPipe: `${cmd} /d /q, sent "exit 0" on stdin`, channel: 'node.exe -e <echo fd 3>, sent "ping" and EOF on its channel' };
if (json) console.log(JSON.stringify({ n, commands, underWine: wine, summary }, null, 2));
else {
  console.log(`n=${n} per kind, alternating; plain tree: ${commands.plain}; *-stdin: ${commands.stdinPipe}; *-channel: ${commands.channel}${wine ? ' (under Wine)' : ''}; median / p90 / min in ms`);
  console.log(`${'kind'.padEnd(18)}  ${metrics.map((m) => m.padEnd(24)).join('  ')}`);
  for (const k of kinds) console.log(`${k.padEnd(18)}  ${metrics.map((m) => `${summary[k][m].median} / ${summary[k][m].p90} / ${summary[k][m].min}`.padEnd(24)).join('  ')}`);
}
