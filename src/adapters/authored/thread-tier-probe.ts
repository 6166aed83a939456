// For `doctor`: the thread tier, found by trying it. The real trusted tool host (dist entry) starts
// as a supervised tree with its data pipe, says hello, and runs one call of a probe tool on a worker
// thread with a heap limit, then shuts down.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeFrame, FrameDecoder, TOOL_HOST_PROTOCOL } from '../../ipc/index.js';
import { withScratchDirs, type MechanismFinding, type ProbeChildren } from '../../process/probe-children.js';
import type { SupervisedTree } from '../../process/index.js';
import { THREAD_HOST_ENTRY } from './thread-host.js';

// The probe tool: where it ran.
const THREAD_PROBE_TOOL = `import { isMainThread, threadId } from 'node:worker_threads';
export async function handler() { return { pid: process.pid, threadId, isMainThread }; }
`;

const THREAD_TIER_IS = 'a boundary around the supervisor only (its memory, its crashes), never against the tool: trusted tools share one address space with the user\'s full rights';

/** How the probe starts the host: node with these arguments (a test passes a host that fails). */
export const THREAD_PROBE_HOST_ARGS: readonly string[] = [THREAD_HOST_ENTRY, '--threads=1', '--heap-mb=64'];

type Frame = Record<string, unknown>;

export async function probeThreadTier(children: ProbeChildren, timeoutMs: number, hostArgs: readonly string[] = THREAD_PROBE_HOST_ARGS): Promise<MechanismFinding> {
  const t0 = Date.now();
  return withScratchDirs(['thread'], async ([dir]) => {
    const entryPath = path.join(dir!, 'probe.mjs');
    fs.writeFileSync(entryPath, THREAD_PROBE_TOOL);
    let stderr = '';
    const host = startHost(children, hostArgs, (s) => (stderr = (stderr + s).slice(-2000)));
    const fail = (why: string): MechanismFinding => {
      const err = stderr.split('\n').find((l) => l.trim() !== '') ?? '';
      return { ok: false, detail: `not usable: ${why}${err ? `: ${err.trim().slice(0, 200)}` : ''}; the tier is ${THREAD_TIER_IS}` };
    };
    if (typeof host === 'string') return fail(`the trusted tool host did not say hello: the host ended (${host})`);
    const pipe = host.channel;
    if (!pipe) return { ok: false, detail: `not usable: the host was started without its data pipe; the tier is ${THREAD_TIER_IS}` };
    const ended = host.done.then((o) => (o.signal ? `killed by ${o.signal}` : `exit code ${o.exitCode}`));
    const next = frameReader(pipe, ended, t0 + timeoutMs, timeoutMs);
    const hello = await next();
    if (typeof hello === 'string') return fail(`the trusted tool host did not say hello: ${hello}`);
    if (hello.type !== 'hello' || hello.protocol !== TOOL_HOST_PROTOCOL) return fail(`the trusted tool host's first frame was not a protocol ${TOOL_HOST_PROTOCOL} hello`);
    const tool = { name: 'doctor_probe', entryPath, capabilities: [], dispatchCapability: 'tool.call:doctor_probe' };
    pipe.write(encodeFrame({ type: 'call', id: 'p1', tool, input: {}, secrets: {}, deadlineMs: timeoutMs }));
    const reply = await next();
    if (typeof reply === 'string') return fail(`the probe call got no reply: ${reply}`);
    const v = reply.value as { pid?: number; threadId?: number; isMainThread?: boolean } | undefined;
    if (reply.type !== 'result' || !v || v.isMainThread !== false || !(Number(v.threadId) > 0) || v.pid !== host.pid) {
      return fail(`the probe call did not run on a worker thread of the host (${JSON.stringify(reply).slice(0, 200)})`);
    }
    const ms = Date.now() - t0;
    pipe.write(encodeFrame({ type: 'shutdown' }));
    const how = await Promise.race([ended, new Promise<string>((r) => setTimeout(() => r('still running'), 2_000))]);
    if (how !== 'exit code 0') return fail(`the host did not shut down cleanly after the probe (${how})`);
    return { ok: true, detail: `usable: the trusted tool host started in a child process and ran a call on worker thread ${v.threadId} (heap limit 64 MB per thread) in ${ms} ms; the tier is ${THREAD_TIER_IS}` };
  });
}

/** The host as a supervised tree with its data pipe, or why node could not be started. */
function startHost(children: ProbeChildren, hostArgs: readonly string[], onStderr: (s: string) => void): SupervisedTree | string {
  try {
    return children.start(process.execPath, hostArgs, { PATH: process.env.PATH ?? '/usr/bin:/bin' }, { channel: true, onStderr: (c) => onStderr(c.toString('utf8')) });
  } catch (err) {
    return `could not start node: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Reads the host's frames one at a time: a frame, or why none came (the host ended, or the deadline passed). */
function frameReader(pipe: NodeJS.ReadableStream, ended: Promise<string>, deadline: number, timeoutMs: number): () => Promise<Frame | string> {
  const decoder = new FrameDecoder();
  const frames: Frame[] = [];
  let wake: (() => void) | null = null;
  let gone: string | null = null;
  pipe.on('data', (c: Buffer) => {
    try {
      for (const m of decoder.push(c)) frames.push(m as Frame);
    } catch {
      frames.push({ type: 'garbage' });
    }
    wake?.();
  });
  void ended.then((why) => {
    gone = why;
    wake?.();
  });
  return async () => {
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
}
