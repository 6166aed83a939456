import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApprovalCache } from '../../src/policy/approval-cache.js';
import { approvalDecision } from '../../src/policy/approval-decision.js';
import {
  type ApprovalBinding,
  approvalKey,
  canonicalApprovalBinding,
  canonicalApprovalBindingGeneric,
  canonicalJson,
  evolveCoreAction,
  mcpCallAction,
  terminalExecAction,
} from '../../src/policy/approval-key.js';
import { CapabilitySnapshot } from '../../src/policy/capability.js';
import { ApprovalKeyError } from '../../src/policy/errors.js';

const DIGEST = CapabilitySnapshot.from(['terminal.exec']).digest;
const OTHER_DIGEST = CapabilitySnapshot.from(['terminal.exec', 'session.read']).digest;

const base: ApprovalBinding = Object.freeze({
  principal: 'operator:alice',
  session: 'ses_1',
  coreRevision: 'rev_abc',
  capabilitySnapshot: DIGEST,
  policy: 'prompt',
  effect: { ref: 'entry#7', name: 'terminal' },
  action: terminalExecAction('ls -la', '/work/ws'),
});

/** One variation per bound field: each must give a different key. */
const variations: Array<[string, ApprovalBinding]> = [
  ['principal', { ...base, principal: 'operator:bob' }],
  ['session', { ...base, session: 'ses_2' }],
  ['coreRevision', { ...base, coreRevision: 'rev_abd' }],
  ['capabilitySnapshot', { ...base, capabilitySnapshot: OTHER_DIGEST }],
  ['policy', { ...base, policy: 'auto' }],
  ['effect.ref', { ...base, effect: { ...base.effect, ref: 'entry#8' } }],
  ['effect.name', { ...base, effect: { ...base.effect, name: 'terminal2' } }],
  ['action.kind', { ...base, action: { ...base.action, kind: 'terminal.exec.bg' } }],
  ['action.target.command', { ...base, action: terminalExecAction('ls -la ', '/work/ws') }],
  ['action.target.cwd', { ...base, action: terminalExecAction('ls -la', '/work/ws/sub') }],
  ['action.target.envKeys', { ...base, action: terminalExecAction('ls -la', '/work/ws', ['HOME']) }],
];

