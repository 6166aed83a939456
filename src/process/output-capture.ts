// Bounded capture of one child stream: raw byte count, redacted 0600 artifact file, redacted tail.

import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import { umaskNarrows } from './artifacts.js';
import { copyOf } from './pipe-reader.js';
import type { ChunkRedactor } from '../redaction/live-stream-redactor.js';
import type { StreamSummary } from './types.js';

export interface CaptureFailure {
  code: 'ARTIFACT_OPEN_FAILED' | 'ARTIFACT_WRITE_FAILED' | 'ARTIFACT_FLUSH_FAILED';
  message: string;
  path: string;
}

export interface StreamCaptureOptions {
  name: 'stdout' | 'stderr';
  /** Where the redacted stream is written; null for no artifact. */
  artifactPath: string | null;
  redactor: ChunkRedactor;
  /** Code points of the redacted stream kept as the tail. Default 12,000. */
  tailChars?: number;
  /** Live copy of the redacted stream. */
  onRedacted?: (chunk: Buffer) => void;
  /** Called once, with the first artifact failure (open failures are visible at once in `failure`). */
  onFailure?: (failure: CaptureFailure) => void;
  /** Called when the write backlog fell below the low-water mark after write() returned false. */
  onDrain?: () => void;
}

/** Above this many queued artifact bytes write() asks the reader to pause; below LOW it may resume. */
const BACKLOG_HIGH = 8 * 1024 * 1024;
const BACKLOG_LOW = 1024 * 1024;
/** Chunks smaller than this are copied into the tail rather than referenced. */
const SMALL_CHUNK = 4096;
/** A backlog below this many bytes waits up to COALESCE_MS for more before it is written. */
const COALESCE_BYTES = 64 * 1024;
const COALESCE_MS = 10;
/** iovecs per writev call (Linux IOV_MAX is 1024). */
const MAX_IOV = 1024;

const DEFAULT_TAIL_CHARS = 12_000;
// O_EXCL refuses anything already at the path (a planted file or symlink); O_NOFOLLOW is belt and braces.
const OPEN_FLAGS =
  fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;

function countLeadBytesScalar(buf: Buffer, from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if ((buf[i]! & 0xc0) !== 0x80) count++;
  return count;
}

/** Number of UTF-8 lead bytes (anything but 10xxxxxx), i.e. code points in valid UTF-8. */
function countLeadBytes(buf: Buffer): number {
  const n = buf.length;
  const off = buf.byteOffset;
  const head = Math.min(n, (4 - (off & 3)) & 3);
  const words = (n - head) >>> 2;
  let cont = 0;
  if (words > 0) {
    // Int32 lanes stay small integers in V8 (Uint32 values above 2^31 would become doubles).
    const a = new Int32Array(buf.buffer, off + head, words);
    const pairs = words & ~1;
    let w = 0;
    while (w < pairs) {
      // Per-byte lane counters: at most 254 increments before a lane could carry into the next.
      const end = w + 254 < pairs ? w + 254 : pairs;
      let acc = 0;
      for (; w < end; w += 2) {
        const x = a[w]!;
        const y = a[w + 1]!;
        // Bit 7 of each lane is set exactly for continuation bytes (b7 = 1, b6 = 0).
        acc = (acc + (((x & ~(x << 1)) >>> 7) & 0x01010101) + (((y & ~(y << 1)) >>> 7) & 0x01010101)) | 0;
      }
      cont += (acc & 0xff) + ((acc >>> 8) & 0xff) + ((acc >>> 16) & 0xff) + (acc >>> 24);
    }
    if (pairs < words) {
      const x = a[pairs]!;
      const m = ((x & ~(x << 1)) >>> 7) & 0x01010101;
      cont += (m & 0xff) + ((m >>> 8) & 0xff) + ((m >>> 16) & 0xff) + (m >>> 24);
    }
  }
  return countLeadBytesScalar(buf, 0, head) + (words * 4 - cont) + countLeadBytesScalar(buf, head + words * 4, n);
}

/** The last `n` code points of `s`, never splitting a surrogate pair. */
function lastCodePoints(s: string, n: number): { text: string; cut: boolean } {
  let i = s.length;
  let count = 0;
  while (i > 0 && count < n) {
    const c = s.charCodeAt(i - 1);
    if (c >= 0xdc00 && c <= 0xdfff && i >= 2) {
      const h = s.charCodeAt(i - 2);
      i -= h >= 0xd800 && h <= 0xdbff ? 2 : 1;
    } else {
      i -= 1;
    }
    count++;
  }
  return { text: i === 0 ? s : s.slice(i), cut: i > 0 };
}

