// Auto-approval means sandboxed. A call a command class approved (auto_approve: [read-only]) was
// judged by a classifier reading a command line, not by anyone: it runs only where the kernel
// holds it (the OS sandbox), or it asks. A call someone approved runs as approved, unless
// agent.yaml asks for the sandbox on every call (terminal.sandbox: always or workspace-write),
// which fails closed.
import type { ApprovalDecision, ApprovalPolicy, RefinedPolicy } from '../policy/index.js';
import type { SandboxAvailability } from '../process/index.js';
import type { Preflight, SandboxRequirement } from '../adapters/adapter-types.js';

export interface Containment {
  /** The policy the broker decides on: 'auto' only when the class approval can be contained. */
  readonly policy: ApprovalPolicy;
  /** The class that relaxed the policy and will be contained; null when nothing was relaxed. */
  readonly relaxedByClass: string | null;
  /** agent.yaml terminal.sandbox: always or workspace-write (every call runs sandboxed). */
  readonly always: boolean;
  /** Why a class approval was withheld (the call asks instead); null when it was not. */
  readonly withheld: string | null;
  /** Whether `withheld` is about this machine (no sandbox), said once per run. */
  readonly machineWide: boolean;
}

export type ContainmentResult = { ok: true; containment: Containment } | { ok: false; message: string };

/** Step 5, before the broker: can the relaxation be held by the sandbox, and does the core ask for it always? */
export function containmentFor(refined: RefinedPolicy, pre: Preflight, availability: () => SandboxAvailability): ContainmentResult {
  const always = pre.sandbox === 'always';
  if (always) {
    const a = availability();
    if (!a.usable) {
      return {
        ok: false,
        message: `agent.yaml terminal.sandbox: always (or workspace-write) runs every terminal call inside the OS sandbox, and none works on this machine: ${a.reason}. Fix: make the sandbox work (supervisor doctor says what is missing), or set terminal.sandbox: auto to run explicitly approved calls unsandboxed`,
      };
    }
  }
  const base = { policy: refined.policy, relaxedByClass: refined.relaxedByClass, always, withheld: null, machineWide: false };
  if (refined.relaxedByClass === null) return { ok: true, containment: base };
  const withhold = (why: string, machineWide: boolean): ContainmentResult => ({
    ok: true,
    containment: { policy: 'prompt', relaxedByClass: null, always, withheld: why, machineWide },
  });
  if (pre.sandbox === undefined) {
    return withhold(`a call of class ${refined.relaxedByClass} is auto-approved only when it runs inside the OS sandbox, and this one cannot${pre.sandboxWithheld ? `: ${pre.sandboxWithheld}` : ''}`, false);
  }
  const a = availability();
  if (!a.usable) return withhold(`auto-approval by class (${refined.relaxedByClass}) is off on this machine because no OS sandbox works here: ${a.reason}; such calls ask instead (supervisor doctor)`, true);
  return { ok: true, containment: base };
}

/**
 * Step 7's requirement: sandboxed when agent.yaml asks for every call, or when the call was
 * approved by the policy's class relaxation and by nothing else. An operator's yes, a rule or a
 * remembered answer is an explicit approval and keeps today's (unsandboxed) run.
 */
export function sandboxRequirement(c: Containment, decision: ApprovalDecision): SandboxRequirement | null {
  if (c.always) return { because: 'always', why: 'agent.yaml terminal.sandbox: always (or workspace-write)' };
  if (c.relaxedByClass !== null && c.policy === 'auto' && decision.approved && decision.source === 'policy') {
    return { because: 'class', why: `auto-approved by class ${c.relaxedByClass}` };
  }
  return null;
}
