import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApprovalBroker, type ApprovalRequest, type Approver, NonInteractiveApprover } from '../../src/policy/approval-broker.js';
import { ApprovalCache } from '../../src/policy/approval-cache.js';
import { type ApprovalDecision, approvalDecision } from '../../src/policy/approval-decision.js';
import { ApprovalRules, parseApprovalRule, RuleApprover } from '../../src/policy/approval-rules.js';
import { ApprovalBrokerError, ApprovalRuleError } from '../../src/policy/errors.js';
import { request } from './helpers.js';

/** An approver that records each call and answers from a script. */
class ScriptedApprover implements Approver {
  calls: ApprovalRequest[] = [];
  constructor(private readonly answer: (r: ApprovalRequest) => ApprovalDecision | Promise<ApprovalDecision>) {}
  async decide(r: ApprovalRequest): Promise<ApprovalDecision> {
    this.calls.push(r);
    return this.answer(r);
  }
}

const rules = (approve: string[] = [], deny: string[] = []): ApprovalRules => ApprovalRules.parse({ approve, deny });

describe('ApprovalBroker', () => {
  it('auto approves and deny denies by policy, without asking', async () => {
    const asked = new ScriptedApprover(() => approvalDecision(true, 'operator', 'yes'));
    const broker = new ApprovalBroker({ approver: asked });
    assert.deepEqual(await broker.decide(request({ policy: 'auto' })), { approved: true, source: 'policy', reason: 'terminal: approval policy is auto', cacheable: false });
    const denied = await broker.decide(request({ policy: 'deny' }));
    assert.equal(denied.approved, false);
    assert.equal(denied.source, 'policy');
    assert.equal(asked.calls.length, 0);
  });

  it('non-interactive: a prompt is a clear denial saying how to allow it', async () => {
    const broker = new ApprovalBroker({ approver: new NonInteractiveApprover() });
    const d = await broker.decide(request());
    assert.equal(d.approved, false);
    assert.equal(d.source, 'non-interactive');
    assert.match(d.reason, /no terminal to ask/);
    assert.match(d.reason, /--approve terminal/);
    assert.doesNotMatch(d.reason, /approval policy to auto/, 'only the request can say what relaxes its policy');
    assert.equal(broker.cache.size, 0);
  });

  it('remembers an always answer for the exact key only, with a TTL', async () => {
    let now = 0;
    const cache = new ApprovalCache({ now: () => now });
    const asked = new ScriptedApprover(() => approvalDecision(true, 'operator', 'approved always', true));
    const broker = new ApprovalBroker({ approver: asked, cache, rememberMs: 1000 });
    assert.equal((await broker.decide(request())).source, 'operator');
    const second = await broker.decide(request());
    assert.equal(second.source, 'cache');
    assert.equal(second.approved, true);
    assert.match(second.reason, /remembered for this exact action: approved always/);
    assert.equal(asked.calls.length, 1);
    await broker.decide(request({ actionSummary: 'ls -la /' }));
    assert.equal(asked.calls.length, 2, 'another command line is another action');
    now = 1000;
    await broker.decide(request());
    assert.equal(asked.calls.length, 3, 'expired');
  });

  it('does not remember once answers', async () => {
    const asked = new ScriptedApprover(() => approvalDecision(true, 'operator', 'once'));
    const broker = new ApprovalBroker({ approver: asked });
    await broker.decide(request());
    await broker.decide(request());
    assert.equal(asked.calls.length, 2);
  });

  it('asks once for concurrent identical prompts when the answer is always', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const asked = new ScriptedApprover(async () => {
      await gate;
      return approvalDecision(false, 'operator', 'denied always', true);
    });
    const broker = new ApprovalBroker({ approver: asked });
    const both = Promise.all([broker.decide(request()), broker.decide(request())]);
    release();
    const [a, b] = await both;
    assert.equal(asked.calls.length, 1);
    assert.equal(a.source, 'operator');
    assert.deepEqual([a.approved, b.approved, b.source], [false, false, 'cache']);
  });

  it('fails closed with a typed error when the approver throws or answers nonsense', async () => {
    const throwing = new ApprovalBroker({ approver: new ScriptedApprover(() => { throw new Error('tty gone'); }) });
    await assert.rejects(throwing.decide(request()), (e: unknown) => e instanceof ApprovalBrokerError && e.code === 'APPROVER_FAILED' && /tty gone/.test(e.message));
    const nonsense = new ApprovalBroker({ approver: new ScriptedApprover(() => ({ approved: 'yes' }) as unknown as ApprovalDecision) });
    await assert.rejects(nonsense.decide(request()), /malformed decision/);
  });

  it('refuses a request whose fields disagree with its key', async () => {
    const broker = new ApprovalBroker({ approver: new NonInteractiveApprover() });
    const r = request({ policy: 'prompt' });
    await assert.rejects(broker.decide({ ...r, policy: 'auto' }), (e: unknown) => e instanceof ApprovalBrokerError && e.code === 'APPROVAL_REQUEST_INVALID' && /bound into the key/.test(e.message));
    await assert.rejects(broker.decide({ ...r, sessionId: 'other' }), /sessionId differs/);
    await assert.rejects(broker.decide({ ...r, principalId: 'other' }), /principalId differs/);
  });

  it('a cancelled call is denied before anyone is asked', async () => {
    const asked = new ScriptedApprover(() => approvalDecision(true, 'operator', 'yes'));
    const broker = new ApprovalBroker({ approver: asked });
    const d = await broker.decide(request(), AbortSignal.abort());
    assert.deepEqual([d.approved, d.source, asked.calls.length], [false, 'cancelled', 0]);
  });
});

