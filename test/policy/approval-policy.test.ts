import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  APPROVAL_POLICIES,
  type ApprovalPolicy,
  foldGlobal,
  parseApprovalPolicy,
  type PolicyCheck,
  refine,
  refineByClass,
  stricter,
  validatePolicyRules,
} from '../../src/policy/approval-policy.js';
import { ApprovalPolicyError, CapabilitySyntaxError } from '../../src/policy/errors.js';

const RANK = { auto: 0, prompt: 1, deny: 2 } as const;
const check = (classification: string, minimum: ApprovalPolicy): PolicyCheck => ({ check: 'terminal-preflight', classification, minimum });

describe('stricter', () => {
  it('orders auto < prompt < deny and is commutative', () => {
    assert.equal(stricter('auto', 'prompt'), 'prompt');
    assert.equal(stricter('deny', 'prompt'), 'deny');
    for (const a of APPROVAL_POLICIES) {
      for (const b of APPROVAL_POLICIES) {
        assert.equal(stricter(a, b), stricter(b, a));
        assert.ok(RANK[stricter(a, b)] >= Math.max(RANK[a], RANK[b]));
      }
    }
  });

  it('rejects values that are not policies instead of guessing', () => {
    assert.throws(() => stricter('atuo' as ApprovalPolicy, 'prompt'), ApprovalPolicyError);
    assert.throws(() => parseApprovalPolicy('Auto', 'agent.yaml approval.default'), /agent\.yaml approval\.default: "Auto" is not an approval policy\. Fix: use one of auto, prompt, deny/);
    assert.throws(() => parseApprovalPolicy(undefined), ApprovalPolicyError);
    assert.throws(() => parseApprovalPolicy('constructor'), ApprovalPolicyError);
  });
});

describe('foldGlobal: global policy can only make an entry stricter', () => {
  it('a global auto cannot relax an entry', () => {
    assert.equal(foldGlobal('deny', 'auto', [], 'terminal.exec'), 'deny');
    assert.equal(foldGlobal('prompt', 'auto', [], 'terminal.exec'), 'prompt');
  });

  it('per-capability rules that say auto cannot relax either', () => {
    const rules = [
      { capability: '*', policy: 'auto' as const },
      { capability: 'terminal.exec', policy: 'auto' as const },
    ];
    assert.equal(foldGlobal('prompt', 'auto', rules, 'terminal.exec'), 'prompt');
    assert.equal(foldGlobal('deny', undefined, rules, 'terminal.exec'), 'deny');
  });

  it('global and matching rules tighten; non-matching rules do nothing', () => {
    assert.equal(foldGlobal('auto', 'prompt', [], 'session.read'), 'prompt');
    const rules = [{ capability: 'mcp.call:*', policy: 'deny' as const }];
    assert.equal(foldGlobal('auto', undefined, rules, 'mcp.call:github'), 'deny');
    assert.equal(foldGlobal('auto', undefined, rules, 'mcp.connect:github'), 'auto');
    assert.equal(foldGlobal('auto', undefined, [{ capability: 'fs.read', policy: 'deny' }], 'fs.reader'), 'auto');
  });

  it('a wildcard tightening rule also covers secret capabilities (broad is the safe direction)', () => {
    assert.equal(foldGlobal('auto', undefined, [{ capability: '*', policy: 'prompt' }], 'secret:TOKEN'), 'prompt');
  });

  it('the result never depends on rule order and is never below the entry or global policy', () => {
    const caps = ['terminal.exec', 'mcp.call:github', 'fs.read:docs/a'];
    const patterns = ['*', 'mcp.*', 'mcp.call:*', 'terminal.exec', 'fs.read:docs/*', 'session.read'];
    for (const entry of APPROVAL_POLICIES) {
      for (const global of [undefined, ...APPROVAL_POLICIES]) {
        for (const cap of caps) {
          for (let mask = 0; mask < 64; mask += 7) {
            const rules = patterns.map((capability, i) => ({ capability, policy: APPROVAL_POLICIES[(mask >> i) % 3] as ApprovalPolicy }));
            const forward = foldGlobal(entry, global, rules, cap);
            assert.equal(foldGlobal(entry, global, [...rules].reverse(), cap), forward);
            assert.ok(RANK[forward] >= RANK[entry]);
            if (global !== undefined) assert.ok(RANK[forward] >= RANK[global]);
          }
        }
      }
    }
  });

  it('bad rules are errors naming the rule index and field', () => {
    assert.throws(() => foldGlobal('auto', undefined, [{ capability: 'mcp.call:git*', policy: 'deny' }], 'mcp.call:github'), (e: unknown) => e instanceof CapabilitySyntaxError && /approval rules\[0\]\.capability/.test(e.message));
    assert.throws(() => validatePolicyRules([{ capability: 'fs.*', policy: 'allow' }]), /approval rules\[0\]\.policy: "allow"/);
    assert.deepEqual(validatePolicyRules([{ capability: 'fs.*', policy: 'deny' }]), [{ capability: 'fs.*', policy: 'deny' }]);
  });
});

