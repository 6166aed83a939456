// The authored-tool adapter (`authored:<name>` keys). Step 4 is pure: the manifest is attached,
// the entry lies inside the tool directory, the tier is one this build runs (the thread tier only
// for tools the operator marked trusted). Step 7 runs the call on a warm tool host, or on a thread
// of the trusted host, under the deadline and the cancel signal.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { checkModuleSyntax, type CoreSnapshot } from '../../core/index.js';
import type { AuthoredToolManifest } from '../../core/snapshot.js';
import { sandboxAvailability } from '../../process/index.js';
import type { ProcessSupervisor } from '../../process/index.js';
import type { SpawnAnswer, SpawnRequest } from '../../ipc/index.js';
import { AdapterCheckError, AdapterUnavailableError, type AdapterEnv, type AdapterOutput, type EffectAdapter, type InvokeEnv } from '../adapter-types.js';
import { AuthoredToolError } from './errors.js';
import { toolHostConfig, type ToolHostConfig } from './host-config.js';
import { isInsideDir, resolveReadHints, type HostSpec } from './host-launch.js';
import { ToolHostPool } from './tool-host-pool.js';
import { ThreadToolHost } from './thread-host.js';

/** Inputs up to this size are bound into the approval key as they are; larger ones by digest. */
const INPUT_IN_KEY_MAX = 2048;
const RESULT_TEXT_MAX = 64 * 1024;
const LOG_LINES_KEPT = 50;

type Tier = 'process' | 'sandbox' | 'thread';

/** A tool's checked launch data, worked out once per attached core (paths, tier, its pool). */
interface ResolvedTool {
  tool: AuthoredToolManifest;
  tier: Tier;
  spec: HostSpec;
  /** The call message's `tool` part, the same for every call. */
  wire: { name: string; entryPath: string; capabilities: string[]; dispatchCapability: string };
  pool: ToolHostPool | null;
}

interface AttachedCore {
  core: CoreSnapshot;
  config: ToolHostConfig;
  tools: ReadonlyMap<string, AuthoredToolManifest>;
  /** The operator's mark (agent.yaml tool_hosts.trusted): the only way into the thread tier. */
  trusted: ReadonlySet<string>;
  resolved: Map<string, ResolvedTool>;
  pools: Map<string, ToolHostPool>;
  threadHost: ThreadToolHost | null;
  /** Replaced or closed: it starts no host any more. */
  closed: boolean;
}

/** Per supervisor: the cores whose authored tools it runs, by core directory and revision. */
const attached = new WeakMap<ProcessSupervisor, Map<string, AttachedCore>>();

export interface AuthoredToolsHandle {
  readonly config: ToolHostConfig;
  /** The pools started so far (one per tool and permission set). */
  pools(): ToolHostPool[];
  /** The thread tier's trusted host, once a trusted tool was called. */
  threadHost(): ThreadToolHost | null;
  /** Stops every worker of this core now (the next call starts fresh ones). */
  close(): Promise<void>;
}

async function closeAttached(at: AttachedCore): Promise<void> {
  at.closed = true;
  await Promise.all([...[...at.pools.values()].map((p) => p.close()), at.threadHost?.close()]);
}

/**
 * The hosts of `core`'s authored tools on `supervisor`, made on first use: the adapter finds the
 * core in its environment (the catalog's own), so nobody has to attach it. A newer revision of the
 * same core directory replaces the older one (whose hosts run code the new catalog was not built
 * from). The supervisor's close stops them first, so no pool replaces a worker it is killing.
 */
function attachedFor(supervisor: ProcessSupervisor, core: CoreSnapshot, overrides: Partial<ToolHostConfig> = {}): AttachedCore {
  let byCore = attached.get(supervisor);
  if (!byCore) {
    const cores = (byCore = new Map());
    attached.set(supervisor, cores);
    supervisor.onClose(async () => {
      const all = [...cores.values()];
      cores.clear();
      await Promise.all(all.map(closeAttached));
    });
  }
  const id = `${core.dir}\0${core.revision}`;
  let at = byCore.get(id);
  if (!at) {
    for (const [k, old] of byCore) {
      if (old.core.dir === core.dir) {
        byCore.delete(k);
        void closeAttached(old);
      }
    }
    at = {
      core,
      config: toolHostConfig(core.agent.tool_hosts, overrides),
      tools: new Map(core.tools.map((t) => [t.name, t])),
      trusted: new Set(core.agent.tool_hosts?.trusted ?? []),
      resolved: new Map(),
      pools: new Map(),
      threadHost: null,
      // After the supervisor's close nothing starts: a call fails at step 7 (ADAPTER_FAILED).
      closed: supervisor.isClosed,
    };
    byCore.set(id, at);
  }
  return at;
}

