// One error class per kind of policy failure, each with a stable `code` callers can switch on.
// Messages name the offending input, the rule it broke and the fix, because operators and core
// authors read them, not only code.

/** A capability string (a grant or a required capability) that does not parse. */
export class CapabilitySyntaxError extends Error {
  readonly code = 'CAPABILITY_INVALID' as const;
  /** The text as given (cut to 200 characters). */
  readonly input: string;
  readonly reason: string;
  readonly fix: string;
  constructor(input: string, reason: string, fix: string, where?: string) {
    const shown = JSON.stringify(input.length > 200 ? `${input.slice(0, 200)}…` : input);
    super(`${where ? `${where}: ` : ''}capability ${shown} is invalid: ${reason}. Fix: ${fix}`);
    this.name = 'CapabilitySyntaxError';
    this.input = input.slice(0, 200);
    this.reason = reason;
    this.fix = fix;
  }
}

/** A required capability that the session's snapshot does not grant. */
export class CapabilityDeniedError extends Error {
  readonly code = 'CAPABILITY_DENIED' as const;
  readonly required: string;
  /** The grants closest to `required` (sharing the longest segment prefix), at most three. */
  readonly nearest: readonly string[];
  constructor(required: string, nearest: readonly string[], snapshotDigest: string) {
    const secret = required.startsWith('secret:');
    const near =
      nearest.length > 0
        ? `nearest grants: ${nearest.join(', ')}`
        : 'no grant in the snapshot shares a prefix with it';
    const rule = secret
      ? 'secret capabilities match only the exact grant (wildcards such as * never grant a secret)'
      : 'a grant matches exactly, or by a trailing wildcard segment (fs.*, mcp.call:*)';
    super(
      `capability ${required} is not granted (${near}; ${rule}; snapshot ${snapshotDigest.slice(0, 12)}). ` +
        `Fix: add ${JSON.stringify(required)} to the session's capability grants if this effect should be allowed`,
    );
    this.name = 'CapabilityDeniedError';
    this.required = required;
    this.nearest = Object.freeze([...nearest]);
  }
}

/** An approval policy value or per-capability policy rule that is not valid. */
export class ApprovalPolicyError extends Error {
  readonly code = 'APPROVAL_POLICY_INVALID' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApprovalPolicyError';
  }
}

/** An approval binding that cannot be turned into a key (missing field, non-canonical value). */
export class ApprovalKeyError extends Error {
  readonly code = 'APPROVAL_KEY_INVALID' as const;
  constructor(message: string) {
    super(message);
    this.name = 'ApprovalKeyError';
  }
}

/** A `--approve` / `--deny` command-line rule that does not parse. */
export class ApprovalRuleError extends Error {
  readonly code = 'APPROVAL_RULE_INVALID' as const;
  readonly rule: string;
  constructor(flag: string, rule: string, reason: string, fix: string) {
    super(`${flag} ${JSON.stringify(rule)} is invalid: ${reason}. Fix: ${fix}`);
    this.name = 'ApprovalRuleError';
    this.rule = rule;
  }
}

/** The broker was handed a malformed request, or an approver failed or answered nonsense. */
export class ApprovalBrokerError extends Error {
  readonly code: 'APPROVAL_REQUEST_INVALID' | 'APPROVER_FAILED';
  constructor(code: ApprovalBrokerError['code'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ApprovalBrokerError';
    this.code = code;
  }
}
