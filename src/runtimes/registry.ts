// The runtime registry: every runtime target by name, behind the one AgentRuntime interface.
// `local` is the supervisor's own turn engine; `claude-code` drives Claude Code's CLI.
import { claudeCodeAdapter } from './claude-code/claude-code-adapter.js';
import { externalCliRuntime } from './external-cli/external-cli-runtime.js';
import { localRuntime } from './local-runtime.js';
import { RuntimeSetupError, type AgentRuntime } from './runtime-types.js';

const RUNTIMES: ReadonlyMap<string, AgentRuntime> = new Map([
  [localRuntime.name, localRuntime],
  ['claude-code', externalCliRuntime(claudeCodeAdapter)],
]);

export function registeredRuntimes(): AgentRuntime[] {
  return [...RUNTIMES.values()];
}

export function runtimeFor(name: string): AgentRuntime {
  const r = RUNTIMES.get(name);
  if (!r) throw new RuntimeSetupError('RUNTIME_UNKNOWN', `no runtime named ${JSON.stringify(name)}; registered: ${[...RUNTIMES.keys()].join(', ')}`);
  return r;
}
