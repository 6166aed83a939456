// Doctor probes for the Windows and macOS process layers and the sandbox tier, each found by trying it.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sandboxAvailability, sandboxCommand } from '../process/index.js';
import { THREAD_HOST_ENTRY } from '../adapters/authored/index.js';
import { encodeFrame, FrameDecoder, TOOL_HOST_PROTOCOL } from '../ipc/index.js';
import type { ChildOutcome, DoctorEntry } from './doctor.js';

/** Windows: a Job Object with KILL_ON_JOB_CLOSE holds a real child and TerminateJobObject ends it. */
export async function probeJobObjects(marker: string): Promise<DoctorEntry> {
  const k32 = await import('../../native-helpers/kernel32.js');
  if (!k32.kernel32Available()) return { ok: false, detail: 'kernel32 is not reachable through ffi-rs (is its win32 binary installed?)' };
  const job = k32.createJobObject();
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
    stdio: 'ignore',
    windowsHide: true,
    env: { ...process.env, SUPERVISOR_SPAWN_ID: marker },
  });
  try {
    k32.setKillOnJobClose(job);
    const h = child.pid === undefined ? null : k32.openProcess(child.pid);
    if (h === null) return { ok: false, detail: 'could not open the probe child' };
    try {
      k32.assignProcessToJobObject(job, h);
      if (!k32.jobProcessIds(job).includes(child.pid!)) return { ok: false, detail: 'AssignProcessToJobObject succeeded but the job does not list the child' };
      if (k32.processCreationTime(h) === null) return { ok: false, detail: 'GetProcessTimes gave no creation time' };
      k32.terminateJobObject(job, 1);
      const waited = k32.waitForSingleObject(h, 2_000);
      if (waited !== k32.WAIT_OBJECT_0) return { ok: false, detail: 'TerminateJobObject did not end the child within 2 s' };
      return {
        ok: true,
        detail: 'Job Object with KILL_ON_JOB_CLOSE: assign, QueryInformationJobObject, GetProcessTimes, TerminateJobObject work',
      };
    } finally {
      k32.closeHandle(h);
    }
  } finally {
    k32.closeHandle(job);
    if (child.exitCode === null) child.kill();
    await sleep(0);
  }
}

/** macOS: proc_pidinfo, KERN_PROCARGS2 and proc_listallpids answer for this process. */
export async function probeLibproc(): Promise<DoctorEntry> {
  const { defaultDarwinSource } = await import('../process/darwin/select-source.js');
  const source = defaultDarwinSource();
  const self = source.info(process.pid);
  if (!self) return { ok: false, detail: `${source.kind}: no information about the supervisor's own process` };
  const listed = source.list().some((p) => p.pid === process.pid);
  const marker = process.env.PATH ? source.environHas(process.pid, 'PATH', process.env.PATH) : true;
  const ok = listed && marker;
  return {
    ok,
    detail: `${source.kind}: start marker ${self.startTime}${source.coarseStartTime ? ' (whole seconds)' : ''}, process list ${listed ? 'ok' : 'MISSING self'}, environment read ${marker ? 'ok' : 'FAILED'}, boot id ${source.bootId() || 'unknown'}`,
  };
}

type RunChild = (command: string, args: string[], env: Record<string, string>) => Promise<ChildOutcome>;

// Run inside the sandbox: what it can see of the network, the pid space and a file outside its grant.
const SANDBOX_SCRIPT = `
const fs = require('node:fs'), os = require('node:os');
const out = { pid: process.pid, ifs: Object.keys(os.networkInterfaces()) };
try { out.procs = fs.readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).length; } catch (e) { out.procs = -1; }
try { fs.readFileSync(process.argv[1]); out.outside = 'ok'; } catch (e) { out.outside = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

/** The sandbox tier: sandboxAvailability() runs `true`; then node runs inside and checks what it can reach. */
export async function probeSandbox(run: RunChild): Promise<DoctorEntry> {
  const tier = sandboxAvailability({ refresh: true });
  if (!tier.usable) return { ok: false, detail: `not usable (${tier.mechanism ?? 'no mechanism'}): ${tier.reason}` };
  const granted = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-sandbox-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-outside-'));
  try {
    const outsideFile = path.join(outside, 'outside.txt');
    fs.writeFileSync(outsideFile, 'outside');
    const cmd = sandboxCommand({
      command: process.execPath,
      args: ['-e', SANDBOX_SCRIPT, outsideFile],
      readOnlyPaths: [granted],
      writablePaths: [],
      cwd: granted,
      network: false,
      env: { PATH: '/usr/bin:/bin' },
    });
    const r = await run(cmd.command, cmd.args, cmd.env);
    let res: { pid?: number; ifs?: string[]; procs?: number; outside?: string };
    try {
      res = JSON.parse(r.stdout) as typeof res;
    } catch {
      const how = r.error ?? (r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`);
      return { ok: false, detail: `not usable (${tier.mechanism}): node did not run inside the sandbox (${how}): ${r.stderr.split('\n')[0] ?? ''}`.trim() };
    }
    const found = `node ran inside: interfaces [${res.ifs?.join(', ')}], ${res.procs} visible process(es), a file outside the grant: ${res.outside}`;
    if (tier.mechanism === 'bubblewrap') {
      const ok = res.ifs?.join(',') === 'lo' && res.procs !== undefined && res.procs > 0 && res.procs <= 3 && res.outside === 'ENOENT';
      return { ok, detail: `${ok ? 'usable' : 'NOT isolated'} (bubblewrap): ${found}` };
    }
    // sandbox-exec has no network or pid namespace: only the file rule is checked. Unverified on a real Mac.
    const ok = res.outside === 'EPERM' || res.outside === 'EACCES';
    return { ok, detail: `${ok ? 'usable' : 'NOT isolated'} (sandbox-exec, profile UNVERIFIED): ${found}` };
  } finally {
    fs.rmSync(granted, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  }
}

