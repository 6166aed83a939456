// `supervisor doctor`: which isolation mechanisms work on this machine, each found by trying it.
// The probes live beside what they probe; this file runs them and prints their lines. Missing
// mechanisms are findings, not errors; every probe child is a supervised tree, gone before we return.
import { randomBytes } from 'node:crypto';
import { probeNodePermission } from '../adapters/authored/permission-model-probe.js';
import { probeToolHostContainment } from '../adapters/authored/host-containment-probe.js';
import { probeThreadTier } from '../adapters/authored/thread-tier-probe.js';
import { probeTerminalAutoApproval } from '../adapters/builtin/terminal-sandbox-probe.js';
import { probeLibproc } from '../process/darwin/libproc-probe.js';
import { probeCgroup, probePidfd, probeSubreaper, probeTreeCpuGroup, probeUnshare } from '../process/linux/mechanism-probes.js';
import { probeFfi, probePlatform } from '../process/platform-probes.js';
import { PROBE_TIMEOUT_MS, ProbeChildren, type MechanismFinding } from '../process/probe-children.js';
import { probeBubblewrap, probeSandbox } from '../process/sandbox/sandbox-probes.js';
import { probeJobObjects } from '../process/win32/job-object-probe.js';
import { probeSqlite } from '../store/sqlite-probe.js';
import { probeStateDir } from '../store/state-dir-probe.js';
import { defaultStateDir } from './state-dir.js';

export interface DoctorEntry extends MechanismFinding {
  /** False when the mechanism belongs to another OS; such entries are not findings. */
  applicable?: boolean;
}

export const DOCTOR_MECHANISMS = [
  'platform',
  'ffi',
  'subreaper',
  'pidfd',
  'cgroupV2',
  'treeCpuGroup',
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
  'schemaPatterns',
  'evolve',
  'controlPlane',
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
  treeCpuGroup: ['linux'],
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
  schemaPatterns: 'all',
  evolve: 'all',
  controlPlane: 'all',
};

/** Prefix of SUPERVISOR_SPAWN_ID given to spawnPath's children (started beside the supervisor, not by it). */
export const DOCTOR_PROBE_MARKER_PREFIX = 'doctor-probe';

/** What the doctor was asked about beyond this machine: the control plane's URL, if any. */
interface DoctorContext {
  storeUrl: string | undefined;
}

type Probe = (children: ProbeChildren, ctx: DoctorContext) => Promise<DoctorEntry> | DoctorEntry;

/** Each line's probe, which lives beside what it probes; children start through `children`. */
const PROBES: Record<DoctorMechanism, Probe> = {
  platform: probePlatform,
  ffi: probeFfi,
  subreaper: probeSubreaper,
  pidfd: probePidfd,
  cgroupV2: probeCgroup,
  treeCpuGroup: probeTreeCpuGroup,
  bubblewrap: probeBubblewrap,
  sandbox: probeSandbox,
  terminalAutoApproval: probeTerminalAutoApproval,
  unshare: probeUnshare,
  nodePermissionModel: probeNodePermission,
  threadTier: (children) => probeThreadTier(children, PROBE_TIMEOUT_MS - 1_000),
  sqlite: probeSqlite,
  jobObjects: probeJobObjects,
  libproc: probeLibproc,
  toolHostContainment: probeToolHostContainment,
  stateDir: () => probeStateDir(defaultStateDir()),
  spawnPath: async () => (await import('../process/spawn-path-probe.js')).probeSpawnPath({ PATH: '/usr/bin:/bin', SUPERVISOR_SPAWN_ID: spawnPathMarker() }),
  syntaxCheck: async (children) => (await import('../core/module-syntax.js')).probeSyntaxCheck(children),
  schemaPatterns: async () => (await import('../core/input-schema.js')).probeSchemaPatterns(),
  evolve: async (children) => (await import('../evolve/evolve-probe.js')).probeEvolve(children),
  // Not a mechanism of this machine: without a URL there is nothing to try (runs use this machine's store).
  controlPlane: async (_children, ctx) =>
    ctx.storeUrl === undefined
      ? { ok: false, applicable: false, detail: 'no control plane given (--store or $SUPERVISOR_STORE_URL): runs use this machine\'s store' }
      : (await import('../control-plane/control-plane-probe.js')).probeControlPlane(ctx.storeUrl),
};

