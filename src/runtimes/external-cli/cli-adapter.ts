// What one external agent CLI must provide to run under the supervisor. The runner
// (external-cli-runtime.ts) owns everything else: the per-run MCP server, the spawn through the
// lifecycle layer, budgets, parsing limits, audit folding. A second CLI is one of these.
import type { ExternalBudgets } from './budgets.js';

/** One line of the CLI's structured output, normalized. */
export type CliStreamEvent =
  | { kind: 'init'; tools: string[]; model: string | null; version: string | null; mcpServers: { name: string; status: string }[] }
  | { kind: 'assistant'; text: string | null; toolUses: { id: string; name: string }[] }
  | { kind: 'tool_result'; toolUseId: string; isError: boolean }
  | { kind: 'result'; subtype: string; isError: boolean; costUsd: number | null; turns: number | null; stopReason: string | null; text: string | null }
  | { kind: 'other'; type: string };

export interface CliArgvInput {
  /** Path of the MCP config file that names the supervisor's per-run server. */
  mcpConfigPath: string;
  /** The MCP tool names the agent may call (catalog names). */
  tools: readonly string[];
  budgets: ExternalBudgets;
  /** Operator pass-through, already checked by checkPassThrough. */
  passThrough: readonly string[];
}

export interface ExternalCliAdapter {
  /** The runtime target name (agent.yaml `runtime:`, `--runtime`). */
  readonly name: string;
  /** The executable's default name, looked up on PATH. */
  readonly defaultBinary: string;
  /** The environment variable that names the executable instead. */
  readonly binaryEnv: string;
  /** Environment variables passed to the CLI besides the supervisor's base allowlist (its own
   *  credentials and config location); never the supervisor's whole environment. */
  readonly envPassThrough: readonly string[];
  /** The MCP server name the CLI sees the supervisor under. */
  readonly serverName: string;
  /** Non-MCP tool names the CLI may list at init that reach nothing outside it and our server. */
  readonly toleratedInitTools: readonly string[];
  /** How the CLI names an MCP tool of the supervisor's server. */
  toolNameFor(tool: string): string;
  /** The MCP config file's content for the per-run server. */
  mcpConfig(url: string, token: string): string;
  /** The whole argv (without the binary). The prompt goes to stdin, never the argv. */
  buildArgv(i: CliArgvInput): string[];
  /** Refuses (throws RuntimeSetupError) an operator flag that could widen authority. */
  checkPassThrough(args: readonly string[]): void;
  /** Refuses (throws RuntimeSetupError) an argv, the adapter's own included, that would expose a
   *  built-in tool, bypass the permission boundary, or load another MCP server. */
  checkArgv(argv: readonly string[], i: CliArgvInput): void;
  /** Built-in tools the argv leaves callable (must be none). */
  builtinsExposed(argv: readonly string[]): string[];
  /** One parsed JSON line → a normalized event; null for a line it cannot read. */
  parseEvent(obj: unknown): CliStreamEvent | null;
}
