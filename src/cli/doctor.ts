// `supervisor doctor`: which isolation mechanisms work on this machine, each found by trying it.
// Missing mechanisms are findings, not errors; every probe child is killed and reaped before we return.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ESRCH,
  getChildSubreaper,
  libcAvailable,
  pidfdOpen,
  pidfdSendSignal,
  setChildSubreaper,
  waitpidNoHang,
} from '../../native-helpers/libc.js';
import {
  cgroupIsEmpty,
  cgroupPids,
  createTreeCgroup,
  detectCgroupV2,
  killCgroup,
  lastCgroupProbeReason,
  moveIntoCgroup,
  removeCgroup,
} from '../process/linux/cgroup.js';
import { probeJobObjects, probeLibproc, probeSandbox, probeThreadTier } from './doctor-platform-probes.js';
import { pidsWithSpawnMarker } from '../process/linux/procfs.js';
import { probeToolHostContainment } from './doctor-tool-host-probe.js';
import { probeTerminalAutoApproval } from './doctor-terminal-probe.js';
import { probeStateDir } from './doctor-state-dir-probe.js';

export interface DoctorEntry {
  ok: boolean;
  detail: string;
  version?: string;
  /** False when the mechanism belongs to another OS; such entries are not findings. */
  applicable?: boolean;
}

export const DOCTOR_MECHANISMS = [
  'platform',
  'ffi',
  'subreaper',
  'pidfd',
  'cgroupV2',
  'bubblewrap',
  'sandbox',
  'terminalAutoApproval',
  'unshare',
  'nodePermissionModel',
  'threadTier',
  'sqlite',
  'jobObjects',
  'libproc',
  'toolHostContainment',
  'stateDir',
  'spawnPath',
  'syntaxCheck',
] as const;
export type DoctorMechanism = (typeof DOCTOR_MECHANISMS)[number];
export type DoctorReport = Record<DoctorMechanism, DoctorEntry>;

/** Where each mechanism applies; elsewhere the doctor says so instead of reporting it missing. */
const APPLIES: Record<DoctorMechanism, readonly NodeJS.Platform[] | 'all'> = {
  platform: 'all',
  ffi: 'all',
  subreaper: ['linux'],
  pidfd: ['linux'],
  cgroupV2: ['linux'],
  bubblewrap: ['linux'],
  // The tier exists everywhere; on Windows it is a finding that it is unavailable, not "another OS".
  sandbox: 'all',
  terminalAutoApproval: 'all',
  unshare: ['linux'],
  nodePermissionModel: 'all',
  threadTier: 'all',
  sqlite: 'all',
  jobObjects: ['win32'],
  libproc: ['darwin'],
  toolHostContainment: 'all',
  stateDir: 'all',
  spawnPath: 'all',
  syntaxCheck: 'all',
};

/** Prefix of SUPERVISOR_SPAWN_ID given to every probe child; the full value adds our pid and a nonce. */
export const DOCTOR_PROBE_MARKER_PREFIX = 'doctor-probe';
const PROBE_TIMEOUT_MS = 5_000;

interface ProbeContext {
  marker: string;
  children: Set<ChildProcess>;
}

