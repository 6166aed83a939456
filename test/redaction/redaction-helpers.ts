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
