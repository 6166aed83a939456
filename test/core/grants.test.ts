import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkGrant, grantCovers } from '../../src/core/index.js';

describe('grant syntax (the policy grammar, as core files must write it)', () => {
  const valid: [string, string, boolean][] = [
    ['terminal.exec', 'terminal.exec', false],
    ['mcp.connect:github', 'mcp.connect:github', false],
    ['mcp.call:github/search_issues', 'mcp.call:github/search_issues', false],
    ['mcp.call:*', 'mcp.call:*', true],
    ['mcp.*', 'mcp.*', true],
    ['fs.read:docs/**', 'fs.read:docs/*', true],
    ['fs.read:docs/*', 'fs.read:docs/*', true],
    ['secret:GITHUB_TOKEN', 'secret:GITHUB_TOKEN', false],
    ['tool.call:word_count', 'tool.call:word_count', false],
    ['net.fetch:example.com', 'net.fetch:example.com', false],
  ];
  for (const [text, canonical, wildcard] of valid) {
    it(`accepts ${text}`, () => {
      const r = checkGrant(text);
      assert.ok(r.ok, r.ok ? '' : r.message);
      assert.equal(r.capability.text, canonical);
      assert.equal(r.capability.wildcard, wildcard);
    });
  }

  const invalid: [string, string][] = [
    ['', 'empty'],
    ['terminal', 'namespace.verb'],
    ['Terminal.exec', 'write "terminal"'],
    ['terminal exec', 'is not [a-z]'],
    ['*', 'would grant every namespace'],
    ['**', 'would grant every namespace'],
    ['*.exec', 'would grant every namespace'],
    ['term*.exec', 'whole trailing segment'],
    ['mcp.*:github', 'must be the last segment'],
    ['mcp.call:git*', 'whole trailing segment'],
    ['mcp.call:github.*', 'whole trailing segment'],
    ['mcp.call:*/x', 'last segment of the target'],
    ['fs.read:docs/***', 'whole trailing segment'],
    ['fs.read:', 'is empty'],
    ['fs.read:../etc', '".." segment'],
    ['fs.read:docs//x', 'empty segment'],
    ['fs.read:docs/', 'empty segment'],
    ['fs.read:a b', 'outside letters'],
    ['mcp.call:a:b', 'outside letters'],
    ['secret:*', 'matched exactly'],
    ['secret:GH_*', 'matched exactly'],
    ['secret:', 'secret name'],
    ['secret:1ABC', 'secret name'],
    ['secret.read:X', 'secret:NAME'],
    [' terminal.exec', 'canonical form'],
    ['x'.repeat(600), 'longer than 512'],
  ];
  for (const [text, why] of invalid) {
    it(`refuses ${JSON.stringify(text.slice(0, 30))}`, () => {
      const r = checkGrant(text);
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.message.includes(why), `${!r.ok ? r.message : ''} should say ${why}`);
    });
  }

  it('refuses wildcards where an exact capability is required', () => {
    assert.equal(checkGrant('tool.*', { exact: true }).ok, false);
    assert.equal(checkGrant('tool.call:*', { exact: true }).ok, false);
    assert.equal(checkGrant('tool.call:x', { exact: true }).ok, true);
  });
});

describe('grantCovers (the self-dispatch check)', () => {
  it('covers by equality or by prefix wildcard, never a secret by wildcard', () => {
    assert.ok(grantCovers('tool.call:x', 'tool.call:x'));
    assert.ok(grantCovers('tool.*', 'tool.call:x'));
    assert.ok(grantCovers('tool.call:*', 'tool.call:x'));
    assert.ok(!grantCovers('tool.call:y', 'tool.call:x'));
    assert.ok(!grantCovers('fs.*', 'tool.call:x'));
    assert.ok(!grantCovers('secret:*', 'secret:X'));
    assert.ok(grantCovers('secret:X', 'secret:X'));
  });
});
