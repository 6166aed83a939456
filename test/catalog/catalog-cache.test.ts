// The per-turn catalog cache: reuse while the identity holds, evict the whole stale catalog on any
// change, and evict one session without touching another's.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCore } from '../../src/core/index.js';
import { CatalogCache, type ResolvedEffectCatalog } from '../../src/catalog/index.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

after(removeTempCores);

test('reused while nothing changes; a grant, a file or the principal changing evicts the stale catalog first', async () => {
  const dir = makeCore({ 'agent.yaml': 'name: a\ntoolsets: [terminal]\ngrants: [terminal.exec]\n' });
  const evicted: [string, string][] = [];
  const cache = new CatalogCache({ onEvict: (c, s, why) => evicted.push([c.id, `${s}:${why}`]) });
  const core1 = await loadCore(dir);
  const a = cache.forTurn('s1', { core: core1, principal: 'p' });
  assert.equal(cache.forTurn('s1', { core: await loadCore(dir), principal: 'p' }), a, 'same identity, same catalog object');

  writeFileSync(join(dir, 'agent.yaml'), 'name: a\ntoolsets: [terminal]\ngrants: [terminal.exec, session.read]\n');
  const core2 = await loadCore(dir);
  const b = cache.forTurn('s1', { core: core2, principal: 'p' });
  assert.notEqual(b.id, a.id);
  assert.deepEqual(evicted, [[a.id, 's1:identity-changed']]);

  const c: ResolvedEffectCatalog = cache.forTurn('s1', { core: core2, principal: 'q' });
  assert.notEqual(c.id, b.id, 'another principal is another catalog');
  assert.equal(cache.forTurn('s1', { core: core2, principal: 'q', connectPolicy: 'mcp.connect:x' }) === c, false, 'connect policy is part of the identity');
  assert.equal(evicted.length, 3);
});

test('evicting one session closes only its catalog', async () => {
  const core = await loadCore(makeCore());
  const evicted: string[] = [];
  const cache = new CatalogCache({ onEvict: (_c, s, why) => evicted.push(`${s}:${why}`) });
  cache.forTurn('s1', { core, principal: 'p' });
  const other = cache.forTurn('s2', { core, principal: 'p' });
  cache.evictSession('s1');
  assert.deepEqual(evicted, ['s1:session-evicted']);
  assert.equal(cache.size, 1);
  assert.equal(cache.forTurn('s2', { core, principal: 'p' }), other);
});