/** The buffers left after the first `n` bytes (after a short write). */
function dropPrefix(bufs: Buffer[], n: number): Buffer[] {
  let i = 0;
  while (i < bufs.length && n >= bufs[i]!.length) n -= bufs[i++]!.length;
  const rest = bufs.slice(i);
  if (n > 0 && rest.length > 0) rest[0] = rest[0]!.subarray(n);
  return rest;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class StreamCapture {
  readonly name: 'stdout' | 'stderr';
  private readonly path: string | null;
  private readonly redactor: ChunkRedactor;
  private readonly tailChars: number;
  private readonly onRedacted: ((chunk: Buffer) => void) | undefined;
  private readonly onFailure: ((failure: CaptureFailure) => void) | undefined;
  private readonly onDrain: (() => void) | undefined;
  private fd: number | null = null;
  /** Redacted bytes waiting for the artifact; written by one writev at a time, off the main thread. */
  private queue: Buffer[] = [];
  private backlog = 0;
  /** Bytes ever put in the queue, and of those the bytes written (or dropped with a failed file). */
  private queued = 0;
  private written = 0;
  /** Lent chunks (see write), oldest first: each released once `written` reaches its `until`. */
  private loans: Array<{ until: number; release: () => void }> = [];
  private pumping: Promise<void> | null = null;
  /** Ends the pump's coalescing wait early (end(), or a backlog that grew past COALESCE_BYTES). */
  private flushNow: (() => void) | undefined;
  private paused = false;
  private ending: Promise<StreamSummary> | undefined;
  private firstFailure: CaptureFailure | undefined;
  private rawBytes = 0;
  private redactedBytes = 0;
  private chars = 0;
  /** Bytes kept for the tail: tailChars * 4 + 3, always enough for tailChars whole code points. */
  private readonly tailBytes: number;
  /**
   * The newest redacted chunks, by reference (no copy on the hot path); small chunks are copied so
   * a slice cannot pin a large shared allocation. Holds just over tailBytes.
   */
  private tailChunks: Buffer[] = [];
  private tailHeld = 0;
  private summary: StreamSummary | undefined;

  constructor(opts: StreamCaptureOptions) {
    this.name = opts.name;
    this.path = opts.artifactPath;
    this.redactor = opts.redactor;
    const tail = opts.tailChars ?? DEFAULT_TAIL_CHARS;
    this.tailChars = Number.isFinite(tail) && tail > 0 ? Math.floor(tail) : 0;
    this.onRedacted = opts.onRedacted;
    this.onFailure = opts.onFailure;
    this.onDrain = opts.onDrain;
    this.tailBytes = this.tailChars === 0 ? 0 : this.tailChars * 4 + 3;
    if (this.path !== null) {
      try {
        this.fd = fs.openSync(this.path, OPEN_FLAGS, 0o600);
        // O_EXCL made the file, so its mode is 0600 minus the umask; only a narrowing umask needs fixing.
        if (umaskNarrows(0o600)) fs.fchmodSync(this.fd, 0o600);
      } catch (err) {
        this.fail('ARTIFACT_OPEN_FAILED', err);
        this.dropFd();
      }
    }
  }

  /** The first artifact failure, if any; capture of counters and tail continues regardless. */
  get failure(): CaptureFailure | undefined {
    return this.firstFailure;
  }

  /**
   * Never throws: draining must continue until the process tree is reaped. Ignored after end().
   * Returns false when the artifact backlog is high: pause the source until onDrain.
   * With `release`, the chunk is lent (a reader's reused buffer, pipe-reader.ts): the capture keeps
   * views of it only until they are written, copies what it keeps longer (the tail, the live copy),
   * and calls `release` once, after the last write that could include its bytes.
   */
  write(chunk: Buffer, release?: () => void): boolean {
    if (this.summary !== undefined || this.ending !== undefined || chunk.length === 0) {
      release?.();
      return true;
    }
    this.rawBytes += chunk.length;
    this.accept(this.redactor.push(chunk), release !== undefined);
    if (release !== undefined) this.holdUntilWritten(release);
    if (this.backlog > BACKLOG_HIGH) this.paused = true;
    return !this.paused;
  }

  /** Flushes the redactor, waits for the artifact writes, closes the file and returns the summary; idempotent. */
  end(): Promise<StreamSummary> {
    this.ending ??= this.finish();
    return this.ending;
  }

  private async finish(): Promise<StreamSummary> {
    this.accept(this.redactor.flush());
    this.flushNow?.();
    while (this.pumping) await this.pumping;
    if (this.fd !== null) {
      const fd = this.fd;
      this.fd = null;
      try {
        this.closeFile(fd);
      } catch (err) {
        this.fail('ARTIFACT_FLUSH_FAILED', err);
      }
    }
    this.summary = this.buildSummary();
    return this.summary;
  }

  /** Writes buffers to the artifact; resolves with the bytes written (may be short). Overridable to inject faults in tests. */
  protected writeFile(fd: number, bufs: Buffer[]): Promise<number> {
    return new Promise((resolve, reject) => fs.writev(fd, bufs, (err, n) => (err ? reject(err) : resolve(n))));
  }

  /** Closes the artifact. Overridable to inject faults in tests. */
  protected closeFile(fd: number): void {
    fs.closeSync(fd);
  }

  /** `lent`: `out` may be a view of a lent chunk, which only the artifact queue may hold. */
  private accept(out: Buffer, lent = false): void {
    const n = out.length;
    if (n === 0) return;
    this.redactedBytes += n;
    this.chars += isAscii(out) ? n : countLeadBytes(out);
    this.keepTail(out, lent);
    if (this.fd !== null) {
      this.queue.push(out);
      this.backlog += n;
      this.queued += n;
      this.pumping ??= this.pump();
      if (this.backlog >= COALESCE_BYTES) this.flushNow?.();
    }
    if (this.onRedacted !== undefined) {
      try {
        this.onRedacted(lent ? copyOf(out) : out);
      } catch {
        // A failing live viewer must not stop the drain or the artifact.
      }
    }
  }

  /**
   * One writev in flight at a time, so reading the pipe overlaps with writing the file. A small
   * backlog waits up to COALESCE_MS for more (a shell printing lines is read one line per read:
   * one writev per line was the largest cost of 200 tasks' output on the event loop, decision 59);
   * end() cuts the wait short. Order and failure handling are unchanged: one queue, one writer.
   */
  private async pump(): Promise<void> {
    try {
      if (this.backlog < COALESCE_BYTES && this.ending === undefined) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            this.flushNow = undefined;
            resolve();
          }, COALESCE_MS);
          this.flushNow = () => {
            clearTimeout(t);
            this.flushNow = undefined;
            resolve();
          };
        });
      }
      while (this.queue.length > 0 && this.fd !== null) {
        const batch = this.queue.splice(0, MAX_IOV);
        let bytes = 0;
        for (const b of batch) bytes += b.length;
        await this.writeAll(this.fd, batch, bytes);
        this.backlog -= bytes;
        this.written += bytes;
        this.releaseWritten();
        if (this.paused && this.backlog < BACKLOG_LOW) {
          this.paused = false;
          this.onDrain?.();
        }
      }
    } finally {
      this.pumping = null;
      if (this.fd === null) {
        // Failed: nothing more reaches the file, and the reader must never stay paused.
        this.queue = [];
        this.backlog = 0;
        this.written = this.queued;
        this.releaseWritten();
        if (this.paused) {
          this.paused = false;
          this.onDrain?.();
        }
      }
    }
  }

  private async writeAll(fd: number, batch: Buffer[], bytes: number): Promise<void> {
    let done = 0;
    let bufs = batch;
    try {
      while (done < bytes) {
        const written = await this.writeFile(fd, bufs);
        // A zero-byte write on a regular file would loop forever: treat it as a failure.
        if (!(written > 0)) throw new Error(`write made no progress at byte ${done} of ${bytes}`);
        done += written;
        if (done < bytes) bufs = dropPrefix(bufs, written);
      }
    } catch (err) {
      this.fail('ARTIFACT_WRITE_FAILED', err);
      this.dropFd();
    }
  }

  /** A lent chunk is released once its last byte is written; nothing queued from it: at once. */
  private holdUntilWritten(release: () => void): void {
    if (this.written === this.queued) release();
    else this.loans.push({ until: this.queued, release });
  }

  private releaseWritten(): void {
    let i = 0;
    while (i < this.loans.length && this.loans[i]!.until <= this.written) this.loans[i++]!.release();
    if (i > 0) this.loans.splice(0, i);
  }

  private keepTail(buf: Buffer, lent: boolean): void {
    const cap = this.tailBytes;
    if (cap === 0) return;
    const piece = buf.length > cap ? buf.subarray(buf.length - cap) : buf;
    this.tailChunks.push(lent || piece.length < SMALL_CHUNK ? copyOf(piece) : piece);
    this.tailHeld += piece.length;
    // Drop whole chunks from the front while the rest still covers the window.
    while (this.tailChunks.length > 1 && this.tailHeld - this.tailChunks[0]!.length >= cap) {
      this.tailHeld -= this.tailChunks.shift()!.length;
    }
    // Many tiny chunks: fold them into one so the list stays short.
    if (this.tailChunks.length > 64) {
      const all = Buffer.concat(this.tailChunks);
      this.tailChunks = [all.subarray(Math.max(0, all.length - cap))];
      this.tailHeld = this.tailChunks[0]!.length;
    }
  }

  private buildSummary(): StreamSummary {
    const cap = this.tailBytes;
    const dropped = this.redactedBytes > cap;
    const all = Buffer.concat(this.tailChunks);
    const kept = all.length > cap ? all.subarray(all.length - cap) : all;
    let start = 0;
    // The window may begin inside a character whose lead byte was dropped: skip its continuation bytes.
    if (dropped) while (start < 3 && start < kept.length && (kept[start]! & 0xc0) === 0x80) start++;
    const { text, cut } = lastCodePoints(kept.toString('utf8', start), this.tailChars);
    return {
      tail: text,
      bytes: this.rawBytes,
      chars: this.chars,
      truncated: this.chars > this.tailChars || dropped || cut,
    };
  }

  private fail(code: CaptureFailure['code'], err: unknown): void {
    if (this.firstFailure !== undefined) return;
    this.firstFailure = { code, message: errorMessage(err), path: this.path ?? '' };
    try {
      this.onFailure?.(this.firstFailure);
    } catch {
      // The failure is recorded either way.
    }
  }

  private dropFd(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      this.closeFile(fd);
    } catch {
      // Already failing; the first failure is the one reported.
    }
  }
}
