import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkGrant, grantCovers } from '../../src/core/index.js';

describe('grant syntax', () => {
  const valid: [string, { namespace: string; verb: string | null; target: string | null; wildcard: boolean }][] = [
    ['terminal.exec', { namespace: 'terminal', verb: 'exec', target: null, wildcard: false }],
    ['mcp.connect:github', { namespace: 'mcp', verb: 'connect', target: 'github', wildcard: false }],
    ['mcp.call:github.search_issues', { namespace: 'mcp', verb: 'call', target: 'github.search_issues', wildcard: false }],
    ['mcp.call:github.*', { namespace: 'mcp', verb: 'call', target: 'github.*', wildcard: true }],
    ['mcp.call:*', { namespace: 'mcp', verb: 'call', target: '*', wildcard: true }],
    ['mcp.*', { namespace: 'mcp', verb: '*', target: null, wildcard: true }],
    ['fs.read:docs/**', { namespace: 'fs', verb: 'read', target: 'docs/**', wildcard: true }],
    ['fs.read:docs/*', { namespace: 'fs', verb: 'read', target: 'docs/*', wildcard: true }],
    ['secret:GITHUB_TOKEN', { namespace: 'secret', verb: null, target: 'GITHUB_TOKEN', wildcard: false }],
    ['tool.call:word_count', { namespace: 'tool', verb: 'call', target: 'word_count', wildcard: false }],
  ];
  for (const [text, parts] of valid) {
    it(`accepts ${text}`, () => {
      assert.deepEqual(checkGrant(text), { ok: true, parts });
    });
  }

  const invalid: [string, string][] = [
    ['', 'empty'],
    ['terminal', 'is not a capability'],
    ['Terminal.exec', 'is not a capability'],
    ['terminal exec', 'is not a capability'],
    ['*', 'grants everything'],
    ['*.exec', 'grants everything'],
    ['term*.exec', "puts '*' inside the namespace or verb"],
    ['mcp.*:github', 'a wildcard must be the last segment'],
    ['mcp.call:git*', "puts '*' inside a segment"],
    ['mcp.call:*/x', "puts '*' inside a segment"],
    ['fs.read:docs/***', "puts '*' inside a segment"],
    ['fs.read:', 'empty target'],
    ['fs.read:../etc', "'..' path segment"],
    ['fs.read:docs//x', 'empty'],
    ['fs.read:docs/', 'empty'],
    ['fs.read:a b', 'characters a target may not hold'],
    ['mcp.call:a:b', 'characters a target may not hold'],
    ['secret:*', 'secret grants are exact'],
    ['secret:GH_*', 'secret grants are exact'],
    ['secret:', 'secret name must match'],
    ['secret:1ABC', 'secret name must match'],
    ['secret.read:X', "a secret grant is written 'secret:NAME'"],
    ['x'.repeat(300), 'at most 256 characters'],
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
