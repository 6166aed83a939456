// Streaming redaction: every occurrence of every secret and of its encoded forms (secret-forms.ts)
// is replaced by a marker, even when split across chunk boundaries or inside a multibyte character.
// Overlapping and adjacent occurrences merge into one marker; so do occurrences that an encoder
// wrapped into lines (wrapped-lines.ts). Leaf module: imports nothing from src/.
import type { PatternAutomaton } from './automaton.js';
import { RedactionPatterns, type RedactionOptions } from './patterns.js';
import type { SampledMatcher } from './sampled-matcher.js';
import { WrappedLines } from './wrapped-lines.js';

export { chooseMarker } from './marker.js';

const EMPTY = Buffer.alloc(0);

export type StreamRedactorOptions = RedactionOptions;

export class StreamRedactor {
  readonly marker: string;
  /** The compiled secrets; share it with other redactors and with redactText for the same effect. */
  readonly compiled: RedactionPatterns;
  private readonly markerBuf: Buffer;
  private readonly matcher: SampledMatcher | null;
  private readonly automaton: PatternAutomaton | null;
  /** Raw bytes not yet final (they could start a pattern), at most the longest pattern minus one. */
  private hold: Buffer = EMPTY;
  /** Absolute stream offset of hold[0]. */
  private holdStart = 0;
  /** Absolute offset up to which bytes were emitted or swallowed by a marker. */
  private emitPos = 0;
  /** Absolute end of the last redacted interval; -1 when none (an interval starting here merges). */
  private coverEnd = -1;
  private readonly lines = new WrappedLines();
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** Added to the offsets the matcher reports (it searches the chunk apart from the hold-back). */
  private matchOffset = 0;
  private readonly onMatch = (start: number, end: number): void => {
    this.starts.push(start + this.matchOffset);
    this.ends.push(end + this.matchOffset);
  };
  private readonly onWrappedMatch = (start: number, end: number): void => {
    this.starts.push(start);
    this.ends.push(end);
  };

  constructor(secrets: Iterable<string | Buffer> | RedactionPatterns, options: StreamRedactorOptions = {}) {
    if (secrets instanceof RedactionPatterns) {
      if (options.marker !== undefined && options.marker !== secrets.marker) {
        throw new TypeError('StreamRedactor: a compiled secret set already has its marker; pass the marker to RedactionPatterns.compile');
      }
      this.compiled = secrets;
    } else {
      this.compiled = RedactionPatterns.compile(secrets, options);
    }
    this.marker = this.compiled.marker;
    this.markerBuf = this.compiled.markerBytes;
    this.matcher = this.compiled.matcher;
    this.automaton = this.compiled.automaton;
  }

  /** Redacts a chunk; returns what can be emitted now (may share memory with `chunk`). */
  push(chunk: Buffer): Buffer {
    if (this.matcher === null) return chunk;
    if (chunk.length === 0) return EMPTY;
    return this.scan(this.hold, chunk, false);
  }

  /**
   * The raw bytes held back and not yet emitted nor covered by a marker; the stream's state is
   * reset. A redactor for a larger secret set takes them over (LiveStreamRedactor) and examines
   * them again with the next chunk, so an occurrence straddling the switch is still found.
   */
  takePending(): Buffer {
    const from = Math.max(0, this.emitPos - this.holdStart);
    const pending = from < this.hold.length ? Buffer.from(this.hold.subarray(from)) : EMPTY;
    this.hold = EMPTY;
    this.holdStart = 0;
    this.emitPos = 0;
    this.coverEnd = -1;
    this.lines.reset();
    return pending;
  }

  /** Call before `other.takePending()` when this redactor takes over `other`'s stream. */
  continueLinesFrom(other: StreamRedactor): void {
    this.lines.continueFrom(other.lines);
  }

  /** Emits the held-back bytes and ends the stream; a later push starts a new stream. */
  flush(): Buffer {
    if (this.matcher === null) return EMPTY;
    const out = this.scan(EMPTY, this.hold, true);
    this.lines.reset();
    this.hold = EMPTY;
    this.holdStart = 0;
    this.emitPos = 0;
    this.coverEnd = -1;
    return out;
  }