/** Starts a probe child with a data pipe on fd 3 (its own process group, killed by the doctor's cleanup). */
export type StartChannelChild = (command: string, args: string[], env: Record<string, string>) => ChildProcess;

// The probe tool: where it ran.
const THREAD_PROBE_TOOL = `import { isMainThread, threadId } from 'node:worker_threads';
export async function handler() { return { pid: process.pid, threadId, isMainThread }; }
`;

const THREAD_TIER_IS = 'a boundary around the supervisor only (its memory, its crashes), never against the tool: trusted tools share one address space with the user\'s full rights';

/**
 * The thread tier: the real trusted tool host (dist entry) starts in a child process, says hello on
 * its channel, and runs one call of a probe tool on a worker thread with a heap limit, then shuts down.
 */
export async function probeThreadTier(start: StartChannelChild, timeoutMs: number): Promise<DoctorEntry> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'supervisor-doctor-thread-'));
  const t0 = Date.now();
  try {
    const entryPath = path.join(dir, 'probe.mjs');
    fs.writeFileSync(entryPath, THREAD_PROBE_TOOL);
    const child = start(process.execPath, [THREAD_HOST_ENTRY, '--threads=1', '--heap-mb=64'], { PATH: process.env.PATH ?? '/usr/bin:/bin', SUPERVISOR_CHANNEL_FD: '3' });
    const pipe = child.stdio[3] as NodeJS.ReadWriteStream | null | undefined;
    if (!pipe) return { ok: false, detail: `not usable: the host was started without its data pipe; the tier is ${THREAD_TIER_IS}` };
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)));
    const decoder = new FrameDecoder();
    const frames: Record<string, unknown>[] = [];
    let wake: (() => void) | null = null;
    pipe.on('data', (c: Buffer) => {
      try {
        for (const m of decoder.push(c)) frames.push(m as Record<string, unknown>);
      } catch {
        frames.push({ type: 'garbage' });
      }
      wake?.();
    });
    const ended = new Promise<string>((resolve) => {
      child.once('error', (e) => resolve(`could not start node: ${e.message}`));
      // 'close', not 'exit': its stderr is read to the end by then, for the reason shown.
      child.once('close', (code, signal) => resolve(signal ? `killed by ${signal}` : `exit code ${code}`));
    });
    let gone: string | null = null;
    void ended.then((why) => {
      gone = why;
      wake?.();
    });
    const deadline = t0 + timeoutMs;
    const next = async (): Promise<Record<string, unknown> | string> => {
      while (frames.length === 0) {
        if (gone) return `the host ended (${gone})`;
        if (Date.now() > deadline) return `no answer within ${timeoutMs} ms`;
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 50);
        });
        wake = null;
      }
      return frames.shift()!;
    };
    const fail = (why: string): DoctorEntry => {
      const err = stderr.split('\n').find((l) => l.trim() !== '') ?? '';
      return { ok: false, detail: `not usable: ${why}${err ? `: ${err.trim().slice(0, 200)}` : ''}; the tier is ${THREAD_TIER_IS}` };
    };
    const hello = await next();
    if (typeof hello === 'string') return fail(`the trusted tool host did not say hello: ${hello}`);
    if (hello.type !== 'hello' || hello.protocol !== TOOL_HOST_PROTOCOL) return fail(`the trusted tool host's first frame was not a protocol ${TOOL_HOST_PROTOCOL} hello`);
    const tool = { name: 'doctor_probe', entryPath, capabilities: [], dispatchCapability: 'tool.call:doctor_probe' };
    pipe.write(encodeFrame({ type: 'call', id: 'p1', tool, input: {}, secrets: {}, deadlineMs: timeoutMs }));
    const reply = await next();
    if (typeof reply === 'string') return fail(`the probe call got no reply: ${reply}`);
    const v = reply.value as { pid?: number; threadId?: number; isMainThread?: boolean } | undefined;
    if (reply.type !== 'result' || !v || v.isMainThread !== false || !(Number(v.threadId) > 0) || v.pid !== child.pid) {
      return fail(`the probe call did not run on a worker thread of the host (${JSON.stringify(reply).slice(0, 200)})`);
    }
    const ms = Date.now() - t0;
    pipe.write(encodeFrame({ type: 'shutdown' }));
    const how = await Promise.race([ended, new Promise<string>((r) => setTimeout(() => r('still running'), 2_000))]);
    if (how !== 'exit code 0') return fail(`the host did not shut down cleanly after the probe (${how})`);
    return { ok: true, detail: `usable: the trusted tool host started in a child process and ran a call on worker thread ${v.threadId} (heap limit 64 MB per thread) in ${ms} ms; the tier is ${THREAD_TIER_IS}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
