// Approval policies and the two ways an effective policy is computed:
//   foldGlobal: the entry's own policy folded with the core's global policy and per-capability
//               rules. Folding takes the strictest, so global configuration can never relax an
//               entry (a global 'auto' leaves an entry's 'prompt' or 'deny' as it is).
//   refine:     dynamic pure checks (terminal preflight, workspace sensitivity, ...) tighten the
//               effective policy; the one relaxation, 'prompt' -> 'auto', needs every check to
//               classify the call into a class the core's policy explicitly lists. 'deny' never moves.
import { capabilityCovers, parseCapability } from './capability.js';
import { ApprovalPolicyError } from './errors.js';

export const APPROVAL_POLICIES = ['auto', 'prompt', 'deny'] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];

const RANK: Readonly<Record<ApprovalPolicy, number>> = Object.freeze({ auto: 0, prompt: 1, deny: 2 });

export function isApprovalPolicy(value: unknown): value is ApprovalPolicy {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(RANK, value);
}

/** Validates an untrusted value (e.g. from YAML) as a policy; `where` names the field in errors. */
export function parseApprovalPolicy(value: unknown, where = 'approval policy'): ApprovalPolicy {
  if (isApprovalPolicy(value)) return value;
  throw new ApprovalPolicyError(
    `${where}: ${JSON.stringify(value) ?? String(value)} is not an approval policy. Fix: use one of auto, prompt, deny`,
  );
}

/** auto < prompt < deny. */
export function strictness(policy: ApprovalPolicy): number {
  return RANK[parseApprovalPolicy(policy)];
}

