// The approval broker: turns an effective policy into a decision.
//   deny   -> denied (source 'policy'); nothing can override it.
//   veto   -> an approver may deny whatever the policy (operator --deny rules), checked next.
//   auto   -> approved (source 'policy').
//   prompt -> the remembered decision for this exact key, else the pluggable Approver; a
//             cacheable answer ('always' / 'never') is remembered for `rememberMs`.
// Prompts for one key are serialized, so a second identical call waits for the first answer and
// then finds it in the cache instead of asking twice.
import { ApprovalCache } from './approval-cache.js';
import { type ApprovalDecision, type ApprovalSource, approvalDecision } from './approval-decision.js';
import type { ApprovalKey } from './approval-key.js';
import { type ApprovalPolicy, parseApprovalPolicy } from './approval-policy.js';
import type { ArgumentPreview } from './argument-preview.js';
import { ApprovalBrokerError } from './errors.js';

export interface ApprovalRequest {
  /** approvalKey(binding) for exactly this call. */
  readonly key: ApprovalKey;
  /** The effective policy; must be the one bound into `key`. */
  readonly policy: ApprovalPolicy;
  readonly toolName: string;
  /** The capability the entry requires, e.g. 'terminal.exec'. */
  readonly capability: string;
  /** What the operator is shown of the arguments; may be a getter worked out on first read. */
  readonly preview: ArgumentPreview;
  /** One line saying what will happen, e.g. the command line; --approve globs match this. */
  readonly actionSummary: string;
  readonly principalId: string;
  readonly sessionId: string;
  /** How this tool could run without asking, besides --approve (a denial's text says it). */
  readonly howToAllow?: string;
  /** The secrets this call binds, as `NAME as $VAR` (names only, never values): shown with the prompt. */
  readonly secrets?: readonly string[];
}

export interface Approver {
  /** Asked only for policy 'prompt' on a cache miss. Must not throw for a plain "no". */
  decide(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision>;
  /** A denial that applies whatever the policy ('auto' included), e.g. --deny rules. */
  veto?(request: ApprovalRequest): ApprovalDecision | undefined;
}

/** There is nobody to ask: every prompt is a clear denial saying how to allow it. */
export class NonInteractiveApprover implements Approver {
  async decide(request: ApprovalRequest): Promise<ApprovalDecision> {
    return approvalDecision(
      false,
      'non-interactive',
      `${request.toolName} needs approval (${request.capability}) but there is no terminal to ask; ` +
        `pass --approve ${request.toolName} (or a narrower rule such as --approve '${request.toolName}:<glob>')` +
        (request.howToAllow ? `; ${request.howToAllow}` : ''),
    );
  }
}

export interface ApprovalBrokerOptions {
  approver: Approver;
  cache?: ApprovalCache;
  /** How long an 'always'/'never' answer is remembered; default one hour. */
  rememberMs?: number;
}

const SOURCES: ReadonlySet<ApprovalSource> = new Set(['policy', 'cache', 'rule', 'operator', 'non-interactive', 'timeout', 'cancelled']);
export const DEFAULT_REMEMBER_MS = 60 * 60 * 1000;

export class ApprovalBroker {
  readonly cache: ApprovalCache;
  private readonly approver: Approver;
  private readonly rememberMs: number;
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(options: ApprovalBrokerOptions) {
    if (typeof options?.approver?.decide !== 'function') {
      throw new ApprovalBrokerError('APPROVAL_REQUEST_INVALID', 'ApprovalBroker needs an approver (e.g. new NonInteractiveApprover())');
    }
    this.approver = options.approver;
    this.cache = options.cache ?? new ApprovalCache();
    this.rememberMs = options.rememberMs ?? DEFAULT_REMEMBER_MS;
  }

  async decide(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const policy = validate(request);
    if (policy === 'deny') return approvalDecision(false, 'policy', `${request.toolName}: approval policy is deny`);
    let veto: ApprovalDecision | undefined;
    try {
      veto = this.approver.veto?.(request);
    } catch (err) {
      throw new ApprovalBrokerError('APPROVER_FAILED', `the approver's veto failed for ${request.toolName}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (veto !== undefined) {
      const d = checked(veto, 'veto');
      if (d.approved) throw new ApprovalBrokerError('APPROVER_FAILED', "the approver's veto() approved; a veto can only deny");
      return d;
    }
    if (policy === 'auto') return approvalDecision(true, 'policy', `${request.toolName}: approval policy is auto`);
    return this.serialized(request.key.id, () => this.prompt(request, signal));
  }

  private async prompt(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const remembered = this.cache.lookup(request.key);
    if (remembered !== undefined) {
      return approvalDecision(remembered.approved, 'cache', `remembered for this exact action: ${remembered.reason}`);
    }
    if (signal?.aborted) return approvalDecision(false, 'cancelled', 'the call was cancelled before approval was asked');
    // Checked here, where it is first needed: the preview may be worked out on first read.
    if (typeof request.preview?.text !== 'string') throw new ApprovalBrokerError('APPROVAL_REQUEST_INVALID', 'approval request: preview must come from previewArguments(args)');
    let decision: ApprovalDecision;
    try {
      decision = checked(await this.approver.decide(request, signal), 'decide');
    } catch (err) {
      if (err instanceof ApprovalBrokerError) throw err;
      throw new ApprovalBrokerError('APPROVER_FAILED', `the approver failed while deciding ${request.toolName}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    if (decision.cacheable) this.cache.remember(request.key, decision, this.rememberMs);
    return decision;
  }

  private serialized<T>(id: string, run: () => Promise<T>): Promise<T> {
    const previous = this.inflight.get(id) ?? Promise.resolve();
    const next = previous.then(run, run);
    const tail = next.catch(() => undefined);
    this.inflight.set(id, tail);
    void tail.then(() => {
      if (this.inflight.get(id) === tail) this.inflight.delete(id);
    });
    return next;
  }
}

function validate(request: ApprovalRequest): ApprovalPolicy {
  const bad = (why: string): never => {
    throw new ApprovalBrokerError('APPROVAL_REQUEST_INVALID', `approval request: ${why}`);
  };
  if (request === null || typeof request !== 'object') bad('must be an object');
  if (typeof request.key?.id !== 'string') bad('key must come from approvalKey(binding)');
  const policy = parseApprovalPolicy(request.policy, 'approval request policy');
  // The key binds these; a mismatch would remember a decision under the wrong identity.
  if (request.key.policy !== policy) bad(`policy ${policy} differs from the policy ${request.key.policy} bound into the key`);
  if (request.key.principal !== request.principalId) bad('principalId differs from the principal bound into the key');
  if (request.key.session !== request.sessionId) bad('sessionId differs from the session bound into the key');
  for (const field of ['toolName', 'capability', 'actionSummary'] as const) {
    if (typeof request[field] !== 'string') bad(`${field} must be a string`);
  }
  if (!('preview' in request)) bad('preview must come from previewArguments(args)');
  return policy;
}

/** A plug-in approver's answer is data we check, not trust: anything malformed fails closed. */
function checked(d: ApprovalDecision, from: string): ApprovalDecision {
  if (d === null || typeof d !== 'object' || typeof d.approved !== 'boolean' || typeof d.reason !== 'string' || typeof d.cacheable !== 'boolean' || !SOURCES.has(d.source)) {
    throw new ApprovalBrokerError('APPROVER_FAILED', `the approver's ${from}() returned a malformed decision; expected { approved, source, reason, cacheable }`);
  }
  return approvalDecision(d.approved, d.source, d.reason, d.cacheable);
}
