// Remembered approval decisions ("always" / "never" for one exact approval key), with a TTL.
// The default clock is monotonic, so a wall-clock jump can neither extend nor resurrect an entry.
import { performance } from 'node:perf_hooks';
import type { ApprovalDecision, ApprovalSource } from './approval-decision.js';
import type { ApprovalKey } from './approval-key.js';

export interface CachedApproval {
  readonly approved: boolean;
  /** Who made the remembered decision (the operator, usually). */
  readonly source: ApprovalSource;
  readonly reason: string;
  /** Clock time after which the entry no longer answers. */
  readonly expiresAt: number;
}

export interface ApprovalCacheOptions {
  /** Milliseconds on any monotonic scale; default performance.now. */
  now?: () => number;
  /** Oldest entries are dropped beyond this; default 4096. */
  maxEntries?: number;
}

/** Which remembered decisions to drop: entries matching every given field. */
export interface ApprovalCacheScope {
  readonly principal?: string;
  readonly session?: string;
  readonly coreRevision?: string;
}

interface Entry {
  readonly key: ApprovalKey;
  readonly value: CachedApproval;
}

export class ApprovalCache {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly maxEntries: number;

  constructor(options: ApprovalCacheOptions = {}) {
    this.now = options.now ?? (() => performance.now());
    const max = options.maxEntries ?? 4096;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`ApprovalCache maxEntries must be a positive integer (got ${max})`);
    this.maxEntries = max;
  }

  /**
   * Remembers a decision for `ttlMs`. Returns false (and stores nothing) for a decision that is
   * not cacheable (a 'once' answer, a rule, a policy outcome) or a TTL that is not a positive
   * finite number (nothing is remembered forever).
   */
  remember(key: ApprovalKey, decision: ApprovalDecision, ttlMs: number): boolean {
    if (decision.cacheable !== true || !Number.isFinite(ttlMs) || ttlMs <= 0 || typeof key?.id !== 'string') return false;
    const expiresAt = this.now() + ttlMs;
    this.entries.delete(key.id); // re-insert so Map order stays oldest-first
    this.entries.set(key.id, {
      key,
      value: Object.freeze({ approved: decision.approved === true, source: decision.source, reason: decision.reason, expiresAt }),
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return true;
  }

  /** The live remembered decision for exactly this key, if any; expired entries are dropped. */
  lookup(key: ApprovalKey): CachedApproval | undefined {
    const entry = this.entries.get(key.id);
    if (entry === undefined) return undefined;
    if (this.now() >= entry.value.expiresAt) {
      this.entries.delete(key.id);
      return undefined;
    }
    return entry.value;
  }

  forget(key: ApprovalKey): boolean {
    return this.entries.delete(key.id);
  }

  /**
   * Drops every entry matching the scope, e.g. { coreRevision } after a promotion or rollback of
   * that core, { session } when a session is evicted. An empty scope drops everything.
   */
  invalidate(scope: ApprovalCacheScope = {}): number {
    let dropped = 0;
    for (const [id, { key }] of this.entries) {
      if (scope.principal !== undefined && key.principal !== scope.principal) continue;
      if (scope.session !== undefined && key.session !== scope.session) continue;
      if (scope.coreRevision !== undefined && key.coreRevision !== scope.coreRevision) continue;
      this.entries.delete(id);
      dropped++;
    }
    return dropped;
  }

  get size(): number {
    return this.entries.size;
  }
}
