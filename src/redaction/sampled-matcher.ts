// Finds every occurrence of many byte patterns by looking at only every `step`-th position.
// Let m be the shortest pattern (capped) and q the gram length. An occurrence is at least m bytes
// long, so the q-grams starting at its first m - q + 1 positions are step = m - q + 1 consecutive
// positions, and exactly one of them is a multiple of step. Registering, for every pattern, its
// grams at offsets 0..step-1 therefore finds every occurrence from the sampled positions alone.
// A small bitmap of gram hashes rejects almost every sample; a hit is verified byte by byte.

/** Gram length: four bytes read as one 32-bit number. */
const MAX_GRAM = 4;
/** Longer minimum lengths are not used: each extra offset registers one more gram per pattern. */
const MAX_SPAN = 16;
const HASH_BITS = 18;
const HASH_MUL = 0x9e3779b1;

export class SampledMatcher {
  readonly gram: number;
  readonly step: number;
  private readonly patterns: readonly Buffer[];
  /** One bit per gram hash (2^HASH_BITS bits). */
  private readonly bitmap = new Int32Array(1 << (HASH_BITS - 5));
  /** Gram value → flat [pattern index, offset, ...] of the candidates it implies. */
  private readonly candidates = new Map<number, number[]>();

  constructor(patterns: readonly Buffer[]) {
    this.patterns = patterns;
    const minLen = patterns.reduce((m, p) => Math.min(m, p.length), Number.POSITIVE_INFINITY);
    if (!(minLen >= 1)) throw new RangeError('SampledMatcher: patterns must be non-empty');
    const span = Math.min(minLen, MAX_SPAN);
    this.gram = Math.min(MAX_GRAM, span);
    this.step = span - this.gram + 1;
    for (let idx = 0; idx < patterns.length; idx++) {
      const p = patterns[idx]!;
      for (let off = 0; off < this.step; off++) {
        const g = this.gramAt(p, off);
        const h = Math.imul(g, HASH_MUL) >>> (32 - HASH_BITS);
        this.bitmap[h >>> 5]! |= 1 << (h & 31);
        const list = this.candidates.get(g);
        if (list === undefined) this.candidates.set(g, [idx, off]);
        else list.push(idx, off);
      }
    }
  }

  private gramAt(buf: Buffer, i: number): number {
    let g = 0;
    for (let k = 0; k < this.gram; k++) g |= buf[i + k]! << (8 * k);
    return g;
  }

  /**
   * Calls onMatch(start, end) for every occurrence that lies wholly in window[0, n) and starts
   * before `limit`, in no particular order. Occurrences starting at or after `limit` are left for a
   * later window that starts there.
   */
  find(window: Buffer, limit: number, onMatch: (start: number, end: number) => void): void {
    const n = window.length;
    const step = this.step;
    const bitmap = this.bitmap;
    // A candidate at sample i starts at i - off with off < step.
    const last = Math.min(n - this.gram, limit + step - 1);
    if (this.gram === MAX_GRAM) {
      for (let i = 0; i <= last; i += step) {
        const g = window[i]! | (window[i + 1]! << 8) | (window[i + 2]! << 16) | (window[i + 3]! << 24);
        const h = Math.imul(g, HASH_MUL) >>> (32 - HASH_BITS);
        if ((bitmap[h >>> 5]! & (1 << (h & 31))) !== 0) this.verify(window, i, g, limit, onMatch);
      }
    } else {
      for (let i = 0; i <= last; i += step) {
        const g = this.gramAt(window, i);
        const h = Math.imul(g, HASH_MUL) >>> (32 - HASH_BITS);
        if ((bitmap[h >>> 5]! & (1 << (h & 31))) !== 0) this.verify(window, i, g, limit, onMatch);
      }
    }
  }

  private verify(window: Buffer, i: number, g: number, limit: number, onMatch: (start: number, end: number) => void): void {
    const list = this.candidates.get(g);
    if (list === undefined) return;
    for (let k = 0; k < list.length; k += 2) {
      const p = this.patterns[list[k]!]!;
      const start = i - list[k + 1]!;
      const end = start + p.length;
      if (start < 0 || start >= limit || end > window.length) continue;
      if (window.compare(p, 0, p.length, start, end) === 0) onMatch(start, end);
    }
  }
}