describe('approvalKey', () => {
  it('is deterministic and independent of object key order', () => {
    const shuffled: ApprovalBinding = {
      action: { target: { cwd: '/work/ws', envKeys: [], command: 'ls -la' }, kind: 'terminal.exec' },
      effect: { name: 'terminal', ref: 'entry#7' },
      policy: 'prompt',
      capabilitySnapshot: DIGEST,
      coreRevision: 'rev_abc',
      session: 'ses_1',
      principal: 'operator:alice',
    };
    assert.equal(approvalKey(base).id, approvalKey(shuffled).id);
    assert.match(approvalKey(base).id, /^ak1:[0-9a-f]{64}$/);
    assert.ok(Object.isFrozen(approvalKey(base)));
  });

  it('differs when any bound field differs (each field, one at a time)', () => {
    const ids = new Map<string, string>([[approvalKey(base).id, 'base']]);
    for (const [field, binding] of variations) {
      const id = approvalKey(binding).id;
      assert.ok(!ids.has(id), `changing ${field} gave the same key as ${ids.get(id)}`);
      ids.set(id, field);
    }
  });

  it('differs for every random single-character change of every string field (property style)', () => {
    let seed = 12345;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const mutate = (s: string): string => {
      const i = rand(s.length + 1);
      const op = rand(3);
      const c = String.fromCharCode(32 + rand(95));
      if (op === 0) return s.slice(0, i) + c + s.slice(i); // insert
      if (op === 1 && s.length > 1) return s.slice(0, i) + s.slice(i + 1); // delete
      return s.slice(0, i) + (c === s[i] ? `${c}x` : c) + s.slice(i + 1); // replace
    };
    const fields: Array<[string, (b: ApprovalBinding, v: (s: string) => string) => ApprovalBinding]> = [
      ['principal', (b, m) => ({ ...b, principal: m(b.principal) })],
      ['session', (b, m) => ({ ...b, session: m(b.session) })],
      ['coreRevision', (b, m) => ({ ...b, coreRevision: m(b.coreRevision) })],
      ['effect.ref', (b, m) => ({ ...b, effect: { ...b.effect, ref: m(b.effect.ref) } })],
      ['effect.name', (b, m) => ({ ...b, effect: { ...b.effect, name: m(b.effect.name) } })],
      ['action.kind', (b, m) => ({ ...b, action: { ...b.action, kind: m(b.action.kind) } })],
      ['command', (b, m) => ({ ...b, action: terminalExecAction(m('ls -la'), '/work/ws') })],
      ['cwd', (b, m) => ({ ...b, action: terminalExecAction('ls -la', m('/work/ws')) })],
    ];
    const original = approvalKey(base).id;
    for (const [field, change] of fields) {
      for (let n = 0; n < 50; n++) {
        const changed = change(base, mutate);
        if (canonicalApprovalBinding(changed) === canonicalApprovalBinding(base)) continue; // mutation was a no-op
        assert.notEqual(approvalKey(changed).id, original, `${field} mutation kept the key`);
      }
    }
  });

  it('cannot be confused by delimiters inside fields', () => {
    const k = (principal: string, session: string): string => approvalKey({ ...base, principal, session }).id;
    assert.notEqual(k('a:b', 'c'), k('a', 'b:c'));
    assert.notEqual(k('a","session":"b', 'c'), k('a', 'b'));
    assert.notEqual(k('a\n', 'b'), k('a', '\nb'));
    const t = (server: string, tool: string): string => approvalKey({ ...base, action: mcpCallAction(server, tool) }).id;
    assert.notEqual(t('git/hub', 'x'), t('git', 'hub/x'));
    assert.notEqual(t('a__b', 'c'), t('a', 'b__c'));
    // Lone surrogates stay distinct (JSON escapes them), and no Unicode normalization merges look-alikes.
    assert.notEqual(t('\ud800', 'x'), t('\udc00', 'x'));
    assert.notEqual(t('caf\u00e9', 'x'), t('cafe\u0301', 'x'));
  });

  it('binds the evolve_core action so one mutation does not authorize another', () => {
    const ev = (action: string, run: string | null): string => approvalKey({ ...base, action: evolveCoreAction(action, run) }).id;
    assert.notEqual(ev('review', 'run_1'), ev('promote', 'run_1'));
    assert.notEqual(ev('promote', 'run_1'), ev('promote', 'run_2'));
    assert.notEqual(ev('discard', 'run_1'), ev('promote', 'run_1'));
  });

  it('rejects incomplete or non-canonical bindings', () => {
    assert.throws(() => approvalKey({ ...base, principal: '' }), ApprovalKeyError);
    assert.throws(() => approvalKey({ ...base, capabilitySnapshot: 'terminal.exec' }), /CapabilitySnapshot digest/);
    assert.throws(() => approvalKey({ ...base, policy: 'maybe' as 'auto' }), /not an approval policy/);
    assert.throws(() => approvalKey({ ...base, effect: { ref: 'x' } as never }), /effect\.name/);
    assert.throws(() => approvalKey({ ...base, action: { kind: 'x' } as never }), /action\.target is required/);
    assert.throws(() => approvalKey({ ...base, action: { kind: 'x', target: { n: Number.NaN } } }), /\$\.action\.target\.n: NaN/);
    assert.throws(() => approvalKey({ ...base, action: { kind: 'x', target: { d: new Date(0) } as never } }), /a Date is not plain JSON/);
    assert.throws(() => approvalKey({ ...base, action: { kind: 'x', target: { u: undefined } as never } }), /undefined is not JSON/);
    const deep: Record<string, unknown> = {};
    let cur = deep;
    for (let i = 0; i < 600; i++) cur = cur.n = {} as Record<string, unknown>;
    assert.throws(() => approvalKey({ ...base, action: { kind: 'x', target: deep as never } }), ApprovalKeyError);
  });

  it('canonicalJson sorts keys and leaves arrays in order', () => {
    assert.equal(canonicalJson({ b: 1, a: [2, 1], c: { z: null, y: true } }), '{"a":[2,1],"b":1,"c":{"y":true,"z":null}}');
  });
});