  /**
   * Redacts the window `head` + `tail` (the hold-back and the new chunk) without joining them: a
   * 64 KiB copy per chunk cost more than the search. Offsets below are window offsets.
   */
  private scan(head: Buffer, tail: Buffer, final: boolean): Buffer {
    const h = head.length;
    const n = h + tail.length;
    const maxLen = this.automaton!.maxLen;
    // Only a window shorter than the longest pattern is joined (it is small).
    const short = h > 0 && tail.length <= maxLen;
    const joined = short ? Buffer.concat([head, tail]) : null;
    // Bytes before `limit` are final: an occurrence starting there lies wholly in this window (else
    // the rest of the window would be a proper prefix of a pattern), so it is found now.
    let limit = n;
    if (!final) {
      // Unjoined, the chunk alone is the window (no hold-back) or longer than any pattern prefix.
      const end = joined ?? tail;
      limit = n - this.automaton!.pendingLength(end, end.length);
    }
    const lines = this.lines;
    lines.findBreaks(head, tail);
    if (!final) limit = Math.min(limit, lines.pendingStart(head, tail, this.automaton!));
    if (joined !== null || h === 0) {
      this.matcher!.find(joined ?? tail, limit, this.onMatch);
    } else {
      // Occurrences starting in the hold-back end within maxLen bytes of it: search that seam alone.
      const seam = Buffer.concat([head, tail.subarray(0, Math.min(tail.length, maxLen))]);
      this.matcher!.find(seam, Math.min(h, limit), this.onMatch);
      if (limit > h) {
        this.matchOffset = h;
        this.matcher!.find(tail, limit - h, this.onMatch);
        this.matchOffset = 0;
      }
    }
    const wrappable = this.compiled.wrappable;
    if (lines.breaks.length > 0 && wrappable !== null) {
      lines.search(head, tail, limit, wrappable, this.compiled.wrappableMaxLen, this.onWrappedMatch);
    }
    lines.advance(head, tail, limit);
    return this.emit(head, tail, limit);
  }

  private emit(head: Buffer, tail: Buffer, limit: number): Buffer {
    const base = this.holdStart;
    const h = head.length;
    const n = h + tail.length;
    const starts = this.starts;
    const ends = this.ends;
    const pieces: Buffer[] = [];
    const slice = (from: number, to: number): void => {
      if (from < h) pieces.push(head.subarray(from, Math.min(to, h)));
      if (to > h) pieces.push(tail.subarray(Math.max(from, h) - h, to - h));
    };

    let emit = this.emitPos - base;
    let coverEnd = this.coverEnd - base;
    if (starts.length > 0) {
      let order: number[] | undefined;
      for (let k = 1; k < starts.length; k++) {
        if (starts[k]! < starts[k - 1]!) {
          order = starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]!);
          break;
        }
      }
      for (let k = 0; k < starts.length; k++) {
        const i = order === undefined ? k : order[k]!;
        const q = starts[i]!;
        const e = ends[i]!;
        if (q <= coverEnd) {
          // Overlapping or adjacent to the current marker: extend it, emit nothing.
          if (e > coverEnd) coverEnd = e;
          if (coverEnd > emit) emit = coverEnd;
          continue;
        }
        if (q > emit) slice(emit, q);
        pieces.push(this.markerBuf);
        coverEnd = e;
        emit = e;
      }
      starts.length = 0;
      ends.length = 0;
    }
    if (limit > emit) {
      slice(emit, limit);
      emit = limit;
    }

    // Copy the (small) hold-back so it never pins a large caller or concat buffer.
    if (limit < n) {
      const rest = pieces.length;
      slice(limit, n);
      this.hold = Buffer.concat(pieces.splice(rest));
    } else {
      this.hold = EMPTY;
    }
    this.holdStart = base + limit;
    this.emitPos = base + emit;
    this.coverEnd = base + coverEnd;

    if (pieces.length === 0) return EMPTY;
    if (pieces.length === 1) return pieces[0]!;
    return Buffer.concat(pieces);
  }
}