/**
 * A handle on `core`'s tool hosts on `supervisor` (made now if none exist yet, with `overrides`
 * for the host settings): for tests, benchmarks and the operator. Running the tools needs none.
 */
export function authoredToolHosts(supervisor: ProcessSupervisor, core: CoreSnapshot, overrides: Partial<ToolHostConfig> = {}): AuthoredToolsHandle {
  const at = attachedFor(supervisor, core, overrides);
  return {
    config: at.config,
    pools: () => [...at.pools.values()],
    threadHost: () => at.threadHost,
    async close() {
      const byCore = attached.get(supervisor);
      for (const [k, v] of byCore ?? []) if (v === at) byCore!.delete(k);
      await closeAttached(at);
    },
  };
}

function lookup(env: AdapterEnv, name: string): { at: AttachedCore; tool: AuthoredToolManifest } {
  const at = attachedFor(env.supervisor, env.core);
  const tool = at.tools.get(name);
  if (!tool) {
    throw new AdapterCheckError(`no authored tool named '${name}' in the core ${env.core.dir} (revision ${env.core.revision.slice(0, 12)}); rebuild the catalog from the core`);
  }
  return { at, tool };
}

/** The tier a tool runs in: its manifest's, where `thread` needs the operator's mark. */
function tierOf(at: AttachedCore, tool: AuthoredToolManifest): Tier {
  const asked = tool.isolation.tier;
  if (asked !== 'thread') return asked;
  if (at.trusted.has(tool.name)) return 'thread';
  throw new AdapterCheckError(
    `${tool.source.manifest}: isolation.tier: thread is refused: only the operator can put a tool in the thread tier, which runs it in a shared trusted host with no boundary against its code, and agent.yaml does not mark '${tool.name}' trusted. ` +
      `Fix: set isolation.tier: process (or sandbox) in ${tool.source.manifest}, or, if the operator trusts this code, add '${tool.name}' to tool_hosts.trusted in agent.yaml`,
  );
}

/** Step 4's checks of a tool (not cached when they fail, so a fixed machine is seen at once). */
function resolveTool(at: AttachedCore, tool: AuthoredToolManifest): ResolvedTool {
  const known = at.resolved.get(tool.name);
  if (known) {
    if (known.tier !== 'thread') checkContainment(tool, known.tier);
    return known;
  }
  const tier = tierOf(at, tool);
  if (tier !== 'thread') checkContainment(tool, tier);
  if (tool.source.entrySha256 === '') throw new AdapterCheckError(`${tool.source.manifest}: entry '${tool.entry}' was not read when the core loaded; reload the core`);
  const toolDir = join(at.core.dir, tool.source.dir);
  const entryPath = join(at.core.dir, tool.source.entry);
  if (!isInsideDir(toolDir, entryPath)) throw new AdapterCheckError(`${tool.source.manifest}: entry '${tool.entry}' lies outside the tool directory; keep the code inside ${tool.source.dir}/`);
  let readPaths: string[];
  try {
    readPaths = resolveReadHints(tool.isolation.read, toolDir, at.core.workspace);
  } catch (err) {
    throw new AdapterCheckError(`${tool.source.manifest}: ${(err as Error).message}`);
  }
  const spec: HostSpec = { toolName: tool.name, toolDir, entryPath, entrySha256: tool.source.entrySha256, readPaths, workspace: at.core.workspace, tier: tier === 'sandbox' ? 'sandbox' : 'process', network: tool.isolation.network };
  const r: ResolvedTool = { tool, tier, spec, wire: { name: tool.name, entryPath, capabilities: [...tool.capabilities], dispatchCapability: tool.capability }, pool: null };
  at.resolved.set(tool.name, r);
  return r;
}