export async function runDoctor(): Promise<DoctorReport> {
  const ctx: ProbeContext = {
    marker: `${DOCTOR_PROBE_MARKER_PREFIX}-${process.pid}-${randomBytes(4).toString('hex')}`,
    children: new Set(),
  };
  const probes: Record<DoctorMechanism, (c: ProbeContext) => Promise<DoctorEntry> | DoctorEntry> = {
    platform: probePlatform,
    ffi: probeFfi,
    subreaper: probeSubreaper,
    pidfd: probePidfd,
    cgroupV2: probeCgroup,
    bubblewrap: probeBubblewrap,
    sandbox: (c) => probeSandbox((command, args, env) => runChild(c, command, args, undefined, env)),
    terminalAutoApproval: (c) => probeTerminalAutoApproval((command, args, env) => runChild(c, command, args, undefined, env)),
    unshare: probeUnshare,
    nodePermissionModel: probeNodePermission,
    threadTier: (c) => probeThreadTier((command, args, env) => startChild(c, command, args, env, true), PROBE_TIMEOUT_MS - 1_000),
    sqlite: probeSqlite,
    jobObjects: (c) => probeJobObjects(c.marker),
    libproc: () => probeLibproc(),
    toolHostContainment: (c) => probeToolHostContainment((command, args, env) => runChild(c, command, args, undefined, env)),
    stateDir: () => probeStateDir(),
    spawnPath: async (c) => (await import('../process/spawn-path-probe.js')).probeSpawnPath({ PATH: '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: c.marker }),
    syntaxCheck: async () => (await import('../core/module-syntax.js')).probeSyntaxCheck(),
  };
  const report = {} as DoctorReport;
  try {
    // One at a time: probes share this process (subreaper flag, ffi) and should not disturb each other.
    for (const name of DOCTOR_MECHANISMS) {
      const where = APPLIES[name];
      report[name] =
        where === 'all' || where.includes(process.platform)
          ? await bounded(name, () => probes[name](ctx))
          : { ok: false, applicable: false, detail: `not applicable on ${process.platform} (${where.join(', ')} only)` };
    }
  } finally {
    await cleanup(ctx);
  }
  return report;
}

async function bounded(name: string, fn: () => Promise<DoctorEntry> | DoctorEntry): Promise<DoctorEntry> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DoctorEntry>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, detail: `${name} probe timed out after ${PROBE_TIMEOUT_MS} ms` }), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(fn), timeout]);
  } catch (err) {
    return { ok: false, detail: `${name} probe failed: ${errText(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

function probePlatform(): DoctorEntry {
  const detail = `${process.platform} ${process.arch}, kernel ${os.release()}, node ${process.version}`;
  return { ok: true, detail, version: process.version };
}

async function probeFfi(): Promise<DoctorEntry> {
  if (process.platform === 'win32') {
    const { kernel32Available } = await import('../../native-helpers/kernel32.js');
    return kernel32Available()
      ? { ok: true, detail: 'ffi-rs loads and binds kernel32 on the main thread' }
      : { ok: false, detail: 'ffi-rs or kernel32 could not be loaded (is the ffi-rs win32 binary installed?)' };
  }
  return libcAvailable()
    ? { ok: true, detail: 'ffi-rs loads and binds libc on the main thread' }
    : { ok: false, detail: 'ffi-rs or libc could not be loaded (is the optional ffi-rs platform binary installed?)' };
}

function probeSubreaper(): DoctorEntry {
  if (process.platform !== 'linux') return { ok: false, detail: `PR_SET_CHILD_SUBREAPER is Linux only, not ${process.platform}` };
  if (!libcAvailable()) return { ok: false, detail: 'needs ffi-rs (see ffi)' };
  const r = setChildSubreaper();
  if (r.value < 0) return { ok: false, detail: `prctl(PR_SET_CHILD_SUBREAPER, 1) failed with errno ${r.errno}` };
  return getChildSubreaper()
    ? { ok: true, detail: 'prctl(PR_SET_CHILD_SUBREAPER) set and read back: setsid escapees re-parent to the supervisor' }
    : { ok: false, detail: 'prctl(PR_SET_CHILD_SUBREAPER) returned 0 but PR_GET_CHILD_SUBREAPER reads 0' };
}

async function probePidfd(ctx: ProbeContext): Promise<DoctorEntry> {
  if (process.platform !== 'linux') return { ok: false, detail: `pidfd is Linux only, not ${process.platform}` };
  if (!libcAvailable()) return { ok: false, detail: 'needs ffi-rs (see ffi)' };
  const child = startChild(ctx, 'sleep', ['30']);
  const exited = exitOf(child);
  const pid = await spawned(child);
  const open = pidfdOpen(pid);
  if (open.value < 0) {
    child.kill('SIGKILL');
    return { ok: false, detail: `pidfd_open(${pid}) failed with errno ${open.errno} (kernel older than 5.3?)` };
  }
  const fd = open.value;
  try {
    const live = pidfdSendSignal(fd, 0);
    if (live.value < 0) {
      child.kill('SIGKILL');
      return { ok: false, detail: `pidfd_send_signal(fd, 0) to a live child failed with errno ${live.errno}` };
    }
    child.kill('SIGKILL');
    await exited; // libuv has reaped it: the pid is free for reuse now.
    const gone = pidfdSendSignal(fd, 0);
    if (gone.value >= 0) return { ok: false, detail: 'pidfd_send_signal succeeded on a reaped child: pidfds do not protect against pid reuse here' };
    if (gone.errno !== ESRCH) return { ok: false, detail: `pidfd_send_signal on a reaped child gave errno ${gone.errno}, expected ESRCH (${ESRCH})` };
    return { ok: true, detail: 'pidfd_open + pidfd_send_signal work; a reaped child gives ESRCH (safe against pid reuse)' };
  } finally {
    fs.closeSync(fd);
  }
}

async function probeCgroup(ctx: ProbeContext): Promise<DoctorEntry> {
  const root = detectCgroupV2();
  if (!root) return { ok: false, detail: lastCgroupProbeReason() ?? 'no cgroup v2' };
  const dir = createTreeCgroup(root, `sp_${randomBytes(12).toString('hex')}`);
  try {
    const child = startChild(ctx, 'sleep', ['30']);
    const exited = exitOf(child);
    const pid = await spawned(child);
    moveIntoCgroup(dir, pid);
    if (!cgroupPids(dir).includes(pid)) return { ok: false, detail: `moved pid ${pid} into ${dir} but cgroup.procs does not list it` };
    killCgroup(dir);
    const signal = await exited;
    if (signal !== 'SIGKILL') return { ok: false, detail: `cgroup.kill did not kill the child (it ended with ${signal ?? 'an exit code'})` };
    const deadline = Date.now() + 2_000;
    while (!cgroupIsEmpty(dir)) {
      if (Date.now() > deadline) return { ok: false, detail: `${dir} still populated 2 s after cgroup.kill` };
      await sleep(5);
    }
    return { ok: true, detail: `cgroup.kill killed a child moved into a cgroup under ${root.base}` };
  } finally {
    killCgroup(dir);
    if (!(await removeCgroup(dir, 1_000))) throw new Error(`could not remove probe cgroup ${dir}: still populated`);
  }
}

async function probeBubblewrap(ctx: ProbeContext): Promise<DoctorEntry> {
  const v = await runChild(ctx, 'bwrap', ['--version']);
  if (v.error === 'ENOENT') return { ok: false, detail: 'not installed (apt-get install bubblewrap)', version: 'not installed' };
  const version = firstLine(v.stdout).replace(/^bubblewrap\s+/, '') || 'unknown';
  const r = await runChild(ctx, 'bwrap', ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', 'true']);
  if (r.code === 0) return { ok: true, detail: 'bwrap --unshare-all --die-with-parent --ro-bind / / true works', version };
  return { ok: false, detail: `bwrap --unshare-all failed: ${outcomeText(r)}`, version };
}

async function probeUnshare(ctx: ProbeContext): Promise<DoctorEntry> {
  const r = await runChild(ctx, 'unshare', ['-p', '-f', '--mount-proc', 'true']);
  if (r.error === 'ENOENT') return { ok: false, detail: 'unshare not installed (util-linux)' };
  const v = await runChild(ctx, 'unshare', ['--version']);
  const version = /(\d+\.\d+(?:\.\d+)?)/.exec(v.stdout)?.[1];
  const entry: DoctorEntry =
    r.code === 0
      ? { ok: true, detail: 'unshare -p -f --mount-proc true works (private pid namespaces for pid-reuse tests)' }
      : { ok: false, detail: `unshare -p -f --mount-proc failed: ${outcomeText(r)}` };
  if (version) entry.version = version;
  return entry;
}

// Reads a file outside the grant and spawns a child; both must fail with ERR_ACCESS_DENIED.
const PERMISSION_SCRIPT = `
const fs = require('node:fs');
const out = {};
try { fs.readFileSync(process.argv[2]); out.inside = 'ok'; } catch (e) { out.inside = e.code || String(e); }
try { fs.readFileSync(process.argv[3]); out.outside = 'ok'; } catch (e) { out.outside = e.code || String(e); }
try { require('node:child_process').spawnSync('true'); out.spawn = 'ok'; } catch (e) { out.spawn = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

async function probeNodePermission(ctx: ProbeContext): Promise<DoctorEntry> {
  const major = Number(process.versions.node.split('.')[0]);
  const flag = major >= 22 ? '--permission' : '--experimental-permission';
  const granted = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-grant-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-outside-'));
  try {
    const script = path.join(granted, 'probe.cjs');
    const insideFile = path.join(granted, 'inside.txt');
    const outsideFile = path.join(outside, 'outside.txt');
    fs.writeFileSync(script, PERMISSION_SCRIPT);
    fs.writeFileSync(insideFile, 'inside');
    fs.writeFileSync(outsideFile, 'outside');
    const r = await runChild(ctx, process.execPath, [flag, `--allow-fs-read=${granted}`, script, insideFile, outsideFile]);
    let res: { inside?: string; outside?: string; spawn?: string };
    try {
      res = JSON.parse(r.stdout) as typeof res;
    } catch {
      return { ok: false, detail: `node ${flag} did not run the probe script: ${outcomeText(r)}`, version: process.version };
    }
    const detail = `${flag} --allow-fs-read=<dir>: read inside ${res.inside}, read outside ${res.outside}, child_process ${res.spawn}`;
    const ok = res.inside === 'ok' && res.outside === 'ERR_ACCESS_DENIED' && res.spawn === 'ERR_ACCESS_DENIED';
    return { ok, detail, version: process.version };
  } finally {
    fs.rmSync(granted, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  }
}

function probeSqlite(): DoctorEntry {
  const require = createRequire(import.meta.url);
  let Database: typeof import('better-sqlite3');
  try {
    Database = require('better-sqlite3') as typeof import('better-sqlite3');
  } catch (err) {
    return { ok: false, detail: `better-sqlite3 does not load (run npm ci; 12.x is needed on Node 20): ${errText(err)}` };
  }
  const nativeBinding = process.env.SUPERVISOR_SQLITE_BINDING;
  const db = nativeBinding ? new Database(':memory:', { nativeBinding }) : new Database(':memory:');
  try {
    const row = db.prepare('select sqlite_version() as v').get() as { v: string };
    const pkg = require('better-sqlite3/package.json') as { version: string };
    return { ok: true, detail: `better-sqlite3 ${pkg.version} opens an in-memory database`, version: row.v };
  } finally {
    db.close();
  }
}

// ---- children -------------------------------------------------------------------------------

export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  error?: string;
}

function probeEnv(ctx: ProbeContext, env?: Record<string, string>): NodeJS.ProcessEnv {
  // A minimal environment: NODE_OPTIONS and friends from the caller must not change a probe.
  return { ...(env ?? { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' }), SUPERVISOR_SPAWN_ID: ctx.marker };
}

function startChild(ctx: ProbeContext, command: string, args: string[], env?: Record<string, string>, dataPipe = false): ChildProcess {
  // Own process group, so cleanup can kill whatever the probe started along with it.
  const child = spawn(command, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe', ...(dataPipe ? (['pipe'] as const) : [])], env: probeEnv(ctx, env) });
  ctx.children.add(child);
  child.on('error', () => {
    // Reported through spawned()/runChild(); without a listener an ENOENT would throw.
  });
  return child;
}

function spawned(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve(child.pid as number));
    child.once('error', reject);
  });
}

function exitOf(child: ChildProcess): Promise<NodeJS.Signals | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.signalCode);
    else child.once('exit', (_c, s) => resolve(s));
  });
}

