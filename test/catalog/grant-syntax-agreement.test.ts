// The core loader and the policy layer each parse grants (they share a layer). Whatever the core
// accepts, policy must accept with the same meaning, or a valid core would fail at dispatch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGrant } from '../../src/core/index.js';
import { parseCapability, CapabilitySnapshot } from '../../src/policy/index.js';

const CASES = [
  'terminal.exec', 'fs.read:docs/**', 'fs.read:docs/*', 'fs.*', '*', 'secret:X', 'secret:*', 'mcp.call:git*',
  'mcp.connect:github', 'mcp.call:*', 'tool.call:word_count', 'fs.read:../x', 'a.b:c:d', 'A.b', 'x', 'fs.read:docs/./x',
  'session.read', 'fs.read:docs//x', 'fs.read:', '.read', 'fs.', 'fs.read:a b', 'secret:lower', 'secret:GH_TOKEN',
  'task.control', 'fs.read:docs/**/x', 'net.fetch:example.com', 'catalog.read',
];

test('every grant the core loader accepts, policy parses too, and matches the same requirements', () => {
  for (const g of CASES) {
    if (!checkGrant(g).ok) continue;
    assert.doesNotThrow(() => parseCapability(g), `policy rejects ${g}, which the core accepts`);
    const snap = CapabilitySnapshot.from([g]);
    if (!g.includes('*')) assert.equal(snap.allows(g), true, `${g} grants itself`);
  }
  // The core is the stricter of the two on purpose: it refuses a bare '*' grant.
  assert.equal(checkGrant('*').ok, false);
});
