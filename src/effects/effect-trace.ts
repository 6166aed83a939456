// What the eight steps hand each other: one typed trace of the effect, filled in as the steps
// learn it (every view and audit record is built from it), the results later steps read, and the
// refusal a step returns instead of its result.
import type { AdapterEntry, AdapterEnv, EffectAdapter, Preflight, SandboxRequirement } from '../adapters/adapter-types.js';
import type { CatalogEntry } from '../catalog/index.js';
import type { SecretBindingRequest } from '../secrets/index.js';
import type { EffectErrorCode, EffectRequest, EffectStep } from './types.js';
import { NO_REDACTION, type TextRedactor } from './views.js';

export interface ApprovalRecord {
  readonly approved: boolean;
  readonly source: string;
  readonly reason: string;
}

export interface EffectEvent {
  readonly kind: string;
  readonly payload: unknown;
}

export interface EffectTrace {
  readonly callId: string;
  readonly tool: string;
  readonly capability: string;
  /** The entry's approval policy, then the one the broker decided on (step 5). */
  policy: string;
  approval: ApprovalRecord | null;
  /** When run() began; durationMs is taken against it when the effect ends. */
  readonly startedAt: number;
  durationMs: number;
  /** The action's one line and audit detail, from step 4's preflight. */
  summary: string | null;
  audit: Readonly<Record<string, unknown>> | null;
  /** Values to remove from every view: this effect's bound secrets and every secret resolved so far. */
  secrets: string[];
  /** NO_REDACTION until step 6 compiles the redactor for `secrets`. */
  redact: TextRedactor;
  /** The approval key's id and the effect's deadline, once known (debug view only). */
  approvalKey: string | null;
  deadlineMs: number | null;
  /** Secret binding metadata (name, target, source, expiry); never values. */
  bindings: readonly Readonly<Record<string, unknown>>[];
  /** This effect's events, committed together when it ends. */
  readonly events: EffectEvent[];
}

/** A trace before step 1: `req` may be anything a caller passed, so every field is read defensively. */
export function openTrace(req: EffectRequest, secrets: string[]): EffectTrace {
  const entry = req?.entry as CatalogEntry | undefined;
  return {
    callId: String(req?.callId ?? ''),
    tool: String(entry?.name ?? '?'),
    capability: String(entry?.capability ?? '?'),
    policy: String(entry?.approval ?? '?'),
    approval: null,
    startedAt: Date.now(),
    durationMs: 0,
    summary: null,
    audit: null,
    secrets,
    redact: NO_REDACTION,
    approvalKey: null,
    deadlineMs: null,
    bindings: [],
    events: [],
  };
}

/** What step 4 found and checked: the adapter, its entry and environment, the action's preflight. */
export interface CheckedCall {
  readonly entry: CatalogEntry;
  readonly adapter: EffectAdapter;
  readonly adapterEntry: AdapterEntry;
  readonly env: AdapterEnv;
  /** The secret bindings agent.yaml declares for the tool; resolved only in step 6. */
  readonly bindings: readonly SecretBindingRequest[];
  readonly pre: Preflight;
}

/** What step 5 decided besides "yes": whether step 7 runs inside the OS sandbox, and why. */
export interface ApprovedCall {
  readonly sandbox: SandboxRequirement | null;
}

/** Why a step stopped the effect: what its EffectError says. */
export class Refusal {
  constructor(
    readonly code: EffectErrorCode,
    readonly step: EffectStep,
    readonly message: string,
  ) {}
}

/** Redaction itself failed: the effect ends in the one fixed failed result. */
export const REDACTION_REFUSAL = new Refusal('REDACTION_FAILED', 8, 'redaction failed');