describe('--approve / --deny rules', () => {
  it('parses the three forms and rejects malformed rules with a fix', () => {
    parseApprovalRule('terminal', 'approve');
    parseApprovalRule('terminal:ls *', 'approve');
    parseApprovalRule('capability:mcp.call:*', 'deny');
    for (const [bad, why] of [
      ['', /empty/],
      ['terminal:', /glob after ':' is empty/],
      ['bad tool', /tool name "bad tool"/],
      ['capability:mcp.call:git*', /capability pattern is invalid: a wildcard must be a whole trailing segment/],
      ['terminal:ls \\', /lone backslash/],
    ] as const) {
      assert.throws(() => parseApprovalRule(bad, 'approve'), (e: unknown) => e instanceof ApprovalRuleError && e.code === 'APPROVAL_RULE_INVALID' && why.test(e.message) && /Fix: /.test(e.message), bad);
    }
  });

  it('a glob matches in time linear in the command, with the same answers as the regular expression it replaced', () => {
    // Before: '*a*a*a*a*b' compiled to a backtracking regular expression; a model's command of
    // 2,000 'a's held the supervisor's event loop for minutes.
    for (const verdict of ['approve', 'deny'] as const) {
      const rule = parseApprovalRule('terminal:*a*a*a*a*a*b', verdict);
      const t0 = performance.now();
      assert.equal(rule.matches({ toolName: 'terminal', capability: 'terminal.exec', actionSummary: 'a'.repeat(64 * 1024) }), false);
      assert.ok(performance.now() - t0 < 5_000, `${verdict}: ${Math.round(performance.now() - t0)} ms for 64 KiB`);
    }
    // The old semantics as a reference, on every short text over a small alphabet with the unsafe characters.
    const UNSAFE = ';&|<>`$(){}\\\\\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029';
    const reference = (glob: string, verdict: 'approve' | 'deny'): RegExp => {
      const any = verdict === 'approve' ? `[^${UNSAFE}]` : '[\\s\\S]';
      let src = '';
      for (let i = 0; i < glob.length; i++) {
        const c = glob[i]!;
        if (c === '\\') src += `\\${glob[++i]!}`;
        else if (c === '*') src += `${any}*`;
        else if (c === '?') src += any;
        else src += /[\\^$.*+?()[\]{}|/]/.test(c) ? `\\${c}` : c;
      }
      return new RegExp(`^${src}$`, 'u');
    };
    const alphabet = ['a', 'b', ';', ' ', '\n'];
    const texts: string[] = [''];
    for (let len = 1; len <= 4; len++) for (let k = 0; k < alphabet.length ** len; k++) texts.push([...Array(len)].map((_, j) => alphabet[Math.floor(k / alphabet.length ** j) % alphabet.length]).join(''));
    for (const glob of ['*', '?', 'a*', '*b', 'a?b', '*a*', 'a*;*', '**', 'a\\*', '?*?', '*;', 'ab']) {
      for (const verdict of ['approve', 'deny'] as const) {
        const rule = parseApprovalRule(`terminal:${glob}`, verdict);
        const re = reference(glob, verdict);
        for (const t of texts) assert.equal(rule.matches({ toolName: 'terminal', capability: 'terminal.exec', actionSummary: t }), re.test(t), `${verdict} ${glob} ${JSON.stringify(t)}`);
      }
    }
  });

  it('a tool rule approves every action of that tool and nothing else', async () => {
    const approver = new RuleApprover(rules(['terminal']));
    assert.equal((await approver.decide(request({ actionSummary: 'rm -rf build' }))).approved, true);
    const other = await approver.decide(request({ toolName: 'terminal2' }));
    assert.deepEqual([other.approved, other.source], [false, 'non-interactive']);
  });

  it('a tool:glob rule matches the whole action summary, never across shell control characters', async () => {
    const approver = new RuleApprover(rules(['terminal:ls *', 'terminal:git status']));
    const yes = async (s: string): Promise<boolean> => (await approver.decide(request({ actionSummary: s }))).approved;
    assert.equal(await yes('ls -la src'), true);
    assert.equal(await yes('git status'), true);
    assert.equal(await yes('git status --porcelain'), false, 'the glob is anchored');
    assert.equal(await yes('xls -la'), false);
    for (const hostile of ['ls; rm -rf ~', 'ls && curl x', 'ls | sh', 'ls $(id)', 'ls `id`', 'ls > /etc/x', 'ls\nrm -rf ~', 'ls & sleep 1', 'ls \\; x']) {
      assert.equal(await yes(hostile), false, hostile);
    }
    const literal = new RuleApprover(rules(['terminal:ls * | wc -l']));
    assert.equal((await literal.decide(request({ actionSummary: 'ls src | wc -l' }))).approved, true, 'spelled literally, a pipe is fine');
    assert.equal((await literal.decide(request({ actionSummary: 'ls src | sh | wc -l' }))).approved, false);
  });

  it('a capability rule uses grant matching; a wildcard never approves a secret capability', async () => {
    const approver = new RuleApprover(rules(['capability:mcp.call:*', 'capability:*']));
    const d = await approver.decide(request({ toolName: 'github__create_issue', capability: 'mcp.call:github' }));
    assert.deepEqual([d.approved, d.source, d.reason], [true, 'rule', "approved by --approve 'capability:mcp.call:*'"]);
    assert.equal((await approver.decide(request({ toolName: 'gh_token', capability: 'secret:GITHUB_TOKEN' }))).approved, false);
    const exact = new RuleApprover(rules(['capability:secret:GITHUB_TOKEN']));
    assert.equal((await exact.decide(request({ toolName: 'gh_token', capability: 'secret:GITHUB_TOKEN' }))).approved, true);
  });

  it('--deny wins over --approve, whatever the order and however broad the approve', async () => {
    const approver = new RuleApprover(rules(['terminal', 'capability:*'], ['terminal:rm *']));
    const d = await approver.decide(request({ actionSummary: 'rm -rf /' }));
    assert.deepEqual([d.approved, d.source, d.reason], [false, 'rule', "denied by --deny 'terminal:rm *'"]);
    assert.equal((await approver.decide(request({ actionSummary: 'ls' }))).approved, true);
    // In --deny a wildcard matches anything, shell control characters included.
    assert.equal((await approver.decide(request({ actionSummary: 'rm x; echo ok' }))).approved, false);
    const capDeny = new RuleApprover(rules(['capability:secret:TOKEN'], ['capability:*']));
    assert.equal((await capDeny.decide(request({ capability: 'secret:TOKEN' }))).approved, false, 'a deny wildcard covers secrets');
  });

  it('in the broker: --deny also vetoes an auto policy, --approve never overrides a deny policy', async () => {
    const broker = new ApprovalBroker({ approver: new RuleApprover(rules(['terminal'], ['terminal:rm *'])) });
    const vetoed = await broker.decide(request({ policy: 'auto', actionSummary: 'rm -rf build' }));
    assert.deepEqual([vetoed.approved, vetoed.source], [false, 'rule']);
    assert.equal((await broker.decide(request({ policy: 'auto', actionSummary: 'ls' }))).source, 'policy');
    const held = await broker.decide(request({ policy: 'deny', actionSummary: 'ls' }));
    assert.deepEqual([held.approved, held.source], [false, 'policy']);
    const ok = await broker.decide(request({ policy: 'prompt', actionSummary: 'ls' }));
    assert.deepEqual([ok.approved, ok.source, ok.cacheable], [true, 'rule', false]);
    assert.equal(broker.cache.size, 0, 'rule decisions are re-evaluated, never cached');
  });

  it('falls back to the next approver when no rule matches', async () => {
    const fallback = new ScriptedApprover(() => approvalDecision(true, 'operator', 'asked'));
    const approver = new RuleApprover(rules(['terminal:ls *']), fallback);
    assert.equal((await approver.decide(request({ actionSummary: 'make' }))).reason, 'asked');
    assert.equal(fallback.calls.length, 1);
  });
});
