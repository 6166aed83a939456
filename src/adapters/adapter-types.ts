// The seam between EffectRuntime and the adapters. Adapters get plain data and a supervisor;
// they never see the catalog object, the approval broker or the store.
import type { CoreSnapshot } from '../core/index.js';
import type { SpawnAnswer, SpawnRequest } from '../ipc/index.js';
import type { RedactionSource } from '../redaction/index.js';
import type { ProcessSupervisor } from '../process/index.js';
import type { RuntimeTaskWorker } from '../tasks/index.js';
import type { PrincipalScope, SessionSearchHit, SessionSearchQuery } from '../store/index.js';

export type ApprovalPolicyName = 'auto' | 'prompt' | 'deny';

/** What an adapter knows about the entry it runs (a read-only copy of catalog metadata). */
export interface AdapterEntry {
  readonly name: string;
  readonly adapterKey: string;
  readonly capability: string;
}

/** What delegate_task asks for (the call's arguments; a narrowing only, never a limit). */
export interface DelegationRequest {
  readonly agent: string;
  readonly task: string;
  readonly toolsets?: readonly string[];
  readonly tools?: readonly string[];
  readonly grants?: readonly string[];
  /**
   * Set by the supervisor, never from a model's arguments (evolve_core's edits): the folder the
   * child edits. It becomes the child's workspace, writable only inside the OS sandbox
   * (terminal.sandbox: workspace-write); the child gets the terminal and nothing that writes
   * outside it (no authored tools, no MCP servers, no further children).
   */
  readonly editScope?: string;
}

/** How a delegated child ended; the answer is bounded, and redacted again with the effect's views. */
export interface DelegationResult {
  readonly status: 'completed' | 'budget_exhausted' | 'cancelled' | 'failed';
  readonly answer: string;
  readonly detail: Readonly<Record<string, unknown>>;
}

/**
 * The session layer's side of delegate_task (src/session/delegation.ts): it computes the child's
 * scope and budget and runs the child. Adapters see only this seam.
 */
export interface Delegator {
  /** Step 4: throws AdapterCheckError for an unknown agent or a session already at its depth limit. */
  check(agent: string): void;
  /** Runs the child; `deadlineMs` (the call's deadline) also bounds the child's wall time. */
  run(req: DelegationRequest, signal: AbortSignal, deadlineMs: number): Promise<DelegationResult>;
}

export interface AdapterEnv {
  readonly workspace: string;
  /** The core the catalog was built from (authored tools run its manifests, nothing else). */
  readonly core: CoreSnapshot;
  readonly supervisor: ProcessSupervisor;
  /** Background tasks of this runtime, when it has a worker. */
  readonly tasks?: RuntimeTaskWorker;
  /** Starts delegated children (delegate_task), when the session layer provides it. */
  readonly delegation?: Delegator;
  /**
   * ctx.agents.spawn of an authored tool: delegate_task as an effect of its own, through all eight
   * steps for the same caller (catalog entry, agent.spawn grant, approval, audit). `deadlineMs`:
   * what is left of the calling tool's deadline.
   */
  readonly agents?: { spawn(request: SpawnRequest, signal: AbortSignal, deadlineMs: number): Promise<SpawnAnswer> };
  /**
   * The core's authority changed (an evolve run was promoted): every remembered approval for this
   * core's revision is dropped. Returns how many were.
   */
  readonly authority?: { coreChanged(): number };
  /** Who the effect runs for: background tasks and task tools are scoped to it. */
  readonly owner: { readonly principal: string; readonly sessionId: string };
  /** The operator's openings in the URL policy (agent.yaml `network`). */
  readonly network: { readonly hosts: readonly string[]; readonly cidrs: readonly string[] };
  /** Variables agent.yaml binds secrets to for this tool (names only; values come after approval). */
  readonly secretTargets: readonly string[];
  /** The catalog's model-facing listing, for tools_list. */
  readonly listing: readonly { name: string; description: string; capability: string; approval: ApprovalPolicyName; risk: string; source: string }[];
}

