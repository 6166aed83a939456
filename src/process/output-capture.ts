// Bounded capture of one child stream: raw byte count, redacted 0600 artifact file, redacted tail.

import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import { umaskNarrows } from './artifacts.js';
import type { StreamRedactor } from '../redaction/stream-redactor.js';
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
  redactor: StreamRedactor;
  /** Code points of the redacted stream kept as the tail. Default 12,000. */
  tailChars?: number;
  /** Live copy of the redacted stream. */
  onRedacted?: (chunk: Buffer) => void;
}

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

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class StreamCapture {
  readonly name: 'stdout' | 'stderr';
  private readonly path: string | null;
  private readonly redactor: StreamRedactor;
  private readonly tailChars: number;
  private readonly onRedacted: ((chunk: Buffer) => void) | undefined;
  private fd: number | null = null;
  private firstFailure: CaptureFailure | undefined;
  private rawBytes = 0;
  private redactedBytes = 0;
  private chars = 0;
  /** Ring of the last tailChars * 4 + 3 redacted bytes: always enough for tailChars whole code points. */
  private readonly ring: Buffer;
  private ringPos = 0;
  private summary: StreamSummary | undefined;

  constructor(opts: StreamCaptureOptions) {
    this.name = opts.name;
    this.path = opts.artifactPath;
    this.redactor = opts.redactor;
    const tail = opts.tailChars ?? DEFAULT_TAIL_CHARS;
    this.tailChars = Number.isFinite(tail) && tail > 0 ? Math.floor(tail) : 0;
    this.onRedacted = opts.onRedacted;
    this.ring = Buffer.alloc(this.tailChars === 0 ? 0 : this.tailChars * 4 + 3);
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

  /** Never throws: draining must continue until the process tree is reaped. Ignored after end(). */
  write(chunk: Buffer): void {
    if (this.summary !== undefined || chunk.length === 0) return;
    this.rawBytes += chunk.length;
    this.accept(this.redactor.push(chunk));
  }

  /** Flushes the redactor, closes the artifact and returns the summary; idempotent. */
  end(): StreamSummary {
    if (this.summary !== undefined) return this.summary;
    this.accept(this.redactor.flush());
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

  /** Writes part of a buffer to the artifact; returns bytes written. Overridable to inject faults in tests. */
  protected writeFile(fd: number, buf: Buffer, offset: number, length: number): number {
    return fs.writeSync(fd, buf, offset, length);
  }

  /** Closes the artifact. Overridable to inject faults in tests. */
  protected closeFile(fd: number): void {
    fs.closeSync(fd);
  }

  private accept(out: Buffer): void {
    const n = out.length;
    if (n === 0) return;
    this.redactedBytes += n;
    this.chars += isAscii(out) ? n : countLeadBytes(out);
    this.keepTail(out);
    if (this.fd !== null) this.writeAll(this.fd, out);
    if (this.onRedacted !== undefined) {
      try {
        this.onRedacted(out);
      } catch {
        // A failing live viewer must not stop the drain or the artifact.
      }
    }
  }

  private writeAll(fd: number, buf: Buffer): void {
    let off = 0;
    try {
      while (off < buf.length) {
        const written = this.writeFile(fd, buf, off, buf.length - off);
        // A zero-byte write on a regular file would loop forever: treat it as a failure.
        if (!(written > 0)) throw new Error(`write made no progress at byte ${off} of ${buf.length}`);
        off += written;
      }
    } catch (err) {
      this.fail('ARTIFACT_WRITE_FAILED', err);
      this.dropFd();
    }
  }

  private keepTail(buf: Buffer): void {
    const cap = this.ring.length;
    if (cap === 0) return;
    if (buf.length >= cap) {
      buf.copy(this.ring, 0, buf.length - cap);
      this.ringPos = 0;
      return;
    }
    const first = Math.min(cap - this.ringPos, buf.length);
    buf.copy(this.ring, this.ringPos, 0, first);
    if (first < buf.length) buf.copy(this.ring, 0, first);
    this.ringPos = (this.ringPos + buf.length) % cap;
  }

  private buildSummary(): StreamSummary {
    const cap = this.ring.length;
    const dropped = this.redactedBytes > cap;
    let kept: Buffer;
    if (!dropped) kept = this.ring.subarray(0, this.redactedBytes);
    else kept = Buffer.concat([this.ring.subarray(this.ringPos), this.ring.subarray(0, this.ringPos)]);
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
