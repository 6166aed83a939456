import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { ApprovalBroker } from '../../src/policy/approval-broker.js';
import { ApprovalRules, RuleApprover } from '../../src/policy/approval-rules.js';
import { TerminalApprover, terminalSafe } from '../../src/policy/terminal-approver.js';
import { request } from './helpers.js';

/** A fake terminal: answers each prompt once it has been shown (never before). */
function terminal(answers: string[], timeoutMs = 2000) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  let prompts = 0;
  output.on('data', (c: Buffer) => {
    shown += c.toString('utf8');
    const count = shown.split('allow? [y]').length - 1;
    while (prompts < count) {
      const answer = answers[prompts++];
      if (answer !== undefined) setImmediate(() => input.write(answer));
    }
  });
  const approver = new TerminalApprover({ input, output, timeoutMs });
  return { approver, input, output, shown: () => shown, prompts: () => prompts };
}

describe('TerminalApprover', () => {
  it("'y' approves once and shows tool, capability, action and the redacted preview", async () => {
    const t = terminal(['y\n']);
    const d = await t.approver.decide(request({ args: { command: 'ls -la', apiKey: 'sk-live-123' } }));
    assert.deepEqual(d, { approved: true, source: 'operator', reason: 'approved once by the operator', cacheable: false });
    const shown = t.shown();
    assert.match(shown, /approval needed: terminal {2}\(capability terminal\.exec, policy prompt\)/);
    assert.match(shown, /action: {4}ls -la/);
    assert.match(shown, /"apiKey":"\[redacted\]"/);
    assert.match(shown, /redacted: {2}\$\.apiKey/);
    assert.doesNotMatch(shown, /sk-live-123/);
    assert.match(shown, /→ approved/);
  });

  it('a call that binds secrets shows which (names and variables, never values) before the answer', async () => {
    const t = terminal(['n\n']);
    await t.approver.decide({ ...request({ args: { command: 'printenv TOK | od -c' } }), secrets: ['TOK as $TOK', 'DB as $PGPASSWORD'] });
    assert.match(t.shown(), /secrets: {3}TOK as \$TOK, DB as \$PGPASSWORD \(bound only if you allow\)\nallow\? \[y\]/);
    const plain = terminal(['n\n']);
    await plain.approver.decide(request());
    assert.doesNotMatch(plain.shown(), /secrets:/);
  });

  it("'n' and an empty line deny once", async () => {
    const t = terminal(['n\n', '\n']);
    assert.deepEqual(await t.approver.decide(request()), { approved: false, source: 'operator', reason: 'denied by the operator', cacheable: false });
    const empty = await t.approver.decide(request());
    assert.deepEqual([empty.approved, empty.cacheable], [false, false]);
    assert.match(empty.reason, /default is no/);
  });

  it("'a' approves and is remembered by the broker for this exact key; 'd' denies and is remembered", async () => {
    const t = terminal(['a\n', 'never\n']);
    const broker = new ApprovalBroker({ approver: t.approver });
    const first = await broker.decide(request());
    assert.deepEqual([first.approved, first.source, first.cacheable], [true, 'operator', true]);
    const again = await broker.decide(request());
    assert.deepEqual([again.approved, again.source], [true, 'cache']);
    assert.equal(t.prompts(), 1, 'the second call was not asked');
    const other = await broker.decide(request({ actionSummary: 'rm -rf /' }));
    assert.deepEqual([other.approved, other.cacheable], [false, true]);
    assert.equal(t.prompts(), 2, 'another action is asked again');
    assert.equal((await broker.decide(request({ actionSummary: 'rm -rf /' }))).source, 'cache');
  });

  it('garbage is a denial that names the (terminal-safe) answer', async () => {
    const t = terminal(['yes please\x1b[2J\n']);
    const d = await t.approver.decide(request());
    assert.equal(d.approved, false);
    assert.match(d.reason, /unrecognized answer "yes please\\x1b\[2J" \(expected y, n, a or d\)/);
  });

  it('no answer within the timeout is a timeout denial', async () => {
    const t = terminal([], 50);
    const started = Date.now();
    const d = await t.approver.decide(request());
    assert.deepEqual([d.approved, d.source, d.cacheable], [false, 'timeout', false]);
    assert.ok(Date.now() - started >= 40);
  });

  it('discards lines typed before the prompt was shown', async () => {
    const t = terminal([], 100);
    t.input.write('y\n'); // type-ahead: must not answer a prompt the operator has not seen
    const d = await t.approver.decide(request());
    assert.equal(d.source, 'timeout');
  });

  it('end of input is a non-interactive denial; an abort is cancelled', async () => {
    const t = terminal([]);
    const pending = t.approver.decide(request());
    setImmediate(() => t.input.end());
    const d = await pending;
    assert.deepEqual([d.approved, d.source], [false, 'non-interactive']);
    assert.equal((await t.approver.decide(request())).source, 'non-interactive', 'a closed input is not asked again');
    const u = terminal([]);
    const ac = new AbortController();
    const waiting = u.approver.decide(request(), ac.signal);
    setImmediate(() => ac.abort());
    assert.equal((await waiting).source, 'cancelled');
  });

  it('concurrent prompts are asked one at a time, each answer going to its own prompt', async () => {
    const t = terminal(['y\n', 'n\n']);
    const [a, b] = await Promise.all([t.approver.decide(request({ actionSummary: 'one' })), t.approver.decide(request({ actionSummary: 'two' }))]);
    assert.deepEqual([a.approved, b.approved], [true, false]);
    const shown = t.shown();
    assert.ok(shown.indexOf('action:    one') < shown.indexOf('→ approved') && shown.indexOf('→ approved') < shown.indexOf('action:    two'));
  });

  it('escape sequences and bidi marks in arguments cannot redraw or disguise the prompt', async () => {
    const t = terminal(['n\n']);
    await t.approver.decide(request({ actionSummary: 'ls\r\x1b[2Kapproved: safe\u202e\nrm -rf ~', args: { c: '\x1b]0;x\x07' } }));
    const shown = t.shown();
    assert.doesNotMatch(shown, /\x1b|\u202e|\r|\x07/);
    assert.match(shown, /action: {4}ls\\r\\x1b\[2Kapproved: safe\\u202e\\nrm -rf ~/);
    assert.match(terminalSafe('a'.repeat(600)), /^a{500}… \[cut: 100 more characters\]$/);
  });

  it('shows the whole action however long it is: the part after a long run of spaces is visible', async () => {
    const t = terminal(['n\n']);
    await t.approver.decide(request({ actionSummary: `ls${' '.repeat(3000)}; touch hidden` }));
    assert.match(t.shown(), /; touch hidden/);
  });

  it('works behind rules: a matching rule answers without a prompt, others are asked', async () => {
    const t = terminal(['y\n']);
    const approver = new RuleApprover(ApprovalRules.parse({ approve: ['terminal:ls *'] }), t.approver);
    assert.equal((await approver.decide(request({ actionSummary: 'ls src' }))).source, 'rule');
    assert.equal(t.prompts(), 0);
    assert.equal((await approver.decide(request({ actionSummary: 'make' }))).source, 'operator');
    assert.equal(t.prompts(), 1);
  });
});
