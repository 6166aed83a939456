// The EffectRuntime's typed edges: requests made from one catalog, results and errors with stable codes.
import type { CatalogEntry } from '../catalog/index.js';

/** Made only by EffectRuntime.request(): it binds the catalog that resolved the entry. */
export interface EffectRequest {
  readonly catalogId: string;
  readonly entry: CatalogEntry;
  readonly args: unknown;
  readonly callId: string;
}

export interface TurnExecutionContext {
  readonly principal: string;
  readonly sessionId: string;
  readonly signal?: AbortSignal;
  /** Milliseconds this effect may take in all (default 120 s). */
  readonly deadlineMs?: number;
  /**
   * When the effect's audit events commit. `before-return` (default): execute() resolves after
   * they are in the store. `deferred`: they join the store's next group commit (the next turn of
   * the event loop, or the next write or read on the store, whichever comes first), so the commit
   * overlaps the caller's next step; the caller must await EffectRuntime.durable() before any
   * result leaves the process (to a model provider, a client, a file). A failed deferred commit
   * fails durable() and every later execute() of this runtime.
   */
  readonly commit?: 'before-return' | 'deferred';
}

export type EffectStep = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

export type EffectErrorCode =
  | 'BINDING_INVALID'
  | 'ARGS_INVALID'
  | 'PRINCIPAL_DENIED'
  | 'CAPABILITY_DENIED'
  | 'CHECK_FAILED'
  | 'NOT_IMPLEMENTED'
  | 'APPROVAL_DENIED'
  | 'SECRET_DENIED'
  | 'ADAPTER_FAILED'
  | 'TIMEOUT'
  | 'CANCELLED'
  | 'REDACTION_FAILED'
  /** A per-session cap (agent.yaml limits.max_concurrent_calls) refused the call before it ran. */
  | 'LIMIT_REACHED';

/** Separate views of one result; each consumer reads only its own. */
export interface EffectViews {
  /** Back to the model: bounded, redacted, no owner ids or internal metadata. */
  readonly model: { readonly ok: boolean; readonly content: string };
  /** For the operator's terminal or UI. */
  readonly operator: Readonly<Record<string, unknown>>;
  /** For the live event log. */
  readonly event: Readonly<Record<string, unknown>>;
  /** For SQLite (the audit chain). */
  readonly durable: Readonly<Record<string, unknown>>;
  /**
   * For troubleshooting (`--json` consumers, bug reports): the durable view plus the approval key,
   * the effective deadline and the model-bounded output. Redacted like the others; never persisted.
   */
  readonly debug: Readonly<Record<string, unknown>>;
}

export interface EffectResult {
  readonly ok: true;
  readonly callId: string;
  readonly tool: string;
  /** The effect ran; `isError` says whether it failed on its own terms (e.g. exit code 1). */
  readonly isError: boolean;
  readonly views: EffectViews;
}

export interface EffectError {
  readonly ok: false;
  readonly callId: string;
  readonly tool: string;
  readonly code: EffectErrorCode;
  readonly step: EffectStep;
  readonly message: string;
  readonly views: EffectViews;
}

export type EffectOutcome = EffectResult | EffectError;
