import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CapabilityDeniedError,
  CapabilitySnapshot,
  CapabilitySyntaxError,
  parseCapability,
} from '../../src/policy/capability.js';

const snap = (...grants: string[]): CapabilitySnapshot => CapabilitySnapshot.from(grants);

function syntaxError(fn: () => unknown, reason: RegExp): CapabilitySyntaxError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof CapabilitySyntaxError, `expected CapabilitySyntaxError, got ${String(caught)}`);
  assert.equal(caught.code, 'CAPABILITY_INVALID');
  assert.match(caught.message, reason);
  assert.match(caught.message, /Fix: /);
  return caught;
}

describe('parseCapability', () => {
  it('accepts the documented forms and normalizes them', () => {
    for (const [input, text] of [
      ['terminal.exec', 'terminal.exec'],
      ['  session.read ', 'session.read'],
      ['mcp.connect:github', 'mcp.connect:github'],
      ['fs.read:docs/**', 'fs.read:docs/*'],
      ['fs.**', 'fs.*'],
      ['**', '*'],
      ['secret:GITHUB_TOKEN', 'secret:GITHUB_TOKEN'],
      ['fs.read:docs/guide-v2.md', 'fs.read:docs/guide-v2.md'],
      ['net.fetch:example.com', 'net.fetch:example.com'],
    ] as const) {
      assert.equal(parseCapability(input).text, text, input);
    }
  });

  it('rejects a wildcard that is not a whole trailing segment, naming the grant and the fix', () => {
    const err = syntaxError(() => parseCapability('mcp.call:git*'), /whole trailing segment/);
    assert.match(err.message, /"mcp\.call:git\*"/);
    assert.match(err.fix, /mcp\.call:\*/);
    syntaxError(() => parseCapability('fs.re*'), /whole trailing segment/);
    syntaxError(() => parseCapability('fs.*.read'), /last segment/);
    syntaxError(() => parseCapability('fs.*:docs'), /last segment/);
    syntaxError(() => parseCapability('fs.read:*/x'), /last segment of the target/);
    syntaxError(() => parseCapability('*.read'), /last segment/);
  });

  it('rejects malformed names and targets with a reason', () => {
    syntaxError(() => parseCapability(''), /empty/);
    syntaxError(() => parseCapability('terminal'), /namespace\.verb/);
    syntaxError(() => parseCapability('Terminal.Exec'), /lowercase|\[a-z\]/);
    syntaxError(() => parseCapability('fs..read'), /empty name segment/);
    syntaxError(() => parseCapability('mcp.call:'), /target after ':' is empty/);
    syntaxError(() => parseCapability('fs.read:/etc/passwd'), /empty segment/);
    syntaxError(() => parseCapability('fs.read:docs//a'), /empty segment/);
    syntaxError(() => parseCapability('fs.read:docs/../etc'), /"\.\." segment/);
    syntaxError(() => parseCapability('fs.read:docs/a b'), /character outside/);
    syntaxError(() => parseCapability('mcp.call:a:b'), /character outside/);
    syntaxError(() => parseCapability('x.y'.repeat(300)), /longer than/);
    syntaxError(() => parseCapability(42), /expected a string/);
  });

  it('gives the secret namespace exactly one form and no wildcard', () => {
    syntaxError(() => parseCapability('secret:*'), /matched exactly/);
    syntaxError(() => parseCapability('secret:GITHUB_*'), /matched exactly/);
    syntaxError(() => parseCapability('secret'), /secret:NAME/);
    syntaxError(() => parseCapability('secret.read'), /secret:NAME/);
    syntaxError(() => parseCapability('secret.*'), /secret:NAME/);
    syntaxError(() => parseCapability('secret:has-dash'), /not of the form/);
  });

  it('refuses wildcards in a required capability', () => {
    syntaxError(() => parseCapability('mcp.call:*', 'requirement'), /one concrete effect/);
    syntaxError(() => parseCapability('*', 'requirement'), /one concrete effect/);
    syntaxError(() => parseCapability('fs.*', 'requirement'), /one concrete effect/);
  });
});

