// Splits a byte stream into lines with a hard cap per line: an oversized line is dropped (its
// size reported) and reading resumes at the next newline, so a hostile CLI cannot make the
// supervisor buffer without bound.
export const DEFAULT_MAX_LINE_BYTES = 1024 * 1024;

export type SplitLine = { line: string } | { oversized: number };

export class BoundedLineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  /** Bytes of the current line dropped so far (> 0: we are skipping to the next newline). */
  private dropped = 0;

  constructor(private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES) {}

  push(chunk: Buffer): SplitLine[] {
    const out: SplitLine[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const piece = chunk.subarray(start, nl < 0 ? chunk.length : nl);
      this.take(piece);
      if (nl < 0) break;
      out.push(this.finish());
      start = nl + 1;
    }
    return out;
  }

  /** The last line when the stream ended without a newline (null if there is none). */
  end(): SplitLine | null {
    if (this.size === 0 && this.dropped === 0) return null;
    return this.finish();
  }

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.dropped > 0 || this.size + piece.length > this.maxLineBytes) {
      this.dropped += this.size + piece.length;
      this.parts = [];
      this.size = 0;
      return;
    }
    this.parts.push(Buffer.from(piece));
    this.size += piece.length;
  }

  private finish(): SplitLine {
    let r: SplitLine;
    if (this.dropped > 0) r = { oversized: this.dropped };
    else r = { line: Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '') };
    this.parts = [];
    this.size = 0;
    this.dropped = 0;
    return r;
  }
}
