// Step 5's questions to the broker: the key that binds this exact action, the request the
// operator (or a rule, or the cache) decides on, and what the effect's record says about the
// sandbox once it is decided.
import type { CatalogEntry } from '../catalog/index.js';
import { approvalKey, previewArguments, type ApprovalDecision, type ApprovalKey, type ApprovalPolicy, type ApprovalRequest, type ArgumentPreview } from '../policy/index.js';
import type { SandboxRequirement } from '../adapters/adapter-types.js';
import type { Containment } from './containment.js';
import type { CheckedCall } from './effect-trace.js';
import type { TurnExecutionContext } from './types.js';
import type { TextRedactor } from './views.js';

export function approvalKeyFor(call: CheckedCall, ctx: TurnExecutionContext, capabilitySnapshot: string, policy: ApprovalPolicy): ApprovalKey {
  const { entry, pre, bindings } = call;
  return approvalKey({
    principal: ctx.principal,
    session: ctx.sessionId,
    coreRevision: entry.coreRevision,
    capabilitySnapshot,
    policy,
    effect: { ref: entry.ref, name: entry.name },
    // Which secret goes into which variable is part of what is approved.
    action: (bindings.length === 0 ? pre.action : { kind: pre.action.kind, target: { ...pre.action.target, secrets: bindings.map((b) => ({ secret: b.secret, env: b.env })) } }) as never,
  });
}

/**
 * What the broker decides on. `redact` and `summary`: the operator is shown (and a pending request
 * stores) only redacted text, since a model can put a known secret's value into its arguments.
 */
export function approvalRequest(q: {
  call: CheckedCall;
  args: unknown;
  ctx: TurnExecutionContext;
  key: ApprovalKey;
  containment: Containment;
  redact: TextRedactor;
  summary: string;
}): ApprovalRequest {
  const { call, args, ctx, key, containment, redact } = q;
  const { entry, bindings } = call;
  // The argument preview is worked out only if someone is shown it (a prompt, a pending
  // request): most calls are decided by policy, a rule or the cache without it.
  let preview: ArgumentPreview | undefined;
  return {
    key,
    policy: containment.policy,
    toolName: entry.name,
    capability: entry.capability,
    get preview(): ArgumentPreview {
      if (!preview) {
        const p = previewArguments(args);
        preview = { ...p, text: redact(p.text) };
      }
      return preview;
    },
    actionSummary: q.summary,
    principalId: ctx.principal,
    sessionId: ctx.sessionId,
    // Only a denial's text reads it: not built for the calls a policy or rule decides.
    get howToAllow(): string {
      return [howToAllow(entry), containment.withheld, bindings.length > 0 ? 'a call that binds a secret is never approved by a command class' : null].filter(Boolean).join('; ');
    },
    ...(bindings.length > 0 ? { secrets: bindings.map((b) => `${b.secret} as $${b.env}`) } : {}),
  };
}

/** What the audit records about containment: sandboxed or not, and why (never guessed later). */
export function sandboxAudit(req: SandboxRequirement | null, c: Containment, d: ApprovalDecision): Readonly<Record<string, unknown>> {
  if (!d.approved) return { sandboxed: false, why: c.withheld !== null ? `not approved (${d.source}); not auto-approved: ${c.withheld}` : `not approved (${d.source})` };
  if (req) return { sandboxed: true, because: req.because, why: req.why };
  return { sandboxed: false, why: `explicit approval (${d.source})` };
}

/** What, besides an --approve rule, would let this entry run without asking (for a denial's text). */
function howToAllow(entry: CatalogEntry): string {
  if (entry.source === 'builtin') {
    const readOnly = entry.name === 'terminal' ? '; read-only commands inside the workspace can be auto-approved with approval.auto_approve: [read-only] in agent.yaml' : '';
    return `${entry.name} is a builtin: configuration can make its approval stricter, never looser${readOnly}`;
  }
  // The setting that actually decides: a floor in agent.yaml, or the declaration itself.
  if (entry.approvalFloor !== null) {
    return `${entry.name} is declared ${entry.declaredApproval} (${entry.provenance}); agent.yaml's ${entry.approvalFloor} makes it ${entry.approval}: change that setting (agent.yaml only tightens a tool's approval)`;
  }
  return `or set approval: auto where it is declared (${entry.provenance})`;
}