describe('CapabilitySnapshot', () => {
  it('is sorted, de-duplicated, frozen, and its digest depends only on the normalized set', () => {
    const a = snap('mcp.call:github', 'terminal.exec', 'fs.read:docs/**', 'terminal.exec');
    const b = snap(' fs.read:docs/*', 'terminal.exec', 'mcp.call:github');
    assert.deepEqual(a.grants, ['fs.read:docs/*', 'mcp.call:github', 'terminal.exec']);
    assert.equal(a.digest, b.digest);
    assert.match(a.digest, /^[0-9a-f]{64}$/);
    assert.ok(a.equals(b));
    assert.notEqual(snap('terminal.exec').digest, snap('terminal.exec', 'session.read').digest);
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a.grants));
    assert.throws(() => (a.grants as string[]).push('x'));
    assert.deepEqual(JSON.parse(JSON.stringify(a)), { grants: a.grants, digest: a.digest });
  });

  it('names the index and the grant when one is malformed', () => {
    const err = syntaxError(() => CapabilitySnapshot.from(['terminal.exec', 'mcp.call:git*'], 'agent.yaml capabilities'), /whole trailing/);
    assert.match(err.message, /^agent\.yaml capabilities\[1\]: capability "mcp\.call:git\*"/);
    syntaxError(() => CapabilitySnapshot.from('terminal.exec' as unknown as string[]), /list of strings/);
  });

  it('matches exact grants exactly', () => {
    const s = snap('fs.read', 'mcp.call:github');
    assert.ok(s.allows('fs.read'));
    assert.ok(!s.allows('fs.reader'), 'fs.read must not match fs.reader');
    assert.ok(!s.allows('fs.read:docs/a'), 'a grant without target does not cover targets');
    assert.ok(!s.allows('fs.read.all'));
    assert.ok(s.allows('mcp.call:github'));
    assert.ok(!s.allows('mcp.call:github2'));
    assert.ok(!s.allows('mcp.call:github/create_issue'));
    assert.ok(!s.allows('mcp.connect:github'), 'connect and call are distinct effects');
  });

  it('matches a trailing wildcard by whole segments only', () => {
    const s = snap('fs.*', 'mcp.call:*', 'docs.read:guides/*');
    assert.ok(s.allows('fs.read'));
    assert.ok(s.allows('fs.write:src/a.ts'));
    assert.ok(!s.allows('fsx.read'), 'fs.* must not match fsx.read');
    assert.ok(s.allows('mcp.call:github'));
    assert.ok(s.allows('mcp.call:github/create_issue'));
    assert.ok(!s.allows('mcp.call'), 'mcp.call:* needs a target');
    assert.ok(!s.allows('mcp.caller:github'));
    assert.ok(!s.allows('mcp.connect:github'));
    assert.ok(s.allows('docs.read:guides/a/b.md'));
    assert.ok(!s.allows('docs.read:guides'), 'the wildcard stands for at least one segment');
    assert.ok(!s.allows('docs.read:guidesx/a'));
    assert.ok(snap('*').allows('terminal.exec'));
    assert.ok(snap('*').allows('mcp.call:anything/at/all'));
  });

  it('never grants a secret by wildcard: exact-default lookup', () => {
    for (const grants of [['*'], ['**'], ['mcp.*'], ['secret:OTHER'], ['*', 'fs.*', 'secret:GITHUB_TOKENX']]) {
      const s = snap(...grants);
      assert.ok(!s.allows('secret:GITHUB_TOKEN'), `grants ${grants.join(',')} must not allow secret:GITHUB_TOKEN`);
    }
    assert.ok(snap('secret:GITHUB_TOKEN').allows('secret:GITHUB_TOKEN'));
    assert.throws(() => snap('secret:github_token'), /not of the form \[A-Z\]/, 'secret names are upper-case, so no grant differs only by case');
  });

  it('fails closed on a malformed or wildcard requirement (throws)', () => {
    const s = snap('*');
    syntaxError(() => s.allows('mcp.call:*'), /one concrete effect/);
    syntaxError(() => s.allows('fs.read:docs/../../etc/passwd'), /"\.\." segment/);
    syntaxError(() => s.allows(''), /empty/);
  });

  it('require() throws CapabilityDeniedError naming the capability and the nearest grants', () => {
    const s = snap('mcp.call:gitlab', 'mcp.connect:github', 'terminal.exec');
    s.require('terminal.exec');
    let err: unknown;
    try {
      s.require('mcp.call:github');
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof CapabilityDeniedError);
    assert.equal(err.code, 'CAPABILITY_DENIED');
    assert.equal(err.required, 'mcp.call:github');
    assert.deepEqual(err.nearest, ['mcp.call:gitlab']);
    assert.match(err.message, /mcp\.call:github is not granted/);
    assert.match(err.message, /nearest grants: mcp\.call:gitlab/);
    assert.throws(() => snap('*').require('secret:TOKEN'), (e: unknown) => e instanceof CapabilityDeniedError && /wildcards such as \* never grant a secret/.test(e.message));
    assert.throws(() => snap().require('session.read'), /no grant in the snapshot shares a prefix/);
  });
});
