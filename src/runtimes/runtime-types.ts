// The one interface every runtime target implements: the local turn engine and each external
// agent CLI. A runtime is an execution substrate; the authority (catalog, grants, approvals,
// budgets, audit) stays with the supervisor and is the same whichever runtime runs.
import type { ResolvedEffectCatalog } from '../catalog/index.js';
import type { CoreSnapshot } from '../core/index.js';
import type { EffectOutcome, EffectRuntime } from '../effects/index.js';
import type { ProcessSupervisor } from '../process/index.js';
import type { SecretStore } from '../secrets/index.js';
import type { Database, SessionStore } from '../store/index.js';
import type { TurnEvent, TurnResult } from '../turns/index.js';

/** An open session, as the CLI built it: what a runtime runs in. */
export interface RuntimeSession {
  core: CoreSnapshot;
  runtime: EffectRuntime;
  supervisor: ProcessSupervisor;
  db: Database;
  sessions: SessionStore;
  secrets: SecretStore;
  sessionId: string;
  principal: string;
  stateDir: string;
  /** The conversation so far when resuming (model views). */
  history: unknown[];
  /** The session's cost pool (limits.max_cost_usd and what its children reserved), for the local runtime's meter. */
  costPool?: { left(): number; spend(usd: number): void };
  /**
   * Before each user turn of the local runtime: the session resolves its catalog again if the core
   * changed on disk (the catalog is per turn); `core` and `runtime` above may be new after it.
   */
  beforeTurn?: () => Promise<void>;
}

/** What one runtime target makes callable: the granted operations, and the built-in tools of an
 *  external agent (always none; a runtime that cannot prove that must not run). */
export interface EffectBound {
  operations: { name: string; capability: string; approval: string; granted: boolean; schema_sha256: string }[];
  builtins: string[];
}

/** Events of an external runtime besides the turn events every runtime shares. */
export type ExternalEvent =
  | { type: 'user'; turn: number; text: string }
  | { type: 'runtime_started'; runtime: string; pid: number; spawnId: string; binary: string; budgets: Readonly<Record<string, unknown>> }
  | { type: 'runtime_init'; runtime: string; tools: string[]; model: string | null; version: string | null }
  | { type: 'builtin_attempt'; iteration: number; name: string }
  | { type: 'runtime_result'; subtype: string; costUsd: number | null; turns: number | null; stopReason: string | null }
  | { type: 'runtime_limit'; limit: 'tool_calls' | 'wall_clock' | 'cost_usd' | 'turns' | 'output_bytes'; detail: string }
  | { type: 'runtime_warning'; message: string };

export type RuntimeEvent = TurnEvent | ExternalEvent;

export interface RuntimeRunOptions {
  /** The user's first message (null: the runtime's own default). */
  prompt: string | null;
  signal: AbortSignal;
  /** Each effect's deadline. */
  deadlineMs?: number;
  onEvent(e: RuntimeEvent): void;
  /** Extra command-line arguments for an external CLI (checked before anything runs). */
  passThrough?: readonly string[];
}

export interface RuntimeRunResult {
  outcome: 'completed' | 'limit_hit' | 'cancelled' | 'failed';
  turns: number;
  iterations: number;
  effects: { ok: number; failed: number };
  /** Why the run failed or hit a limit, for the operator. */
  reason?: string;
  costUsd?: number | null;
}

/** A run whose setup passed: nothing of the agent has run yet. */
export interface PreparedRun {
  run(o: RuntimeRunOptions): Promise<RuntimeRunResult>;
  /**
   * One user turn with this prompt, the conversation so far continued (in-process runtimes only):
   * a scripted model's next `user:` item, if any, is replaced by the prompt.
   */
  turn?(prompt: string, o: Omit<RuntimeRunOptions, 'prompt' | 'passThrough'>): Promise<TurnResult>;
  close(): Promise<void>;
}

export interface AgentRuntime {
  readonly name: string;
  /** Where the reasoning happens: in this process, or in an external CLI the supervisor spawns. */
  readonly substrate: 'in-process' | 'external-cli';
  /** The callable set this runtime gives the agent for a catalog, derived from its own mechanism
   *  (the local engine's tool definitions; an external CLI's MCP tools and argv). */
  effectBound(catalog: ResolvedEffectCatalog): EffectBound;
  /** An external runtime's executable as it would be found now, or null when it is missing. */
  locate?(): string | null;
  /** Setup that runs nothing of the agent: the provider, the binary, every flag. Throws
   *  RuntimeSetupError to refuse (fail closed before any process starts). */
  prepare(session: RuntimeSession, o: { passThrough?: readonly string[] }): Promise<PreparedRun>;
}

/** A refusal before the agent ran: a flag, a missing binary, an unusable model section. */
export class RuntimeSetupError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeSetupError';
  }
}

export function countOutcome(effects: { ok: number; failed: number }, o: EffectOutcome): void {
  if (o.ok && !o.isError) effects.ok++;
  else effects.failed++;
}