/**
 * Both tiers run the host in the OS sandbox (host-launch.ts); where none works, the tool is refused:
 * the process tier never falls back to a host that could signal or read the supervisor.
 */
function checkContainment(tool: AuthoredToolManifest, tier: 'process' | 'sandbox'): void {
  const a = sandboxAvailability();
  if (a.usable) return;
  if (tier === 'sandbox') {
    throw new AdapterUnavailableError(`${tool.source.manifest}: isolation tier 'sandbox' is not usable on this machine: ${a.reason} (supervisor doctor shows it)`);
  }
  throw new AdapterUnavailableError(
    `${tool.source.manifest}: isolation tier 'process' is refused on this machine: no mechanism here keeps a tool host from signalling or reading the supervisor and other processes (${a.reason}). ` +
      `Run 'supervisor doctor' to see what is missing (toolHostContainment), fix it, or, if the operator trusts this code, add '${tool.name}' to tool_hosts.trusted in agent.yaml and set isolation.tier: thread`,
  );
}

function poolFor(supervisor: ProcessSupervisor, at: AttachedCore, r: ResolvedTool): ToolHostPool {
  if (at.closed) throw new AuthoredToolError('ADAPTER_FAILED', `the tool hosts of ${at.core.dir} were closed (the supervisor is closing, or a newer revision of the core replaced them)`);
  if (r.pool) return r.pool;
  const spec = r.spec;
  const key = JSON.stringify([spec.toolName, spec.entryPath, spec.entrySha256, spec.readPaths, spec.tier, spec.network]);
  let pool = at.pools.get(key);
  if (!pool) at.pools.set(key, (pool = new ToolHostPool(supervisor, spec, at.config)));
  return (r.pool = pool);
}