describe('ApprovalCache', () => {
  const key = approvalKey(base);
  const always = approvalDecision(true, 'operator', 'approved always', true);

  it('remembers a cacheable decision until its TTL passes (fake clock)', () => {
    let now = 1000;
    const cache = new ApprovalCache({ now: () => now });
    assert.equal(cache.remember(key, always, 500), true);
    assert.equal(cache.lookup(key)?.approved, true);
    now = 1499;
    assert.ok(cache.lookup(key));
    now = 1500;
    assert.equal(cache.lookup(key), undefined);
    assert.equal(cache.size, 0, 'an expired entry is dropped');
  });

  it('answers only for the exact key', () => {
    const cache = new ApprovalCache({ now: () => 0 });
    cache.remember(key, always, 1000);
    for (const [field, binding] of variations) assert.equal(cache.lookup(approvalKey(binding)), undefined, field);
  });

  it('caches deny decisions too, and never a once decision or a non-positive TTL', () => {
    const cache = new ApprovalCache({ now: () => 0 });
    assert.equal(cache.remember(key, approvalDecision(false, 'operator', 'never', true), 1000), true);
    assert.equal(cache.lookup(key)?.approved, false);
    const other = approvalKey({ ...base, session: 'ses_9' });
    assert.equal(cache.remember(other, approvalDecision(true, 'operator', 'once'), 1000), false);
    assert.equal(cache.remember(other, always, 0), false);
    assert.equal(cache.remember(other, always, Number.NaN), false);
    assert.equal(cache.remember(other, always, Number.POSITIVE_INFINITY), false);
    assert.equal(cache.lookup(other), undefined);
  });

  it('invalidates by core revision, session or principal, and stays bounded', () => {
    const cache = new ApprovalCache({ now: () => 0, maxEntries: 3 });
    const a = approvalKey({ ...base, coreRevision: 'rev_1' });
    const b = approvalKey({ ...base, coreRevision: 'rev_2' });
    const c = approvalKey({ ...base, coreRevision: 'rev_2', session: 'ses_x' });
    for (const k of [a, b, c]) cache.remember(k, always, 1000);
    assert.equal(cache.invalidate({ coreRevision: 'rev_2', session: 'ses_x' }), 1);
    assert.equal(cache.invalidate({ coreRevision: 'rev_2' }), 1);
    assert.ok(cache.lookup(a));
    for (let i = 0; i < 10; i++) cache.remember(approvalKey({ ...base, session: `s${i}` }), always, 1000);
    assert.equal(cache.size, 3);
    assert.equal(cache.lookup(a), undefined, 'the oldest entry was dropped');
    assert.equal(cache.invalidate(), 3);
  });
});

describe('the written-out canonical binding', () => {
  it('is exactly canonicalJson of the binding object, for hostile strings in every field', () => {
    const nasty = ['', 'a"b', 'back\\slash', 'line\nbreak', '\u2028\u2029', '\ud800 lone', 'é\u0301', '{"v":2}', 'ключ', '\u0000', '🙂'];
    let n = 0;
    for (const s of nasty) {
      const x = s === '' ? 'x' : s;
      const bindings: ApprovalBinding[] = [
        { ...base, principal: x },
        { ...base, session: x },
        { ...base, coreRevision: x },
        { ...base, effect: { ref: x, name: x } },
        { ...base, action: { kind: x, target: { [x]: [x, 1, null, { z: x, a: true }] } } },
        { ...base, action: mcpCallAction(x, x), policy: 'auto' },
        { ...base, action: evolveCoreAction('promote', null), policy: 'deny' },
      ];
      for (const b of bindings) {
        assert.equal(canonicalApprovalBinding(b), canonicalApprovalBindingGeneric(b));
        n++;
      }
    }
    assert.equal(n, nasty.length * 7);
  });
});