describe('refine: dynamic checks', () => {
  const allowReadOnly = { allowAutoFor: ['read-only'] };

  it('tightens to the strictest check', () => {
    assert.equal(refine('auto', check('needs-review', 'prompt')), 'prompt');
    assert.equal(refine('prompt', check('destructive', 'deny')), 'deny');
    assert.equal(refine('auto', []), 'auto');
  });

  it('never relaxes deny, whatever the checks and the allowance', () => {
    for (const checks of [[], [check('read-only', 'auto')], [check('read-only', 'auto'), check('read-only', 'auto')]]) {
      assert.equal(refine('deny', checks, allowReadOnly), 'deny');
      assert.equal(refine('deny', checks, { allowAutoFor: ['read-only', 'needs-review', 'destructive'] }), 'deny');
    }
  });

  it('relaxes prompt to auto only for a class the core explicitly allows', () => {
    assert.equal(refine('prompt', check('read-only', 'auto')), 'prompt', 'no allowance: no relaxation');
    assert.equal(refine('prompt', check('read-only', 'auto'), allowReadOnly), 'auto');
    assert.equal(refine('prompt', check('project-code', 'auto'), allowReadOnly), 'prompt', 'class not listed');
    assert.equal(refine('prompt', check('read-only', 'prompt'), allowReadOnly), 'prompt', 'the check itself wants prompt');
    assert.equal(refine('prompt', [], allowReadOnly), 'prompt', 'no check: nothing to relax on');
  });

  it('relaxes only when every check of the call allows it, in any order', () => {
    const checks = [check('read-only', 'auto'), { check: 'env', classification: 'env-overlay', minimum: 'prompt' as const }];
    assert.equal(refine('prompt', checks, allowReadOnly), 'prompt');
    assert.equal(refine('prompt', [...checks].reverse(), allowReadOnly), 'prompt');
  });

  it('refineByClass says which class relaxed the policy, and only when one did (the runtime contains those calls)', () => {
    assert.deepEqual(refineByClass('prompt', check('read-only', 'auto'), allowReadOnly), { policy: 'auto', relaxedByClass: 'read-only' });
    assert.deepEqual(refineByClass('prompt', check('read-only', 'auto')), { policy: 'prompt', relaxedByClass: null });
    assert.deepEqual(refineByClass('auto', check('read-only', 'auto'), allowReadOnly), { policy: 'auto', relaxedByClass: null }, 'already auto: nothing relaxed by class');
    assert.deepEqual(refineByClass('prompt', [check('read-only', 'auto'), { check: 'env', classification: 'env-overlay', minimum: 'prompt' as const }], allowReadOnly), { policy: 'prompt', relaxedByClass: null });
  });

  it('rejects a check with an invalid minimum instead of ignoring it', () => {
    assert.throws(() => refine('prompt', { check: 'x', classification: 'read-only', minimum: 'never' as ApprovalPolicy }, allowReadOnly), /check\[0\] \(x\)\.minimum/);
  });
});
