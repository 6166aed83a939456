// Shared by the redaction tests: a one-shot brute-force reference, a seeded PRNG, streaming helpers.
import { StreamRedactor, type StreamRedactorOptions } from '../../src/redaction/stream-redactor.js';
import { secretForms } from '../../src/redaction/secret-forms.js';

export const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Streams `chunks` through a fresh redactor and returns everything it emitted. */
export function stream(secrets: Array<string | Buffer>, chunks: Buffer[], options: StreamRedactorOptions = {}): Buffer {
  const r = new StreamRedactor(secrets, options);
  const out: Buffer[] = chunks.map((c) => Buffer.from(r.push(c)));
  out.push(r.flush());
  return Buffer.concat(out);
}

/** Every pattern the redactor must remove for these secrets: each one's raw bytes and encoded forms. */
export function allPatterns(secrets: Array<string | Buffer>): Buffer[] {
  return secrets.map((s) => (typeof s === 'string' ? b(s) : s)).flatMap((s) => (s.length === 0 ? [] : secretForms(s)));
}

/** One-shot reference: cover every byte of every occurrence, one marker per contiguous covered run. */
export function reference(input: Buffer, patterns: Buffer[], marker: Buffer): Buffer {
  const covered = new Uint8Array(input.length);
  for (const s of patterns) {
    if (s.length === 0) continue;
    for (let i = 0; i + s.length <= input.length; i++) {
      if (input.compare(s, 0, s.length, i, i + s.length) === 0) covered.fill(1, i, i + s.length);
    }
  }
  return markCovered(input, covered, marker);
}

/** `input` with every run of covered bytes replaced by one marker. */
function markCovered(input: Buffer, covered: Uint8Array, marker: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < input.length) {
    let j = i;
    if (covered[i] === 1) {
      while (j < input.length && covered[j] === 1) j++;
      out.push(marker);
    } else {
      while (j < input.length && covered[j] === 0) j++;
      out.push(input.subarray(i, j));
    }
    i = j;
  }
  return Buffer.concat(out);
}

export function bytewise(input: Buffer): Buffer[] {
  return Array.from(input, (x) => Buffer.from([x]));
}

/** Deterministic PRNG (mulberry32) so fuzz failures reproduce. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Random chunk boundaries (lengths 0..maxLen) over `input`. */
export function randomChunks(input: Buffer, rand: () => number, maxLen: number): Buffer[] {
  const chunks: Buffer[] = [];
  let pos = 0;
  while (pos < input.length) {
    const len = Math.floor(rand() * (maxLen + 1));
    chunks.push(input.subarray(pos, pos + len));
    pos += len;
  }
  return chunks;
}

export function randomBuffer(rand: () => number, n: number, alphabet?: readonly number[]): Buffer {
  return Buffer.from(Array.from({ length: n }, () => (alphabet ? alphabet[Math.floor(rand() * alphabet.length)]! : Math.floor(rand() * 256))));
}

const WRAP_WIDTHS = new Set([60, 64, 76]);
const B64_BYTE = /[A-Za-z0-9+/]/;

/**
 * The reference with wrapped lines: a line break (LF or CRLF) counts as a wrap break when the line
 * before it is exactly 60, 64 or 76 base64-alphabet characters; occurrences are also
 * searched in the input with those breaks removed, and cover their original bytes, breaks included.
 */
export function wrapReference(input: Buffer, patterns: Buffer[], marker: Buffer): Buffer {
  const removed = new Uint8Array(input.length);
  for (let p = input.indexOf(10); p !== -1; p = input.indexOf(10, p + 1)) {
    const end = p > 0 && input[p - 1] === 13 ? p - 1 : p;
    const line = input.subarray(input.lastIndexOf(10, p - 1) + 1, end).toString('latin1');
    if (WRAP_WIDTHS.has(line.length) && [...line].every((c) => B64_BYTE.test(c))) removed.fill(1, end, p + 1);
  }
  const pos: number[] = [];
  for (let i = 0; i < input.length; i++) if (removed[i] === 0) pos.push(i);
  const stripped = Buffer.from(pos.map((i) => input[i]!));
  const covered = new Uint8Array(input.length);
  for (const s of patterns) {
    if (s.length === 0) continue;
    for (let i = 0; i + s.length <= input.length; i++) {
      if (input.compare(s, 0, s.length, i, i + s.length) === 0) covered.fill(1, i, i + s.length);
    }
    for (let i = 0; i + s.length <= stripped.length; i++) {
      if (stripped.compare(s, 0, s.length, i, i + s.length) === 0) covered.fill(1, pos[i]!, pos[i + s.length - 1]! + 1);
    }
  }
  return markCovered(input, covered, marker);
}

/** `text` broken into lines of `width` characters with `eol`, as MIME and PEM encoders write it. */
export function wrapLines(text: string, width: number, eol: string): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += width) lines.push(text.slice(i, i + width));
  return lines.join(eol) + eol;
}
