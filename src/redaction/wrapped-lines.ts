// Encoded secrets that an encoder wrapped into lines: MIME base64 (76 columns), PEM and OpenSSL
// (64), `xxd -p` hex (60), with LF or CRLF. A line break inside an occurrence hides it from the
// exact match, so around such breaks the text is copied without them, the copy is searched with the
// same matcher, and what is found maps back to the original bytes, breaks included.
// A break is a "wrap break" only when the line before it is exactly 60, 64 or 76 base64-alphabet
// characters, as every line but the last of a wrapped block is; any other break still ends an
// occurrence. The line length rejects almost every other line before any byte is looked at. Offsets are window offsets (the hold-back and the chunk, not joined).
import type { PatternAutomaton } from './automaton.js';
import type { SampledMatcher } from './sampled-matcher.js';

export const WRAP_WIDTHS: readonly number[] = [60, 64, 76];
const MAX_WIDTH = 76;
const MIN_WIDTH = 60;
const LF = 10;
const CR = 13;

/** 1 for the standard base64 alphabet (hex digits included). */
const B64 = new Uint8Array(256);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/') B64[c.charCodeAt(0)] = 1;
const IS_WIDTH = new Uint8Array(MAX_WIDTH + 2);
for (const w of WRAP_WIDTHS) IS_WIDTH[w] = 1;

/** True for a pattern an encoder could wrap: base64 characters only (hex digits are some). */
export function isWrappable(pattern: Buffer): boolean {
  for (const x of pattern) if (B64[x] !== 1) return false;
  return pattern.length > 0;
}

function allBase64(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (B64[buf[i]!] !== 1) return false;
  return true;
}

/** The window `head` + `tail` read without joining them. */
function at(head: Buffer, tail: Buffer, i: number): number {
  return i < head.length ? head[i]! : tail[i - head.length]!;
}

export class WrappedLines {
  /** Base64 characters right before the window (capped at MAX_WIDTH + 1). */
  private priorRun = 0;
  /** When the byte right before the window is CR: the run before that CR; else -1. */
  private priorCrRun = -1;
  /** Bytes of the current line right before the window (capped at MAX_WIDTH + 2). */
  private priorLine = 0;
  /** Flat [start, end) pairs of the wrap breaks in the current window, in order. */
  readonly breaks: number[] = [];
  /** Reused for the copies without breaks (they are short: a few lines). */
  private scratch = Buffer.alloc(0);
  private readonly segCopy: number[] = [];
  private readonly segWin: number[] = [];

  reset(): void {
    this.priorRun = 0;
    this.priorCrRun = -1;
    this.priorLine = 0;
    this.breaks.length = 0;
  }

  /** Takes over another stream's line state (a redactor that replaces it mid-stream). */
  continueFrom(other: WrappedLines): void {
    this.priorRun = other.priorRun;
    this.priorCrRun = other.priorCrRun;
    this.priorLine = other.priorLine;
  }

  /** Base64 characters ending right before window offset `end` (-1: before the CR that precedes the window). */
  private runBefore(head: Buffer, tail: Buffer, end: number): number {
    if (end < 0) return this.priorCrRun < 0 ? 0 : this.priorCrRun;
    let k = 0;
    let i = end - 1;
    while (i >= 0 && k <= MAX_WIDTH && B64[at(head, tail, i)] === 1) {
      k++;
      i--;
    }
    return i < 0 ? Math.min(MAX_WIDTH + 1, k + this.priorRun) : k;
  }

  /** Finds the wrap breaks of the window into `breaks`. */
  findBreaks(head: Buffer, tail: Buffer): void {
    const breaks = this.breaks;
    breaks.length = 0;
    const h = head.length;
    // Window offset where the current line starts (negative: before the window).
    let lineStart = -this.priorLine;
    // The hold-back is short: read through at(), and so is the first line of the chunk.
    for (let p = head.indexOf(LF); p !== -1; p = head.indexOf(LF, p + 1)) {
      this.classify(head, tail, lineStart, p);
      lineStart = p + 1;
    }
    let j = tail.indexOf(LF);
    if (j === -1) return;
    this.classify(head, tail, lineStart, h + j);
    lineStart = h + j + 1;
    // The chunk itself, in its own offsets.
    for (j = tail.indexOf(LF, j + 1); j !== -1; j = tail.indexOf(LF, j + 1)) {
      const start = lineStart - h;
      lineStart = h + j + 1;
      let len = j - start;
      if (len < MIN_WIDTH || len > MAX_WIDTH + 1) continue;
      const cr = tail[j - 1] === CR;
      if (cr) len--;
      if (IS_WIDTH[len] === 1 && allBase64(tail, start, start + len)) breaks.push(h + start + len, h + j + 1);
    }
  }

  /** Adds the break at window offset p (an LF) when the line from lineStart before it is a wrapped one. */
  private classify(head: Buffer, tail: Buffer, lineStart: number, p: number): void {
    const cr = p > 0 ? at(head, tail, p - 1) === CR : this.priorCrRun >= 0;
    const runEnd = cr ? p - 1 : p;
    const len = runEnd - lineStart;
    if (len > MAX_WIDTH || IS_WIDTH[len] !== 1) return;
    if (this.runBefore(head, tail, runEnd) === len) this.breaks.push(Math.max(0, runEnd), p + 1);
  }

  /** Records the line state at window offset `limit`, where the next window starts. */
  advance(head: Buffer, tail: Buffer, limit: number): void {
    if (limit === 0) return;
    const run = this.runBefore(head, tail, limit);
    const crRun = at(head, tail, limit - 1) === CR ? this.runBefore(head, tail, limit - 1) : -1;
    let line = 0;
    while (line < MAX_WIDTH + 2 && line < limit && at(head, tail, limit - 1 - line) !== LF) line++;
    if (line === limit) line = Math.min(MAX_WIDTH + 2, line + this.priorLine);
    this.priorRun = run;
    this.priorCrRun = crRun;
    this.priorLine = line;
  }

