// Streaming redaction: every occurrence of every secret and of its encoded forms (secret-forms.ts)
// is replaced by a marker, even when split across chunk boundaries or inside a multibyte character.
// Overlapping and adjacent occurrences merge into one marker. Leaf module: imports nothing from src/.
import { PatternAutomaton } from './automaton.js';
import { RedactionPatterns, type RedactionOptions } from './patterns.js';

export { chooseMarker } from './marker.js';

const EMPTY = Buffer.alloc(0);

export type StreamRedactorOptions = RedactionOptions;

export class StreamRedactor {
  readonly marker: string;
  /** The compiled secrets; share it with other redactors and with redactText for the same effect. */
  readonly compiled: RedactionPatterns;
  private readonly markerBuf: Buffer;
  private readonly automaton: PatternAutomaton | null;
  /** Automaton state after the last byte read. */
  private state = 0;
  /** Absolute stream offset of the next byte to read. */
  private pos = 0;
  /** Raw bytes [holdStart, pos) not yet emitted: at most the automaton's hold depth. */
  private hold: Buffer = EMPTY;
  private holdStart = 0;
  /** Bytes before this absolute offset were emitted or swallowed by a marker. */
  private emitPos = 0;
  /** End of the last emitted marker while no byte has followed it; -1 otherwise (a match up to here merges). */
  private coverEnd = -1;
  /** Matched intervals not yet emitted: sorted, disjoint and not adjacent. */
  private pendStart: number[] = [];
  private pendEnd: number[] = [];

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
    this.automaton = this.compiled.automaton;
  }

  /** Redacts a chunk; returns what can be emitted now (may share memory with `chunk`). */
  push(chunk: Buffer): Buffer {
    const a = this.automaton;
    if (a === null) return chunk;
    if (chunk.length === 0) return EMPTY;
    const chunkStart = this.pos;
    const n = chunk.length;
    const { delta, classOf, matchLen, shift } = a;
    let s = this.state;
    for (let i = 0; i < n; i++) {
      s = delta[(s << shift) | classOf[chunk[i]!]!]!;
      const len = matchLen[s]!;
      if (len !== 0) this.addMatch(chunkStart + i + 1 - len, chunkStart + i + 1);
    }
    this.state = s;
    this.pos = chunkStart + n;
    // A match not yet seen starts inside the last holdDepth bytes, so everything before is final.
    return this.emitUpTo(this.pos - a.holdDepth[s]!, chunk, chunkStart);
  }

  /** Emits the held-back bytes and ends the stream; a later push starts a new stream. */
  flush(): Buffer {
    if (this.automaton === null) return EMPTY;
    const out = this.emitUpTo(this.pos, EMPTY, this.pos);
    this.state = 0;
    this.pos = 0;
    this.hold = EMPTY;
    this.holdStart = 0;
    this.emitPos = 0;
    this.coverEnd = -1;
    return out;
  }

  /** Records a match [start, end); ends arrive in increasing order, starts in any order. */
  private addMatch(start: number, end: number): void {
    const ps = this.pendStart;
    const pe = this.pendEnd;
    // A long match can swallow several shorter ones found before it.
    while (pe.length > 0 && pe[pe.length - 1]! >= start) {
      const s = ps.pop()!;
      pe.pop();
      if (s < start) start = s;
    }
    if (pe.length === 0 && this.coverEnd >= 0 && start <= this.coverEnd) {
      // Overlapping or adjacent to the marker just emitted: extend it, emit nothing more.
      if (end > this.coverEnd) this.coverEnd = this.emitPos = end;
      return;
    }
    ps.push(start);
    pe.push(end);
  }

  private emitUpTo(final: number, chunk: Buffer, chunkStart: number): Buffer {
    const pieces: Buffer[] = [];
    const ps = this.pendStart;
    const pe = this.pendEnd;
    let emit = this.emitPos;
    let k = 0;
    // An interval that starts before `final` cannot grow backwards any more: its marker is due.
    for (; k < ps.length && ps[k]! < final; k++) {
      if (ps[k]! > emit) this.slice(pieces, emit, ps[k]!, chunk, chunkStart);
      pieces.push(this.markerBuf);
      emit = pe[k]!;
      this.coverEnd = emit;
    }
    if (k > 0) {
      ps.splice(0, k);
      pe.splice(0, k);
    }
    if (final > emit) {
      this.slice(pieces, emit, final, chunk, chunkStart);
      emit = final;
      this.coverEnd = -1;
    }
    this.emitPos = emit;
    // Copy the (small) hold-back so it never pins a large caller or concat buffer.
    const rest: Buffer[] = [];
    if (this.pos > emit) this.slice(rest, emit, this.pos, chunk, chunkStart);
    this.hold = rest.length === 0 ? EMPTY : Buffer.concat(rest);
    this.holdStart = emit;

    if (pieces.length === 0) return EMPTY;
    if (pieces.length === 1) return pieces[0]!;
    return Buffer.concat(pieces);
  }

  /** Appends raw bytes [from, to) (absolute) from the hold-back and/or the current chunk. */
  private slice(out: Buffer[], from: number, to: number, chunk: Buffer, chunkStart: number): void {
    if (from < chunkStart) out.push(this.hold.subarray(from - this.holdStart, Math.min(to, chunkStart) - this.holdStart));
    if (to > chunkStart) out.push(chunk.subarray(Math.max(from, chunkStart) - chunkStart, to - chunkStart));
  }
}
