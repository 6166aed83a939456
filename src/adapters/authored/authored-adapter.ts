// The authored-tool adapter (`authored:<name>` keys). Step 4 is pure: the manifest is attached,
// the entry lies inside the tool directory, the tier is one this build runs. Step 7 runs the call
// on a warm tool host under the deadline and the cancel signal.
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { CoreSnapshot } from '../../core/index.js';
import type { AuthoredToolManifest } from '../../core/snapshot.js';
import { sandboxAvailability } from '../../process/index.js';
import type { ProcessSupervisor } from '../../process/index.js';
import { AdapterCheckError, AdapterUnavailableError, type AdapterEnv, type EffectAdapter } from '../adapter-types.js';
import { AuthoredToolError } from './errors.js';
import { toolHostConfig, type ToolHostConfig } from './host-config.js';
import { isInsideDir, resolveReadHints, type HostSpec } from './host-launch.js';
import { ToolHostPool } from './tool-host-pool.js';

/** Inputs up to this size are bound into the approval key as they are; larger ones by digest. */
const INPUT_IN_KEY_MAX = 2048;
const RESULT_TEXT_MAX = 64 * 1024;
const LOG_LINES_KEPT = 50;

interface AttachedCore {
  core: CoreSnapshot;
  config: ToolHostConfig;
  tools: ReadonlyMap<string, AuthoredToolManifest>;
  pools: Map<string, ToolHostPool>;
}

/** Per supervisor, per workspace: the core whose authored tools it runs. */
const attached = new WeakMap<ProcessSupervisor, Map<string, AttachedCore>>();

export interface AuthoredToolsHandle {
  readonly config: ToolHostConfig;
  /** The pools started so far (one per tool and permission set). */
  pools(): ToolHostPool[];
  /** Stops every worker of this core and detaches it. */
  close(): Promise<void>;
}

/**
 * Lets `supervisor` run `core`'s authored tools (the adapter sees only the supervisor and the
 * workspace, so this is where the manifests come from). One core per workspace and supervisor:
 * attaching another revision while one is attached is refused, so a catalog never runs code it
 * was not built from. Workers die with the supervisor (its close stops every tree).
 */
export function attachAuthoredTools(supervisor: ProcessSupervisor, core: CoreSnapshot, overrides: Partial<ToolHostConfig> = {}): AuthoredToolsHandle {
  let byWs = attached.get(supervisor);
  if (!byWs) attached.set(supervisor, (byWs = new Map()));
  const prior = byWs.get(core.workspace);
  if (prior && prior.core.revision !== core.revision) {
    throw new AdapterCheckError(`another revision of a core is already attached for workspace ${core.workspace} (${prior.core.dir}); close it first`);
  }
  const entry: AttachedCore = prior ?? {
    core,
    config: toolHostConfig(core.agent.tool_hosts, overrides),
    tools: new Map(core.tools.map((t) => [t.name, t])),
    pools: new Map(),
  };
  byWs.set(core.workspace, entry);
  return {
    config: entry.config,
    pools: () => [...entry.pools.values()],
    async close() {
      if (byWs.get(core.workspace) === entry) byWs.delete(core.workspace);
      await Promise.all([...entry.pools.values()].map((p) => p.close()));
    },
  };
}

function lookup(env: AdapterEnv, name: string): { at: AttachedCore; tool: AuthoredToolManifest } {
  const at = attached.get(env.supervisor)?.get(env.workspace);
  const tool = at?.tools.get(name);
  if (!at || !tool) {
    throw new AdapterUnavailableError(`no authored-tool host is attached for ${name} in workspace ${env.workspace}; the caller must attachAuthoredTools(supervisor, core) before running its catalog`);
  }
  return { at, tool };
}

function specFor(at: AttachedCore, tool: AuthoredToolManifest): HostSpec {
  const toolDir = join(at.core.dir, tool.source.dir);
  const entryPath = join(at.core.dir, tool.source.entry);
  if (!isInsideDir(toolDir, entryPath)) throw new AdapterCheckError(`${tool.source.manifest}: entry '${tool.entry}' lies outside the tool directory; keep the code inside ${tool.source.dir}/`);
  let readPaths: string[];
  try {
    readPaths = resolveReadHints(tool.isolation.read, toolDir, at.core.workspace);
  } catch (err) {
    throw new AdapterCheckError(`${tool.source.manifest}: ${(err as Error).message}`);
  }
  const tier = tool.isolation.tier === 'sandbox' ? 'sandbox' : 'process';
  return { toolName: tool.name, toolDir, entryPath, entrySha256: tool.source.entrySha256, readPaths, workspace: at.core.workspace, tier, network: tool.isolation.network };
}

