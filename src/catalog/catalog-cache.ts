// Catalogs are built once per turn and reused only while their identity holds. Any change of
// principal, grants, core revision, workspace or connect policy evicts the session's whole cached
// catalog before a new one is built; evicting a session closes only that session's catalog.
import { buildCatalog, catalogIdentity, identityInputFor, type BuildCatalogInput, type ResolvedEffectCatalog } from './resolved-catalog.js';

export type EvictionReason = 'identity-changed' | 'session-evicted' | 'cleared';

export interface CatalogCacheOptions {
  /** Called for every catalog leaving the cache (MCP connections of that catalog close here). */
  onEvict?: (catalog: ResolvedEffectCatalog, sessionId: string, reason: EvictionReason) => void;
}

export class CatalogCache {
  private readonly bySession = new Map<string, ResolvedEffectCatalog>();

  constructor(private readonly options: CatalogCacheOptions = {}) {}

  /** The catalog for this session's next turn: the cached one if its identity is unchanged. */
  forTurn(sessionId: string, input: BuildCatalogInput): ResolvedEffectCatalog {
    const id = catalogIdentity(identityInputFor(input));
    const cached = this.bySession.get(sessionId);
    if (cached && cached.id === id) return cached;
    if (cached) this.evict(sessionId, 'identity-changed');
    const fresh = buildCatalog(input);
    this.bySession.set(sessionId, fresh);
    return fresh;
  }

  evictSession(sessionId: string): void {
    this.evict(sessionId, 'session-evicted');
  }

  clear(): void {
    for (const id of [...this.bySession.keys()]) this.evict(id, 'cleared');
  }

  get size(): number {
    return this.bySession.size;
  }

  private evict(sessionId: string, reason: EvictionReason): void {
    const c = this.bySession.get(sessionId);
    if (!c) return;
    this.bySession.delete(sessionId);
    this.options.onEvict?.(c, sessionId, reason);
  }
}