const MAX_CAPTURE = 64 * 1024;

async function runChild(ctx: ProbeContext, command: string, args: string[], timeoutMs = PROBE_TIMEOUT_MS - 500, env?: Record<string, string>): Promise<ChildOutcome> {
  const child = startChild(ctx, command, args, env);
  const out: ChildOutcome = { code: null, signal: null, stdout: '', stderr: '' };
  child.stdout?.setEncoding('utf8').on('data', (s: string) => {
    if (out.stdout.length < MAX_CAPTURE) out.stdout += s;
  });
  child.stderr?.setEncoding('utf8').on('data', (s: string) => {
    if (out.stderr.length < MAX_CAPTURE) out.stderr += s;
  });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      out.error = `timed out after ${timeoutMs} ms`;
      killGroup(child);
    }, timeoutMs);
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      out.error = err.code ?? err.message;
      resolve(out);
    });
    // 'close' waits for the pipes; a grandchild holding them open is killed with the group above.
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      out.code = code;
      out.signal = signal;
      resolve(out);
    });
  });
}

function killGroup(child: ChildProcess): void {
  if (!child.pid) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
  try {
    child.kill('SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Kills and reaps every probe child, then sweeps /proc for anything else carrying our marker. */
async function cleanup(ctx: ProbeContext): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const child of ctx.children) {
    // Only while the leader is unreaped is its pid still our group's id (no stranger's group).
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) continue;
    killGroup(child);
    waits.push(Promise.race([exitOf(child), sleep(2_000)]));
  }
  await Promise.all(waits);
  const adopted = new Set<number>();
  const deadline = Date.now() + 2_000;
  for (;;) {
    const left = pidsWithMarker(ctx.marker);
    for (const pid of left) {
      // Orphans re-parented to us (subreaper) are not reaped by libuv: remember them to reap by pid.
      if (parentOf(pid) === process.pid && !isOwnChild(ctx, pid)) adopted.add(pid);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    if (process.platform === 'linux' && adopted.size > 0 && libcAvailable()) {
      for (const pid of adopted) {
        // waitpid for that one pid, never -1 (which would steal libuv's children).
        const r = waitpidNoHang(pid);
        if (r.value === pid || r.value < 0) adopted.delete(pid);
      }
    }
    if ((left.length === 0 && adopted.size === 0) || Date.now() > deadline) break;
    await sleep(20);
  }
}

function isOwnChild(ctx: ProbeContext, pid: number): boolean {
  for (const c of ctx.children) if (c.pid === pid) return true;
  return false;
}

function parentOf(pid: number): number | undefined {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function pidsWithMarker(marker: string): number[] {
  return process.platform === 'linux' ? pidsWithSpawnMarker(marker) : [];
}

function outcomeText(r: ChildOutcome): string {
  const how = r.error ?? (r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`);
  const err = firstLine(r.stderr);
  return err ? `${how}: ${err}` : how;
}

function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim() !== '' && !/ExperimentalWarning|--trace-warnings/.test(l)) ?? '').trim();
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- output and command ---------------------------------------------------------------------

export function formatDoctor(r: DoctorReport): string {
  const rows = DOCTOR_MECHANISMS.map((name) => {
    const e = r[name];
    return { mark: e.applicable === false ? '·' : e.ok ? '✓' : '✗', name, version: e.version ?? '', detail: e.detail };
  });
  const nameW = Math.max(...rows.map((x) => x.name.length));
  const verW = Math.max(...rows.map((x) => x.version.length));
  const lines = rows.map((x) => `${x.mark} ${x.name.padEnd(nameW)}  ${x.version.padEnd(verW)}  ${x.detail}`.trimEnd());
  const missing = rows.filter((x) => x.mark === '✗').map((x) => x.name);
  lines.push('', missing.length === 0 ? 'all mechanisms available' : `not available here: ${missing.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

const DOCTOR_HELP = `usage: supervisor doctor [--json]

Tries each isolation mechanism on this machine and reports which work: on Linux ffi-rs, subreaper,
pidfd, cgroup v2, bubblewrap, unshare; the sandbox tier (bubblewrap on Linux, sandbox-exec on
macOS), by running node inside it; the thread tier, by starting the trusted tool host and running a
call on one of its worker threads (a boundary around the supervisor only, never against the tool); on Windows Job Objects through kernel32; on macOS libproc
(or the ps fallback); everywhere Node's permission model and SQLite. Mechanisms of another OS
are shown as not applicable. Exit code 0 whenever the report
was produced: a missing mechanism is a finding, not an error.

  --json   print the report as JSON
  --help   show this help
`;

export interface DoctorCommandIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

export async function runDoctorCommand(argv: string[], io: DoctorCommandIo = process): Promise<number> {
  let json = false;
  for (const arg of argv) {
    if (arg === '--json') json = true;
    else if (arg === '--help' || arg === '-h') {
      io.stdout.write(DOCTOR_HELP);
      return 0;
    } else {
      const what = arg.startsWith('-') ? `unknown option '${arg}'` : `unexpected argument '${arg}'`;
      io.stderr.write(`supervisor doctor: ${what}; accepted: --json, --help\n`);
      return 2;
    }
  }
  const report = await runDoctor();
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
  return 0;
}
