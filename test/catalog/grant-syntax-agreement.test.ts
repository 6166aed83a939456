// The core loader checks grants with the policy's parser (one grammar). Whatever the core accepts
// dispatch must accept with the same meaning, or a valid core would fail at its first effect; and
// the loader's self-dispatch check must match exactly what a snapshot would allow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGrant, grantCovers } from '../../src/core/index.js';
import { parseCapability, CapabilitySnapshot, CapabilitySyntaxError } from '../../src/policy/index.js';

const CASES = [
  'terminal.exec', 'fs.read:docs/**', 'fs.read:docs/*', 'fs.*', '*', '**', 'secret:X', 'secret:*', 'mcp.call:git*',
  'mcp.connect:github', 'mcp.call:*', 'tool.call:word_count', 'fs.read:../x', 'a.b:c:d', 'A.b', 'x', 'fs.read:docs/./x',
  'session.read', 'fs.read:docs//x', 'fs.read:', '.read', 'fs.', 'fs.read:a b', 'secret:lower', 'secret:GH_TOKEN',
  'task.control', 'fs.read:docs/**/x', 'net.fetch:example.com', 'catalog.read', 'mcp.call:github.*', 'mcp.call:github/x',
  ' terminal.exec', 'terminal.exec ', 'a.b.c', 'tool.*', '*.exec', 'fs.read:caf\u0065\u0301',
];
const REQUIREMENTS = ['terminal.exec', 'fs.read:docs/a.md', 'fs.read:docs', 'fs.write:docs/a', 'mcp.call:github', 'mcp.call:github/x', 'secret:X', 'secret:GH_TOKEN', 'tool.call:word_count', 'catalog.read', 'a.b.c', 'net.fetch:example.com'];

test('every grant the core loader accepts, policy parses to the same canonical text', () => {
  let accepted = 0;
  for (const g of CASES) {
    const r = checkGrant(g);
    if (!r.ok) continue;
    accepted++;
    assert.equal(parseCapability(g).text, r.capability.text, g);
  }
  assert.ok(accepted >= 10, `only ${accepted} cases accepted; the list no longer tests agreement`);
});

test('the core refuses only what policy refuses, plus the two loader-only rules', () => {
  for (const g of CASES) {
    const r = checkGrant(g);
    if (r.ok) continue;
    let policyRefuses = false;
    try {
      parseCapability(g);
    } catch (err) {
      assert.ok(err instanceof CapabilitySyntaxError);
      policyRefuses = true;
    }
    // Loader-only: a leading wildcard (grants every namespace), text not in canonical spelling.
    const loaderOnly = g.startsWith('*') || g !== g.trim() || g !== g.normalize('NFC');
    assert.ok(policyRefuses || loaderOnly, `the core refuses ${JSON.stringify(g)} (${r.message}) but policy accepts it`);
  }
});

test('grantCovers agrees with CapabilitySnapshot.allows for every accepted grant and requirement', () => {
  for (const g of CASES) {
    if (!checkGrant(g).ok) continue;
    const snap = CapabilitySnapshot.from([g]);
    for (const req of REQUIREMENTS) assert.equal(grantCovers(g, req), snap.allows(req), `${g} vs ${req}`);
  }
});
