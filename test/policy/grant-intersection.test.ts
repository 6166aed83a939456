// A delegated child's grants are intersectGrants(parent, definition, call): over random grant sets,
// the child is never allowed what either side is not, and is allowed what both are (issue 18).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CapabilitySnapshot, intersectGrants } from '../../src/policy/index.js';
import { mulberry32 as rng } from '../redaction/redaction-helpers.js';

// A small universe, so random sets overlap often: wildcards at every level, targets, secrets.
const NAMES = ['fs.read', 'fs.write', 'terminal.exec', 'mcp.call', 'mcp.connect', 'agent.spawn', 'tool.call'];
const TARGETS = ['a', 'b', 'a/x', 'a/y', 'github', 'memory'];
const GRANTS = [
  '*',
  'fs.*',
  'mcp.*',
  'secret:TOKEN',
  'secret:OTHER',
  ...NAMES,
  ...NAMES.flatMap((n) => [`${n}:*`, ...TARGETS.map((t) => `${n}:${t}`)]),
  'fs.read:a/*',
];
const REQUIREMENTS = [...NAMES, ...NAMES.flatMap((n) => TARGETS.map((t) => `${n}:${t}`)), 'secret:TOKEN', 'secret:OTHER', 'fs.read:a/x/deep', 'net.fetch'];

const pick = (r: () => number): string[] => GRANTS.filter(() => r() < 0.12);

describe('intersectGrants', () => {
  it('over 2,000 random pairs and triples: allowed exactly when every set allows it, never wider than the parent', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const r = rng(seed);
      const parent = pick(r);
      const def = pick(r);
      const call = r() < 0.5 ? null : pick(r);
      let child = intersectGrants(parent, def);
      if (call !== null) child = intersectGrants(child, call);
      const [p, d, c, k] = [parent, def, call ?? ['*', ...GRANTS], child].map((g) => CapabilitySnapshot.from(g));
      for (const req of REQUIREMENTS) {
        const want = p!.allows(req) && d!.allows(req) && c!.allows(req);
        assert.equal(k!.allows(req), want, `seed ${seed}: ${req}\nparent ${parent}\ndefinition ${def}\ncall ${call}\nchild ${child}`);
      }
    }
  });

  it('a secret passes only by the exact grant on both sides; a wildcard never carries one', () => {
    assert.deepEqual(intersectGrants(['*'], ['secret:TOKEN']), []);
    assert.deepEqual(intersectGrants(['secret:TOKEN'], ['*']), []);
    assert.deepEqual(intersectGrants(['secret:TOKEN', 'fs.read'], ['secret:TOKEN']), ['secret:TOKEN']);
  });

  it('the narrower of two overlapping wildcards wins', () => {
    assert.deepEqual(intersectGrants(['fs.*'], ['fs.read:a/*', 'mcp.call:github']), ['fs.read:a/*']);
    assert.deepEqual(intersectGrants(['mcp.call:*'], ['mcp.*']), ['mcp.call:*']);
  });
});