/** The result of step 4: pure checks passed; what approval must show and bind. */
export interface Preflight {
  /** Policy refinements from dynamic checks (they can only make it stricter unless allowed). */
  readonly checks: readonly { check: string; classification: string; minimum: ApprovalPolicyName; reason?: string }[];
  /** Bound into the approval key: one approval never authorizes another action. */
  readonly action: { kind: string; target: Readonly<Record<string, unknown>> };
  /** One line for the operator; --approve globs match it. */
  readonly summary: string;
  /** What the audit and operator views record about the action (never secret values). */
  readonly audit: Readonly<Record<string, unknown>>;
  /** The effect starts background work that outlives it: secret bindings are refused. */
  readonly background?: boolean;
  /**
   * Capabilities this exact action needs beyond the entry's own (e.g. session_search over every
   * owned session needs `session.read:owned`). The runtime checks them against the snapshot before
   * approval and refuses with CAPABILITY_DENIED.
   */
  readonly requires?: readonly string[];
  /**
   * What step 4 worked out for step 7 (the terminal's resolved cwd and base environment), handed
   * back unchanged as InvokeEnv.prepared: step 7 runs what was checked and approved, without
   * resolving it again (a path swapped in between cannot move the action).
   */
  readonly prepared?: unknown;
  /**
   * Whether the adapter can run this action inside the OS sandbox: 'available' when its approval
   * comes from a command class (auto_approve), 'always' when agent.yaml asks for it on every call.
   * Absent: it cannot, so no command class may approve it (the call asks).
   */
  readonly sandbox?: 'available' | 'always';
  /** Why `sandbox` is absent for this call (said in the refusal when a class would have approved it). */
  readonly sandboxWithheld?: string;
}

/** Why a call runs inside the OS sandbox (InvokeEnv.sandbox); recorded in the effect's audit. */
export interface SandboxRequirement {
  /** 'class': approved by a command class, not by anyone; 'always': agent.yaml terminal.sandbox. */
  readonly because: 'class' | 'always';
  /** One line for the audit, e.g. "auto-approved by class read-only". */
  readonly why: string;
}

/**
 * Read access to stored history, handed to an adapter only at step 7 (after approval): this
 * machine's store, and with a control plane every member's copies too (decision 127).
 */
export interface SessionHistory {
  /** Hits for the principal, best first; rejects with SearchQueryError for a malformed query. */
  search(scope: PrincipalScope, query: SessionSearchQuery): Promise<SessionSearchHit[]>;
}

export interface AdapterOutput {
  /** The model-facing text (bounded and redacted again by the runtime). */
  readonly text: string;
  /** True when the effect ran but failed on its own terms (non-zero exit, tool error). */
  readonly isError: boolean;
  /** Operator/audit detail: exit codes, artifacts, counters. */
  readonly detail: Readonly<Record<string, unknown>>;
}

export class AdapterCheckError extends Error {
  readonly code = 'CHECK_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'AdapterCheckError';
  }
}

export class AdapterUnavailableError extends Error {
  readonly code = 'NOT_IMPLEMENTED';
  constructor(message: string) {
    super(message);
    this.name = 'AdapterUnavailableError';
  }
}

export interface InvokeEnv extends AdapterEnv {
  readonly signal: AbortSignal;
  readonly deadlineMs: number;
  /** Secret values to remove from all output, streams and artifacts included. */
  readonly redact: RedactionSource;
  /** Adds this effect's bound secrets to a child environment; usable once, only before the deadline. */
  readonly secretEnv?: (base: Record<string, string>) => Record<string, string>;
  /** Progress of a long effect (MCP notifications/progress), for the operator view; never the model's. */
  readonly onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
  /** Stored history (session_search). Never in the preflight's env: nothing is read before approval. */
  readonly history?: SessionHistory;
  /** This effect's Preflight.prepared, as the adapter's own preflight returned it. */
  readonly prepared?: unknown;
  /**
   * Set when the call must run inside the OS sandbox; the adapter then runs it there or fails
   * (never unsandboxed). Unset for an explicit approval unless agent.yaml asks for every call.
   */
  readonly sandbox?: SandboxRequirement;
}

export interface EffectAdapter {
  /** Step 4: no process, no network, no file mutation. Throws AdapterCheckError to refuse. */
  preflight(entry: AdapterEntry, args: unknown, env: AdapterEnv): Preflight;
  /** Step 7: runs under the deadline and the cancel signal. */
  invoke(entry: AdapterEntry, args: unknown, env: InvokeEnv): Promise<AdapterOutput>;
}