/** The stricter of two policies. */
export function stricter(a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy {
  return strictness(a) >= strictness(b) ? a : b;
}

/** A per-capability tightening rule from the core's approval config, e.g. { capability: 'mcp.call:*', policy: 'prompt' }. */
export interface CapabilityPolicyRule {
  /** A capability pattern in grant syntax (trailing wildcard segments allowed). */
  readonly capability: string;
  readonly policy: ApprovalPolicy;
}

/**
 * The effective policy of a catalog entry: the strictest of the entry's own policy, the global
 * policy (if any) and every rule whose pattern covers the entry's capability. Taking the maximum
 * makes the result independent of rule order and never less strict than the entry's own policy.
 * Rule patterns match by segment like grants, and a wildcard rule also covers secret
 * capabilities: a rule can only tighten, so matching more broadly is the safe direction.
 */
export function foldGlobal(
  entryPolicy: ApprovalPolicy,
  globalPolicy: ApprovalPolicy | undefined,
  perCapabilityRules: readonly CapabilityPolicyRule[],
  capability: string,
): ApprovalPolicy {
  return foldGlobalExplained(entryPolicy, globalPolicy, perCapabilityRules, capability).policy;
}

/** Which input of the fold set the effective policy, when it is stricter than the entry's own. */
export type ApprovalFloor = { kind: 'default' } | { kind: 'rule'; capability: string } | null;

/**
 * foldGlobal, saying which setting made the result stricter than `entryPolicy` (the last input
 * that raised it: changing that one setting is what would change the result). null: the entry's own.
 */
export function foldGlobalExplained(
  entryPolicy: ApprovalPolicy,
  globalPolicy: ApprovalPolicy | undefined,
  perCapabilityRules: readonly CapabilityPolicyRule[],
  capability: string,
): { policy: ApprovalPolicy; floor: ApprovalFloor } {
  let effective = parseApprovalPolicy(entryPolicy, 'entry approval policy');
  let floor: ApprovalFloor = null;
  const tighten = (policy: ApprovalPolicy, by: Exclude<ApprovalFloor, null>): void => {
    const next = stricter(effective, policy);
    if (next !== effective) {
      effective = next;
      floor = by;
    }
  };
  if (globalPolicy !== undefined) tighten(parseApprovalPolicy(globalPolicy, 'global approval policy'), { kind: 'default' });
  const required = parseCapability(capability, 'requirement', 'entry capability');
  perCapabilityRules.forEach((rule, i) => {
    const where = `approval rules[${i}]`;
    const pattern = parseCapability(rule?.capability, 'grant', `${where}.capability`);
    const policy = parseApprovalPolicy(rule?.policy, `${where}.policy`);
    if (capabilityCovers(pattern, required)) tighten(policy, { kind: 'rule', capability: rule.capability });
  });
  return { policy: effective, floor };
}

/** Validates per-capability rules up front (at core load), so a bad rule fails before any turn. */
export function validatePolicyRules(rules: readonly unknown[], where = 'approval rules'): CapabilityPolicyRule[] {
  return rules.map((rule, i) => {
    const r = (rule ?? {}) as Partial<CapabilityPolicyRule>;
    parseCapability(r.capability, 'grant', `${where}[${i}].capability`);
    return Object.freeze({ capability: r.capability as string, policy: parseApprovalPolicy(r.policy, `${where}[${i}].policy`) });
  });
}

/** The verdict of one pure check run before approval (e.g. terminal preflight). */
export interface PolicyCheck {
  /** Which check spoke, for messages, e.g. 'terminal-preflight'. */
  readonly check: string;
  /** The class it put the call in, e.g. 'read-only', 'project-code', 'needs-review'. */
  readonly classification: string;
  /** The least strict policy this check accepts for the call. */
  readonly minimum: ApprovalPolicy;
  readonly reason?: string;
}

/** What the core's policy explicitly allows: classes for which a 'prompt' may become 'auto'. */
export interface AutoApprovalAllowance {
  readonly allowAutoFor: readonly string[];
}

export const NO_AUTO_ALLOWANCE: AutoApprovalAllowance = Object.freeze({ allowAutoFor: Object.freeze([]) });

/** A refined policy and, when a command class relaxed it from 'prompt' to 'auto', which class. */
export interface RefinedPolicy {
  readonly policy: ApprovalPolicy;
  /** The class that relaxed it (e.g. 'read-only'); null when nothing relaxed it. */
  readonly relaxedByClass: string | null;
}

/**
 * Refines an effective policy with every check of one call, in one call: each check can tighten;
 * 'prompt' relaxes to 'auto' only when every check says 'auto' and names a class listed in
 * `allowance.allowAutoFor`. Pass all checks at once: refining check by check would let a later
 * read-only verdict relax what an earlier needs-review verdict held at 'prompt'.
 */
export function refine(
  effective: ApprovalPolicy,
  checks: PolicyCheck | readonly PolicyCheck[],
  allowance: AutoApprovalAllowance = NO_AUTO_ALLOWANCE,
): ApprovalPolicy {
  return refineByClass(effective, checks, allowance).policy;
}

/**
 * refine(), saying whether a command class relaxed the policy: an approval by class is a weaker
 * promise than someone's yes (a classifier read the command line), so the runtime contains it.
 */
export function refineByClass(
  effective: ApprovalPolicy,
  checks: PolicyCheck | readonly PolicyCheck[],
  allowance: AutoApprovalAllowance = NO_AUTO_ALLOWANCE,
): RefinedPolicy {
  const base = parseApprovalPolicy(effective, 'effective approval policy');
  const list: readonly PolicyCheck[] = Array.isArray(checks) ? checks : [checks as PolicyCheck];
  let result = base;
  list.forEach((c, i) => {
    result = stricter(result, parseApprovalPolicy(c?.minimum, `check[${i}]${c?.check ? ` (${c.check})` : ''}.minimum`));
  });
  const allowed = new Set(Array.isArray(allowance?.allowAutoFor) ? allowance.allowAutoFor : []);
  const relaxable =
    base === 'prompt' &&
    result === 'prompt' &&
    list.length > 0 &&
    list.every((c) => c.minimum === 'auto' && typeof c.classification === 'string' && allowed.has(c.classification));
  if (!relaxable) return Object.freeze({ policy: result, relaxedByClass: null });
  return Object.freeze({ policy: 'auto', relaxedByClass: [...new Set(list.map((c) => c.classification))].join('+') });
}