function threadHostFor(supervisor: ProcessSupervisor, at: AttachedCore): ThreadToolHost {
  if (at.closed) throw new AuthoredToolError('ADAPTER_FAILED', `the tool hosts of ${at.core.dir} were closed (the supervisor is closing, or a newer revision of the core replaced them)`);
  return (at.threadHost ??= new ThreadToolHost(supervisor, at.core.workspace, at.config));
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

export const authoredAdapter: EffectAdapter = {
  preflight(entry, args, env) {
    const { at, tool } = lookup(env, entry.name);
    if (tool.capability !== entry.capability) {
      throw new AdapterCheckError(`${tool.source.manifest}: the attached manifest's capability '${tool.capability}' differs from the catalog's '${entry.capability}'; rebuild the catalog from the attached core`);
    }
    const r = resolveTool(at, tool);
    const json = JSON.stringify(args ?? null);
    const input = json.length <= INPUT_IN_KEY_MAX ? { input: args } : { inputSha256: createHash('sha256').update(json).digest('hex'), inputBytes: Buffer.byteLength(json) };
    return {
      checks: [],
      action: { kind: 'tool.call', target: { tool: tool.name, entrySha256: tool.source.entrySha256, ...input } },
      summary: clip(`${tool.name} ${json}`, 200),
      audit: {
        tier: r.tier,
        entry: tool.source.entry,
        entrySha256: tool.source.entrySha256,
        // The thread tier restricts neither: its audit says so rather than listing hints it ignores.
        ...(r.tier === 'thread' ? { trusted: true } : { network: tool.isolation.network, reads: r.spec.readPaths }),
      },
    };
  },

  async invoke(entry, args, env) {
    const { at, tool } = lookup(env, entry.name);
    const r = resolveTool(at, tool);
    // Children the call started with ctx.agents.spawn end with the call, however it ends.
    const children = new AbortController();
    try {
      return await invokeTool(at, tool, r, args, env, children.signal);
    } finally {
      children.abort(new Error('the calling tool ended'));
    }
  },
};

/** ctx.agents.spawn for one call: the remaining deadline, and the call's end as a cancel. */
function spawnerFor(agents: NonNullable<AdapterEnv['agents']>, callSignal: AbortSignal | undefined, deadlineMs: number, children: AbortSignal) {
  const started = Date.now();
  const signal = callSignal ? AbortSignal.any([callSignal, children]) : children;
  return (request: SpawnRequest): Promise<SpawnAnswer> => agents.spawn(request, signal, Math.max(1, deadlineMs - (Date.now() - started)));
}

/** One call on the tool's host (process or thread tier): the reply as the adapter's output. */
async function invokeTool(at: AttachedCore, tool: AuthoredToolManifest, r: ResolvedTool, args: unknown, env: InvokeEnv, children: AbortSignal): Promise<AdapterOutput> {
  const logs: string[] = [];
  let logCount = 0;
  let progress: { done: number; total?: number } | null = null;
  const hooks = {
    onLog: (level: string, text: string) => {
      logCount++;
      logs.push(`${level}: ${text}`);
      if (logs.length > LOG_LINES_KEPT) logs.shift();
    },
    onProgress: (done: number, total?: number) => (progress = total === undefined ? { done } : { done, total }),
    ...(env.agents ? { onSpawn: spawnerFor(env.agents, env.signal, env.deadlineMs, children) } : {}),
  };
  const msg = { tool: r.wire, input: args ?? null, secrets: env.secretEnv ? env.secretEnv({}) : {}, deadlineMs: env.deadlineMs };
  let reply;
  let where: Record<string, unknown>;
  try {
    if (r.tier === 'thread') {
      const out = await threadHostFor(env.supervisor, at).call(msg, hooks, env.signal, env.deadlineMs);
      reply = out.reply;
      where = { hostPid: out.hostPid, ...out.thread };
    } else {
      const out = await poolFor(env.supervisor, at, r).call(msg, hooks, env.signal, env.deadlineMs);
      reply = out.reply;
      where = { worker: out.workerId, workerPid: out.workerPid };
    }
  } catch (err) {
    if (err instanceof AuthoredToolError && err.code === 'TIMEOUT') {
      // As the terminal does: the effect ran and ended by its deadline, told to the model as such.
      return { text: `[TIMEOUT] ${err.message}`, isError: true, detail: { tier: r.tier, code: 'TIMEOUT', logs, logCount, progress } };
    }
    if (err instanceof AuthoredToolError) throw new AuthoredToolError(err.code, `[${err.code}] ${err.message}`, { cause: err });
    throw err;
  }
  const detail = { tier: r.tier, ...where, logs, logCount, progress };
  if (!reply.ok) {
    const message = reply.code === 'TOOL_SYNTAX_ERROR' ? await locateSyntaxError(at.core, tool, reply.message) : reply.message;
    return { text: `[${reply.code}] ${message}`, isError: true, detail: { ...detail, code: reply.code } };
  }
  const text = JSON.stringify(reply.value ?? null);
  return { text: clip(text, RESULT_TEXT_MAX), isError: false, detail: { ...detail, resultBytes: Buffer.byteLength(text) } };
}

/** Module files of a tool folder checked when its import failed on syntax; the entry first. */
const MAX_LOCATED_FILES = 64;

/**
 * The host could import the tool's code only to learn that some module of it does not parse (the
 * entry was checked at load, so it is usually a module the entry imports). Each module file of the
 * tool folder the core loaded is parsed, never run, by node --check in a child; the first that
 * fails names the file, line and column. Without a finding the host's message is kept.
 */
async function locateSyntaxError(core: CoreSnapshot, tool: AuthoredToolManifest, hostMessage: string): Promise<string> {
  const prefix = `${tool.source.dir}/`;
  const modules = core.files
    .filter((f) => f.path.startsWith(prefix) && /\.(?:mjs|cjs|js)$/.test(f.path) && !f.path.slice(prefix.length).split('/').includes('node_modules'))
    .sort((a, b) => (a.path === tool.source.entry ? -1 : b.path === tool.source.entry ? 1 : a.path < b.path ? -1 : 1))
    .slice(0, MAX_LOCATED_FILES);
  const checks = await Promise.all(modules.map(async (f) => ({ f, r: await checkModuleSyntax(join(core.dir, f.path), f.sha256) })));
  for (const { f, r } of checks) {
    if (r.ok) continue;
    const where = r.line === undefined ? f.path : `${f.path}:${r.line}:${r.column ?? 1}`;
    return `the tool's code does not parse: ${where}: ${r.message}`;
  }
  return hostMessage;
}
