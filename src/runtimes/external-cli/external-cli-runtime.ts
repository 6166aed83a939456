// An external agent CLI as a runtime: the CLI reasons, the supervisor keeps the authority.
// prepare() checks everything that can be checked before anything starts (the binary, the argv,
// the operator's pass-through); each run (external-run.ts) serves the session's EffectRuntime to
// the CLI over a per-run MCP server and folds what it does into the session's event chain.
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ResolvedEffectCatalog } from '../../catalog/index.js';
import { mcpToolsFor } from '../mcp-server/mcp-tools.js';
import { boundOf } from '../effect-bound.js';
import { RuntimeSetupError, type AgentRuntime, type EffectBound, type PreparedRun } from '../runtime-types.js';
import { externalBudgets } from './budgets.js';
import type { CliArgvInput, ExternalCliAdapter } from './cli-adapter.js';

/** Finds the CLI: the adapter's environment variable (a path), else its name on PATH. */
export function resolveCliBinary(adapter: ExternalCliAdapter, env: NodeJS.ProcessEnv = process.env): string {
  const named = env[adapter.binaryEnv];
  const candidate = named !== undefined && named !== '' ? named : adapter.defaultBinary;
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (candidate.includes('/')) {
    if (!isAbsolute(candidate)) throw new RuntimeSetupError('RUNTIME_BINARY_MISSING', `${adapter.binaryEnv}=${candidate}: give an absolute path`);
    if (executable(candidate)) return candidate;
    throw new RuntimeSetupError('RUNTIME_BINARY_MISSING', `${adapter.binaryEnv}=${candidate} is not an executable file`);
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const p = join(dir, candidate);
    if (executable(p)) return p;
  }
  throw new RuntimeSetupError(
    'RUNTIME_BINARY_MISSING',
    `runtime ${adapter.name}: no ${candidate} on PATH; install it or set ${adapter.binaryEnv} to its absolute path`,
  );
}

export function externalCliRuntime(adapter: ExternalCliAdapter): AgentRuntime {
  const argvInput = (catalog: ResolvedEffectCatalog, mcpConfigPath: string, passThrough: readonly string[] = []): CliArgvInput => ({
    mcpConfigPath,
    tools: catalog.entries.map((e) => e.name),
    budgets: externalBudgets(catalog.core),
    passThrough,
  });
  return {
    name: adapter.name,
    substrate: 'external-cli',
    locate() {
      try {
        return resolveCliBinary(adapter);
      } catch {
        return null;
      }
    },
    effectBound(catalog) {
      // What the per-run MCP server lists, and what the argv leaves of the CLI's own tools.
      const input = argvInput(catalog, '/nonexistent/mcp.json');
      const argv = adapter.buildArgv(input);
      adapter.checkArgv(argv, input);
      const tools = mcpToolsFor(catalog).map((t) => ({ name: t.name, schema: t.inputSchema }));
      return boundOf(catalog, tools, adapter.builtinsExposed(argv));
    },
    async prepare(s, o): Promise<PreparedRun> {
      const passThrough = o.passThrough ?? [];
      adapter.checkPassThrough(passThrough);
      const binary = resolveCliBinary(adapter);
      const runDir = join(s.stateDir, 'runtimes', s.sessionId);
      const input = argvInput(s.runtime.catalog, join(runDir, 'mcp.json'), passThrough);
      const argv = adapter.buildArgv(input);
      // The adapter's own argv is checked like an operator's: fail closed before anything starts.
      adapter.checkArgv(argv, input);
      const exposed = adapter.builtinsExposed(argv);
      if (exposed.length > 0) throw new RuntimeSetupError('RUNTIME_BUILTIN_EXPOSED', `runtime ${adapter.name}: the argv would expose ${exposed.join(', ')}`);
      // The run's MCP server (the SDK's server, its HTTP transport) loads when a run starts, not with
      // every `plan` or local run that only names this runtime.
      return { run: async (r) => (await import('./external-run.js')).runExternal(adapter, s, { binary, argv, runDir, budgets: input.budgets }, r), close: async () => undefined };
    },
  };
}

export type { EffectBound };