export async function runDoctor(ctx: DoctorContext = { storeUrl: undefined }): Promise<DoctorReport> {
  const children = new ProbeChildren();
  try {
    return await runProbes(children, ctx);
  } finally {
    // Every probe child is a supervised tree: this returns when the last one is gone.
    await children.close();
  }
}

async function runProbes(children: ProbeChildren, ctx: DoctorContext): Promise<DoctorReport> {
  const report = {} as DoctorReport;
  // One at a time: probes share this process (subreaper flag, ffi) and should not disturb each other.
  for (const name of DOCTOR_MECHANISMS) {
    const where = APPLIES[name];
    report[name] =
      where === 'all' || where.includes(process.platform)
        ? await bounded(name, () => PROBES[name](children, ctx))
        : { ok: false, applicable: false, detail: `not applicable on ${process.platform} (${where.join(', ')} only)` };
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
    return { ok: false, detail: `${name} probe failed: ${err instanceof Error ? err.message : String(err)}` };
  } finally {
    clearTimeout(timer);
  }
}

function spawnPathMarker(): string {
  return `${DOCTOR_PROBE_MARKER_PREFIX}-${process.pid}-${randomBytes(4).toString('hex')}`;
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

const DOCTOR_HELP = `usage: supervisor doctor [--json] [--store URL]

Tries each isolation mechanism on this machine and reports which work: on Linux ffi-rs, subreaper,
pidfd, cgroup v2, the trees' shared CPU group, bubblewrap, unshare; the sandbox tier (bubblewrap on Linux, sandbox-exec on
macOS), by running node inside it; the thread tier, by starting the trusted tool host and running a
call on one of its worker threads (a boundary around the supervisor only, never against the tool); on Windows Job Objects through kernel32; on macOS libproc
(or the ps fallback); everywhere Node's permission model, SQLite, and that untrusted schema
patterns run in linear time (schemaPatterns). Mechanisms of another OS
are shown as not applicable. Exit code 0 whenever the report
was produced: a missing mechanism is a finding, not an error.

With --store postgres://… (or $SUPERVISOR_STORE_URL) it also tries the control plane (controlPlane):
reached, its schema's version against this supervisor's, a NOTIFY delivered to a LISTEN, and the
role (a superuser role is a finding: the control plane's boundary is its role). It writes nothing.

  --json        print the report as JSON
  --store URL   also try this PostgreSQL control plane
  --help        show this help
`;

export interface DoctorCommandIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

export async function runDoctorCommand(argv: string[], io: DoctorCommandIo = process): Promise<number> {
  let json = false;
  let storeFlag: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--json') json = true;
    else if (arg === '--store') {
      storeFlag = argv[++i];
      if (storeFlag === undefined || storeFlag.startsWith('-')) {
        io.stderr.write('supervisor doctor: --store needs a PostgreSQL URL, e.g. --store postgres://user@host:5432/supervisor\n');
        return 2;
      }
    } else if (arg === '--help' || arg === '-h') {
      io.stdout.write(DOCTOR_HELP);
      return 0;
    } else {
      const what = arg.startsWith('-') ? `unknown option '${arg}'` : `unexpected argument '${arg}'`;
      io.stderr.write(`supervisor doctor: ${what}; accepted: --json, --store URL, --help\n`);
      return 2;
    }
  }
  const { storeUrlOf } = await import('./control-plane-cli.js');
  const report = await runDoctor({ storeUrl: storeUrlOf(storeFlag) });
  io.stdout.write(json ? `${JSON.stringify(report, null, 2)}\n` : formatDoctor(report));
  return 0;
}