function poolFor(supervisor: ProcessSupervisor, at: AttachedCore, spec: HostSpec): ToolHostPool {
  const key = JSON.stringify([spec.toolName, spec.entryPath, spec.entrySha256, spec.readPaths, spec.tier, spec.network]);
  let pool = at.pools.get(key);
  if (!pool) at.pools.set(key, (pool = new ToolHostPool(supervisor, spec, at.config)));
  return pool;
}

function checkTier(tool: AuthoredToolManifest): void {
  const tier = tool.isolation.tier;
  if (tier === 'process') return;
  if (tier === 'sandbox') {
    const a = sandboxAvailability();
    if (!a.usable) throw new AdapterUnavailableError(`${tool.source.manifest}: isolation tier 'sandbox' is not usable on this machine: ${a.reason} (supervisor doctor shows it); run the tool with isolation.tier: process only if you accept the weaker boundary`);
    return;
  }
  throw new AdapterUnavailableError(`${tool.source.manifest}: isolation tier '${tier}' is not implemented yet in this build (process and sandbox run); set isolation.tier: process or sandbox`);
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
    checkTier(tool);
    if (tool.source.entrySha256 === '') throw new AdapterCheckError(`${tool.source.manifest}: entry '${tool.entry}' was not read when the core loaded; reload the core`);
    const spec = specFor(at, tool);
    const json = JSON.stringify(args ?? null);
    const input = json.length <= INPUT_IN_KEY_MAX ? { input: args } : { inputSha256: createHash('sha256').update(json).digest('hex'), inputBytes: Buffer.byteLength(json) };
    return {
      checks: [],
      action: { kind: 'tool.call', target: { tool: tool.name, entrySha256: tool.source.entrySha256, ...input } },
      summary: clip(`${tool.name} ${json}`, 200),
      audit: {
        tier: tool.isolation.tier,
        entry: tool.source.entry,
        entrySha256: tool.source.entrySha256,
        network: tool.isolation.network,
        reads: spec.readPaths,
      },
    };
  },

  async invoke(entry, args, env) {
    const { at, tool } = lookup(env, entry.name);
    checkTier(tool);
    const pool = poolFor(env.supervisor, at, specFor(at, tool));
    const logs: string[] = [];
    let logCount = 0;
    let progress: { done: number; total?: number } | null = null;
    const secrets = env.secretEnv ? env.secretEnv({}) : {};
    let r;
    try {
      r = await pool.call(
        {
          tool: { name: tool.name, entryPath: pool.spec.entryPath, capabilities: [...tool.capabilities], dispatchCapability: tool.capability },
          input: args ?? null,
          secrets,
          deadlineMs: env.deadlineMs,
        },
        {
          onLog: (level, text) => {
            logCount++;
            logs.push(`${level}: ${text}`);
            if (logs.length > LOG_LINES_KEPT) logs.shift();
          },
          onProgress: (done, total) => (progress = total === undefined ? { done } : { done, total }),
        },
        env.signal,
        env.deadlineMs,
      );
    } catch (err) {
      if (err instanceof AuthoredToolError && err.code === 'TIMEOUT') {
        // As the terminal does: the effect ran and ended by its deadline, told to the model as such.
        return { text: `[TIMEOUT] ${err.message}`, isError: true, detail: { tier: 'process', code: 'TIMEOUT', logs, logCount, progress } };
      }
      if (err instanceof AuthoredToolError) throw new AuthoredToolError(err.code, `[${err.code}] ${err.message}`, { cause: err });
      throw err;
    }
    const detail = { tier: 'process', worker: r.workerId, workerPid: r.workerPid, logs, logCount, progress };
    if (!r.reply.ok) return { text: `[${r.reply.code}] ${r.reply.message}`, isError: true, detail: { ...detail, code: r.reply.code } };
    const text = JSON.stringify(r.reply.value ?? null);
    return { text: clip(text, RESULT_TEXT_MAX), isError: false, detail: { ...detail, resultBytes: Buffer.byteLength(text) } };
  },
};
