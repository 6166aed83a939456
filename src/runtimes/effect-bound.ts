// The effect bound: what a runtime makes callable, in one canonical form with one digest, so
// `supervisor plan` can prove that two runtimes give the agent the same authority.
import { createHash } from 'node:crypto';
import type { ResolvedEffectCatalog } from '../catalog/index.js';
import { canonicalJson } from '../store/index.js';
import type { EffectBound } from './runtime-types.js';

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** The bound of a set of callable names over a catalog: each name must be one of its entries. */
export function boundOf(catalog: ResolvedEffectCatalog, callable: readonly { name: string; schema: unknown }[], builtins: readonly string[]): EffectBound {
  const operations = callable.map(({ name, schema }) => {
    const e = catalog.entryForCall(name);
    if (!e) throw new Error(`the runtime offers ${name}, which is not in the catalog ${catalog.id}`);
    return {
      name,
      capability: e.capability,
      approval: e.approval,
      granted: catalog.capabilities.allows(e.capability),
      schema_sha256: sha256(canonicalJson(schema as never)),
    };
  });
  operations.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { operations, builtins: [...builtins].sort() };
}

export function boundDigest(b: EffectBound): string {
  return sha256(canonicalJson(b as never));
}
