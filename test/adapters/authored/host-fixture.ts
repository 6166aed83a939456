// Shared by the authored-tool tests: a supervisor over a temporary state dir, the hostile fixture
// core attached, and a call helper that runs step 4 then step 7 like the EffectRuntime does.
import assert from 'node:assert/strict';
import { loadCore, type CoreSnapshot } from '../../../src/core/index.js';
import { ProcessSupervisor } from '../../../src/process/index.js';
import { authoredToolHosts, authoredAdapter, type AuthoredToolsHandle, type ToolHostConfig } from '../../../src/adapters/authored/index.js';
import type { AdapterOutput } from '../../../src/adapters/adapter-types.js';
import { fixture, markedPids, tempDir } from '../../helpers/procs.js';

export const TOOLS_CORE = fixture('tools');

export interface HostFixture {
  supervisor: ProcessSupervisor;
  core: CoreSnapshot;
  hosts: AuthoredToolsHandle;
  stateDir: string;
  call(tool: string, args: unknown, opts?: { deadlineMs?: number; signal?: AbortSignal; secrets?: Record<string, string> }): Promise<AdapterOutput>;
  /** Spawn ids of every tool host started so far. */
  spawnIds(): string[];
  close(): Promise<void>;
}

/** `coreDir`: another core than the hostile fixtures (a test's temporary core). */
export async function openHostFixture(overrides: Partial<ToolHostConfig> = {}, coreDir = TOOLS_CORE): Promise<HostFixture> {
  const state = tempDir('authored-test-');
  const supervisor = ProcessSupervisor.open({ stateDir: state.path });
  const core = await loadCore(coreDir);
  const hosts = authoredToolHosts(supervisor, core, overrides);
  const spawnIds = new Set<string>();
  const track = (): void => {
    for (const t of supervisor.liveTrees()) spawnIds.add(t.spawnId);
  };
  return {
    supervisor,
    core,
    hosts,
    stateDir: state.path,
    async call(tool, args, opts = {}) {
      const entry = core.tools.find((t) => t.name === tool);
      assert.ok(entry, `fixture tool ${tool}`);
      const adapterEntry = { name: tool, adapterKey: `authored:${tool}`, capability: entry.capability };
      const env = { workspace: core.workspace, core, supervisor, secretTargets: [], listing: [], network: { hosts: [], cidrs: [] }, owner: { principal: 'test', sessionId: 'se_test' } };
      authoredAdapter.preflight(adapterEntry, args, env);
      const secrets = opts.secrets;
      const p = authoredAdapter.invoke(adapterEntry, args, {
        ...env,
        signal: opts.signal ?? new AbortController().signal,
        deadlineMs: opts.deadlineMs ?? 20_000,
        redact: [],
        ...(secrets ? { secretEnv: (base: Record<string, string>) => ({ ...base, ...secrets }) } : {}),
      });
      // Workers start inside invoke: note them while the call runs and once it ended.
      const timer = setInterval(track, 5);
      try {
        return await p;
      } finally {
        clearInterval(timer);
        track();
      }
    },
    spawnIds: () => [...spawnIds],
    async close() {
      track();
      await hosts.close();
      await supervisor.close();
      state.remove();
      const left = [...spawnIds].flatMap((id) => markedPids(id));
      assert.deepEqual(left, [], 'no tool host process survives');
    },
  };
}

/** The AuthoredToolError (or other error) a call rejected with. */
export async function rejection(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error & { code?: string };
  }
  assert.fail('expected the call to fail');
}
