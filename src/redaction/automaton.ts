// An Aho–Corasick automaton over bytes. It answers one question at the end of every chunk: how
// many trailing bytes could still grow into a pattern (the hold-back). It was first the matcher
// too, with a dense transition table, but its one dependent table load per byte ran at 120-200
// MB/s here (docs/decisions/0019-redactor-sampling-not-aho-corasick.md); the sampled matcher finds
// the occurrences. Since it reads at most the longest pattern per chunk, the trie is kept sparse
// (a dense row for the root, sibling lists below it, failure links): its memory grows with the
// total pattern length alone, which the hex and UTF-16 forms multiplied (decision 0075).
import { RedactionError } from './errors.js';

/** The automaton's arrays may not grow beyond this; compiling more fails closed (REDACTION_TOO_LARGE). */
export const MAX_TABLE_BYTES = 64 * 1024 * 1024;
/** firstChild, nextSibling, fail, holdDepth (Int32) and the edge byte, per state. */
const BYTES_PER_STATE = 17;

export class PatternAutomaton {
  /** The root's transitions (0: stay at the root). */
  private readonly rootNext = new Int32Array(256);
  /** First child and next sibling of each state (0: none; the root is nobody's child). */
  private readonly firstChild: Int32Array;
  private readonly nextSibling: Int32Array;
  /** The byte on the edge into each state. */
  private readonly byteOf: Uint8Array;
  private readonly fail: Int32Array;
  /**
   * Length of the longest suffix of the text read so far that a later byte could still extend
   * into a match: bytes before it can no longer be covered by a match that is not yet seen.
   */
  private readonly holdDepth: Int32Array;
  readonly stateCount: number;
  /** The longest pattern, in bytes. */
  readonly maxLen: number;

  constructor(patterns: readonly Buffer[]) {
    let maxLen = 0;
    // Refuse before building: the state count is at most the total pattern length plus one.
    let bound = 1;
    for (const p of patterns) {
      if (p.length > maxLen) maxLen = p.length;
      bound += p.length;
    }
    this.maxLen = maxLen;
    const tableBytes = bound * BYTES_PER_STATE;
    if (tableBytes > MAX_TABLE_BYTES) {
      throw new RedactionError(
        'REDACTION_TOO_LARGE',
        `redaction: ${patterns.length} patterns need up to a ${Math.ceil(tableBytes / 2 ** 20)} MiB matcher, over the ` +
          `${MAX_TABLE_BYTES / 2 ** 20} MiB cap; bind fewer or shorter secrets to this effect`,
      );
    }

    const firstChild = (this.firstChild = new Int32Array(bound));
    const nextSibling = (this.nextSibling = new Int32Array(bound));
    const byteOf = (this.byteOf = new Uint8Array(bound));
    const depth = new Int32Array(bound);
    const rootNext = this.rootNext;
    let n = 1;
    for (const p of patterns) {
      let s = 0;
      for (const x of p) {
        let c = this.child(s, x);
        if (c === 0) {
          c = n++;
          byteOf[c] = x;
          depth[c] = depth[s]! + 1;
          if (s === 0) rootNext[x] = c;
          else {
            nextSibling[c] = firstChild[s]!;
            firstChild[s] = c;
          }
        }
        s = c;
      }
    }
    this.stateCount = n;
    const fail = new Int32Array(n);
    const holdDepth = new Int32Array(n);
    this.fail = fail;
    this.holdDepth = holdDepth;

    // Breadth-first: a state's failure target is shallower, so it is final when it is read.
    const queue = new Int32Array(n);
    let head = 0;
    let tail = 0;
    for (let x = 0; x < 256; x++) if (rootNext[x] !== 0) queue[tail++] = rootNext[x]!;
    while (head < tail) {
      const s = queue[head++]!;
      holdDepth[s] = firstChild[s] !== 0 ? depth[s]! : holdDepth[fail[s]!]!;
      for (let c = firstChild[s]!; c !== 0; c = nextSibling[c]!) {
        // fail[s] is shallower than s, so its child on this byte is never c itself.
        fail[c] = this.next(fail[s]!, byteOf[c]!);
        queue[tail++] = c;
      }
    }
  }

  /** The child of s on byte x; 0 when there is none. */
  private child(s: number, x: number): number {
    if (s === 0) return this.rootNext[x]!;
    for (let c = this.firstChild[s]!; c !== 0; c = this.nextSibling[c]!) if (this.byteOf[c] === x) return c;
    return 0;
  }

  /** The state after reading x in state s, following failure links. */
  private next(s: number, x: number): number {
    for (;;) {
      const c = this.child(s, x);
      if (c !== 0) return c;
      if (s === 0) return 0;
      s = this.fail[s]!;
    }
  }

  /** Memory held by the arrays, in bytes. */
  get tableBytes(): number {
    return this.stateCount * BYTES_PER_STATE + this.rootNext.byteLength;
  }

  /** Length of the longest suffix of window[0, end) that is a proper prefix of some pattern. */
  pendingLength(window: Buffer, end: number): number {
    let s = 0;
    // A proper prefix is at most maxLen - 1 bytes long: nothing earlier matters.
    for (let i = Math.max(0, end - this.maxLen + 1); i < end; i++) s = this.next(s, window[i]!);
    return this.holdDepth[s]!;
  }
}