  /**
   * The first window offset that may start an occurrence not yet complete once wrap breaks are
   * removed (a trailing CR counts as the start of one); the window length when none can.
   */
  pendingStart(head: Buffer, tail: Buffer, automaton: PatternAutomaton): number {
    const n = head.length + tail.length;
    const breaks = this.breaks;
    const lastIsCr = n > 0 && at(head, tail, n - 1) === CR;
    const want = automaton.maxLen - 1;
    // Without a wrap break among the last `want` bytes, the plain hold-back already covers it.
    if (!lastIsCr && (breaks.length === 0 || breaks[breaks.length - 1]! < n - want)) return n;
    const bytes = Buffer.allocUnsafe(Math.max(want, 1));
    const pos = new Int32Array(Math.max(want, 1));
    let len = 0;
    let b = breaks.length - 2;
    // Collected backwards from the end, then read forwards.
    for (let i = lastIsCr ? n - 2 : n - 1; i >= 0 && len < want; i--) {
      while (b >= 0 && breaks[b]! > i) b -= 2;
      if (b >= 0 && i < breaks[b + 1]!) {
        i = breaks[b]!;
        continue;
      }
      bytes[want - 1 - len] = at(head, tail, i);
      pos[want - 1 - len] = i;
      len++;
    }
    const from = want - len;
    const k = automaton.pendingLength(bytes.subarray(from, want), len);
    // With nothing pending before it, a trailing CR cannot start a pattern of its own.
    return k === 0 ? n : pos[want - k]!;
  }

  /**
   * Calls onMatch(start, end) for every occurrence of a base64-alphabet pattern (`matcher`, longest
   * `maxLen`) that crosses a wrap break, lies wholly in the window and starts before `limit`; start
   * and end are window offsets, the breaks inside included. Only the base64 run around a break is
   * copied: an occurrence crossing it is made of base64 characters and breaks alone.
   */
  search(head: Buffer, tail: Buffer, limit: number, matcher: SampledMatcher, maxLen: number, onMatch: (start: number, end: number) => void): void {
    const breaks = this.breaks;
    const n = head.length + tail.length;
    let b = 0;
    while (b < breaks.length) {
      // The line before a wrap break ends in a base64 run of at most MAX_WIDTH characters.
      let from = breaks[b]!;
      const floor = Math.max(0, from - (maxLen - 1));
      while (from > floor && B64[at(head, tail, from - 1)] === 1) from--;
      // Forward through the run, across further wrap breaks, up to one pattern length past the last.
      // The line before a wrap break is all base64 and starts where the previous break ends, so
      // the walk jumps from break to break and reads bytes only after the last one.
      const first = b;
      let last = b;
      let to = breaks[b + 1]!;
      let cap = Math.min(n, to + maxLen - 1);
      while (last + 2 < breaks.length && breaks[last + 2]! < cap) {
        last += 2;
        to = breaks[last + 1]!;
        cap = Math.min(n, to + maxLen - 1);
      }
      while (to < cap && B64[at(head, tail, to)] === 1) to++;
      b = last + 2;
      // One break with nothing base64 after it (yet): nothing crosses it in this window.
      if (first === last && to === breaks[last + 1]) continue;
      this.searchRegion(head, tail, from, to, first, last, limit, matcher, onMatch);
    }
  }

  /** Copies window[from, to) without the breaks first..last (flat indices) and searches the copy. */
  private searchRegion(
    head: Buffer,
    tail: Buffer,
    from: number,
    to: number,
    first: number,
    last: number,
    limit: number,
    matcher: SampledMatcher,
    onMatch: (start: number, end: number) => void,
  ): void {
    const breaks = this.breaks;
    if (this.scratch.length < to - from) this.scratch = Buffer.alloc(2 * (to - from));
    const copy = this.scratch;
    // Segment i covers copy offsets [segCopy[i], segCopy[i + 1]) and starts at window offset segWin[i].
    const segCopy = this.segCopy;
    const segWin = this.segWin;
    segCopy.length = 0;
    segWin.length = 0;
    let len = 0;
    let copyLimit = 0;
    let at0 = from;
    for (let k = first; k <= last + 2; k += 2) {
      const end = k <= last ? breaks[k]! : to;
      segCopy.push(len);
      segWin.push(at0);
      len += copyWindow(head, tail, at0, end, copy, len);
      if (at0 < limit) copyLimit = len - Math.max(0, end - limit);
      if (k <= last) at0 = breaks[k + 1]!;
    }
    segCopy.push(len);
    const toWindow = (c: number): number => {
      let i = 0;
      while (segCopy[i + 1]! <= c) i++;
      return segWin[i]! + (c - segCopy[i]!);
    };
    matcher.find(copy.subarray(0, len), copyLimit, (s, e) => {
      const start = toWindow(s);
      const end = toWindow(e - 1) + 1;
      // Occurrences without a break in them are found by the plain search.
      if (end - start !== e - s) onMatch(start, end);
    });
  }
}

/** Copies window[from, to) into dst at offset `at`; returns the byte count. */
function copyWindow(head: Buffer, tail: Buffer, from: number, to: number, dst: Buffer, at: number): number {
  const h = head.length;
  let n = 0;
  if (from < h) n += head.copy(dst, at, from, Math.min(to, h));
  if (to > h) n += tail.copy(dst, at + n, Math.max(from, h) - h, to - h);
  return n;
}
