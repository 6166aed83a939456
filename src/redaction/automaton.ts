// An Aho–Corasick automaton over bytes with a dense transition table. It answers one question at
// the end of every chunk: how many trailing bytes could still grow into a pattern (the hold-back).
// It was first the matcher too, but its one dependent table load per byte ran at 120-200 MB/s here
// (docs/decisions/0019-redactor-sampling-not-aho-corasick.md); the sampled matcher finds the
// occurrences. Bytes that occur in no pattern share one column (byte classes), which keeps the
// table small.
import { RedactionError } from './errors.js';

/** The transition table may not grow beyond this; compiling more fails closed (REDACTION_TOO_LARGE). */
export const MAX_TABLE_BYTES = 64 * 1024 * 1024;

export class PatternAutomaton {
  /** Byte → column. */
  readonly classOf: Uint8Array;
  /** log2 of the row width (a power of two, so a row starts at state << shift). */
  readonly shift: number;
  /** delta[(state << shift) | classOf[byte]] is the next state. State 0 is the root. */
  readonly delta: Uint16Array | Uint32Array;
  /**
   * Length of the longest suffix of the text read so far that a later byte could still extend
   * into a match: bytes before it can no longer be covered by a match that is not yet seen.
   */
  readonly holdDepth: Int32Array;
  readonly stateCount: number;
  /** The longest pattern, in bytes. */
  readonly maxLen: number;

  constructor(patterns: readonly Buffer[]) {
    const used = new Uint8Array(256);
    let maxLen = 0;
    for (const p of patterns) {
      for (const b of p) used[b] = 1;
      if (p.length > maxLen) maxLen = p.length;
    }
    this.maxLen = maxLen;
    const usedCount = used.reduce((a, b) => a + b, 0);
    // Column 0 is shared by every byte no pattern contains, unless all 256 bytes are used.
    this.classOf = new Uint8Array(256);
    let classes = usedCount === 256 ? 0 : 1;
    for (let b = 0; b < 256; b++) if (used[b] === 1) this.classOf[b] = classes++;
    let shift = 0;
    while (1 << shift < classes) shift++;
    this.shift = shift;

    // Refuse before building: the state count is at most the total pattern length plus one.
    const bound = patterns.reduce((t, p) => t + p.length, 1);
    const tableBytes = bound * (1 << shift) * (bound > 0xffff ? 4 : 2);
    if (tableBytes > MAX_TABLE_BYTES) {
      throw new RedactionError(
        'REDACTION_TOO_LARGE',
        `redaction: ${patterns.length} patterns need up to a ${Math.ceil(tableBytes / 2 ** 20)} MiB matcher, over the ` +
          `${MAX_TABLE_BYTES / 2 ** 20} MiB cap; bind fewer or shorter secrets to this effect`,
      );
    }

    // The trie, with sparse edges first: its size decides the table's element type.
    const edge = new Map<number, number>();
    const depth: number[] = [0];
    const children: number[][] = [[]];
    for (const p of patterns) {
      if (p.length === 0) continue;
      let s = 0;
      for (const b of p) {
        const c = this.classOf[b]!;
        const key = s * 256 + c;
        let next = edge.get(key);
        if (next === undefined) {
          next = depth.length;
          edge.set(key, next);
          depth.push(depth[s]! + 1);
          children.push([]);
          children[s]!.push(c, next);
        }
        s = next;
      }
    }
    const n = depth.length;
    this.stateCount = n;
    const wide = n > 0xffff;
    const delta = wide ? new Uint32Array(n << shift) : new Uint16Array(n << shift);
    const holdDepth = new Int32Array(n);
    const fail = new Int32Array(n);

    // Breadth-first: a state's failure target is shallower, so its row is final when copied.
    const queue = new Int32Array(n);
    let head = 0;
    let tail = 0;
    const root = children[0]!;
    for (let i = 0; i < root.length; i += 2) {
      delta[root[i]!] = root[i + 1]!;
      queue[tail++] = root[i + 1]!;
    }
    while (head < tail) {
      const s = queue[head++]!;
      const f = fail[s]!;
      const kids = children[s]!;
      holdDepth[s] = kids.length > 0 ? depth[s]! : holdDepth[f]!;
      delta.copyWithin(s << shift, f << shift, (f + 1) << shift);
      for (let i = 0; i < kids.length; i += 2) {
        const c = kids[i]!;
        const child = kids[i + 1]!;
        // The child's failure target: the longest proper suffix that is a trie state.
        fail[child] = delta[(f << shift) | c]!;
        delta[(s << shift) | c] = child;
        queue[tail++] = child;
      }
    }
    holdDepth[0] = 0;
    this.delta = delta;
    this.holdDepth = holdDepth;
  }

  /** Memory held by the tables, in bytes. */
  get tableBytes(): number {
    return this.delta.byteLength + this.holdDepth.byteLength;
  }

  /** Length of the longest suffix of window[0, end) that is a proper prefix of some pattern. */
  pendingLength(window: Buffer, end: number): number {
    const { delta, classOf, shift } = this;
    let s = 0;
    // A proper prefix is at most maxLen - 1 bytes long: nothing earlier matters.
    for (let i = Math.max(0, end - this.maxLen + 1); i < end; i++) s = delta[(s << shift) | classOf[window[i]!]!]!;
    return this.holdDepth[s]!;
  }
}
