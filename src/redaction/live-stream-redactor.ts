// A stream redactor that follows a live secret set: before it emits the bytes of a chunk it checks
// the set's version and, when the set grew, switches to the compiled patterns of the new set. The
// old redactor's held-back bytes go through the new one with the chunk, so a secret that straddles
// the switch is found. Leaf module: imports nothing from src/.
import { RedactionError } from './errors.js';
import { RedactionPatterns } from './patterns.js';
import type { LiveRedaction } from './redaction-set.js';
import { StreamRedactor } from './stream-redactor.js';

const EMPTY = Buffer.alloc(0);

/** What a stream capture needs of a redactor. */
export interface ChunkRedactor {
  push(chunk: Buffer): Buffer;
  flush(): Buffer;
}

export class LiveStreamRedactor implements ChunkRedactor {
  private inner: StreamRedactor;
  private version: number;
  /** Set when a grown set could not be compiled safely: nothing more of the stream is emitted. */
  private withheld: string | null = null;
  private noticeSent = false;

  /** Throws RedactionError when the set as it is now cannot be redacted safely (nothing spawned yet). */
  constructor(private readonly source: LiveRedaction) {
    this.version = source.version;
    this.inner = new StreamRedactor(RedactionPatterns.shared(source.values()));
  }

  push(chunk: Buffer): Buffer {
    const carried = this.source.version !== this.version ? this.follow() : EMPTY;
    if (this.withheld !== null) return this.notice();
    if (carried.length === 0) return this.inner.push(chunk);
    // The held-back bytes first, then the chunk: the inner redactor finds an occurrence across them.
    return Buffer.concat([this.inner.push(carried), this.inner.push(chunk)]);
  }

  flush(): Buffer {
    const carried = this.source.version !== this.version ? this.follow() : EMPTY;
    if (this.withheld !== null) return this.notice();
    if (carried.length === 0) return this.inner.flush();
    return Buffer.concat([this.inner.push(carried), this.inner.flush()]);
  }

  /**
   * Switches to the grown set and returns the old redactor's held-back bytes, which the new one
   * examines before anything more is emitted.
   */
  private follow(): Buffer {
    this.version = this.source.version;
    let next: StreamRedactor;
    try {
      next = new StreamRedactor(RedactionPatterns.shared(this.source.values()));
    } catch (err) {
      // Never emit raw bytes: the rest of this stream is withheld (the one fixed failure).
      this.withheld = err instanceof RedactionError ? err.code : 'redaction failed';
      this.inner.takePending().fill(0);
      return EMPTY;
    }
    next.continueLinesFrom(this.inner);
    const pending = this.inner.takePending();
    this.inner = next;
    return pending;
  }

  private notice(): Buffer {
    if (this.noticeSent) return EMPTY;
    this.noticeSent = true;
    return Buffer.from(`\n[output withheld: a newly resolved secret could not be redacted safely (${this.withheld})]\n`);
  }
}
