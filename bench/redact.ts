// Benchmark — redact: 50 random secrets (16–48 bytes) with all their encoded forms, over 256 MiB
// of log-like output (with wrapped base64 and hex blocks) in 64 KiB chunks, through one StreamRedactor; against a plain copy of the
// same chunks (Buffer.from each), measured in the same run, trials interleaved.
import { RedactionPatterns, secretForms, StreamRedactor } from '../src/redaction/index.js';
import type { BenchContext } from './common.js';
import { collectGarbage, progress } from './common.js';
import { median, msSince, round, roundSummary, summarize, type Summary } from './stats.js';

const MIB = 1024 * 1024;
const CHUNK = 64 * 1024;
export const REDACT_TARGET_MBS = 200;

export interface RedactResult {
  bytes: number;
  chunkBytes: number;
  trials: number;
  secrets: number;
  patterns: number;
  /** Forms planted in the corpus per pass, and markers the redactor emitted for one pass. */
  planted: number;
  markers: number;
  compileMs: Summary;
  redactorMBs: Summary;
  copyMBs: Summary;
  /** Median of per-trial redactor / copy throughput. */
  ratio: number;
  target: number;
  pass: boolean;
}

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

/** Secrets shaped like real ones: API tokens, passwords with punctuation and spaces, some non-ASCII. */
export function makeSecrets(rand: () => number): string[] {
  const alnum = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const punct = `${alnum}-_/+=.:@! `;
  const out: string[] = [];
  for (let i = 0; i < 50; i++) {
    const len = 16 + Math.floor(rand() * 33);
    const alphabet = i % 5 === 0 ? punct : alnum;
    let s = i % 7 === 0 ? 'sk-live-' : '';
    while (Buffer.byteLength(s) < len) s += i % 10 === 3 && rand() < 0.2 ? 'é' : alphabet[Math.floor(rand() * alphabet.length)];
    out.push(s);
  }
  return out;
}

/** `text` as MIME (76 columns) or PEM (64) lines. */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  for (let i = 0; i < text.length; i += width) lines.push(text.slice(i, i + width));
  return lines.join('\n');
}

/**
 * Log-like text (plain lines, JSON lines, URLs, base64 blobs, wrapped base64 and hex blocks) with
 * secret forms sprinkled in.
 */
export function makeCorpus(rand: () => number, secrets: string[], bytes: number): { corpus: Buffer; planted: number } {
  const words = 'request handled worker queue retry upstream timeout cache miss user session token refresh ok failed connected closing'.split(' ');
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const hex = (n: number): string => Array.from({ length: n }, () => Math.floor(rand() * 16).toString(16)).join('');
  const lines: string[] = [];
  let size = 0;
  let planted = 0;
  while (size < bytes) {
    let line: string;
    const kind = rand();
    if (kind < 0.5) line = `2026-11-30T12:${hex(2)}Z INFO  ${pick(words)} ${pick(words)} id=${hex(16)} dur=${Math.floor(rand() * 900)}ms`;
    else if (kind < 0.75) line = JSON.stringify({ level: 'debug', msg: `${pick(words)} ${pick(words)}`, path: `/api/v1/${pick(words)}/${hex(8)}`, n: Math.floor(rand() * 1e6) });
    else if (kind < 0.9) line = `GET https://api.example.com/v2/${pick(words)}?q=${pick(words)}+${pick(words)}&page=${Math.floor(rand() * 50)} 200`;
    else if (kind < 0.98) line = `payload: ${Buffer.from(Array.from({ length: 48 }, () => Math.floor(rand() * 256))).toString('base64')}`;
    else {
      // A wrapped block (an attachment, a key, `xxd -p`), every third one with a secret inside.
      const bytes = Buffer.from(Array.from({ length: 120 + Math.floor(rand() * 400) }, () => Math.floor(rand() * 256)));
      const withSecret = rand() < 0.33 ? Buffer.concat([bytes.subarray(0, 100), Buffer.from(pick(secrets)), bytes.subarray(100)]) : bytes;
      if (withSecret !== bytes) planted++;
      const r = rand();
      line = r < 0.5 ? wrap(withSecret.toString('base64'), 76) : r < 0.8 ? wrap(withSecret.toString('base64'), 64) : wrap(withSecret.toString('hex'), 60);
    }
    // About one secret form per 4 KiB of output.
    if (rand() < 0.025) {
      const secret = pick(secrets);
      const forms = secretForms(Buffer.from(secret));
      const how = rand();
      if (how < 0.3) line += ` token=${secret}`;
      else if (how < 0.6) line += ` auth=${Buffer.concat([Buffer.from(hex(Math.floor(rand() * 6))), Buffer.from(secret), Buffer.from('!')]).toString('base64')}`;
      else line += ` x=${pick(forms).toString('latin1')}`;
      planted++;
    }
    lines.push(line);
    size += line.length + 1;
  }
  return { corpus: Buffer.from(`${lines.join('\n')}\n`, 'latin1').subarray(0, bytes), planted };
}

export async function runRedact(ctx: BenchContext): Promise<RedactResult> {
  const quick = ctx.options.quick;
  const total = quick ? 32 * MIB : 256 * MIB;
  const corpusBytes = 16 * MIB;
  const trials = quick ? 3 : 7;
  const rand = mulberry32(0x5ec7e75);
  const secrets = makeSecrets(rand);
  progress(`redact: building a ${corpusBytes / MIB} MiB corpus with 50 secrets`);
  const { corpus, planted } = makeCorpus(rand, secrets, corpusBytes);
  const chunks: Buffer[] = [];
  for (let o = 0; o < corpus.length; o += CHUNK) chunks.push(corpus.subarray(o, o + CHUNK));
  const reps = total / corpusBytes;

  // Correctness first, untimed: one pass over the corpus leaves no pattern and emits markers.
  const compiled = RedactionPatterns.compile(secrets);
  const check = new StreamRedactor(compiled);
  const once = Buffer.concat([...chunks.map((c) => Buffer.from(check.push(c))), check.flush()]);
  for (const p of compiled.patterns) if (once.includes(p)) throw new Error('redact bench: a secret form survived redaction');
  const unwrapped = Buffer.from(once.toString('latin1').replace(/\n/g, ''), 'latin1');
  for (const p of compiled.patterns) {
    if (/^[A-Za-z0-9+/]+$/.test(p.toString('latin1')) && unwrapped.includes(p)) throw new Error('redact bench: a wrapped secret form survived redaction');
  }
  let markers = 0;
  for (let i = once.indexOf(compiled.markerBytes); i !== -1; i = once.indexOf(compiled.markerBytes, i + 1)) markers++;
  if (markers === 0) throw new Error('redact bench: the corpus produced no redaction at all');

  progress(`redact: ${trials} interleaved trials of ${total / MIB} MiB (redactor, plain copy), ${compiled.patterns.length} patterns`);
  const compileMs: number[] = [];
  const redactorMBs: number[] = [];
  const copyMBs: number[] = [];
  let sink = 0;
  // Warm-up: JIT of both loops.
  for (const c of chunks.slice(0, 64)) sink += new StreamRedactor(compiled).push(c).length + Buffer.from(c).length;
  for (let t = 0; t < trials; t++) {
    collectGarbage();
    let t0 = process.hrtime.bigint();
    const fresh = RedactionPatterns.compile(secrets);
    compileMs.push(msSince(t0));
    const r = new StreamRedactor(fresh);
    t0 = process.hrtime.bigint();
    for (let k = 0; k < reps; k++) for (const c of chunks) sink += r.push(c).length;
    sink += r.flush().length;
    redactorMBs.push(total / 1e6 / (msSince(t0) / 1000));

    collectGarbage();
    t0 = process.hrtime.bigint();
    for (let k = 0; k < reps; k++) for (const c of chunks) sink += Buffer.from(c).length;
    copyMBs.push(total / 1e6 / (msSince(t0) / 1000));
  }
  if (sink === 0) throw new Error('redact bench: nothing was produced');
  const ratio = median(redactorMBs.map((x, i) => x / copyMBs[i]!));
  const red = summarize(redactorMBs);
  return {
    bytes: total,
    chunkBytes: CHUNK,
    trials,
    secrets: secrets.length,
    patterns: compiled.patterns.length,
    planted,
    markers,
    compileMs: roundSummary(summarize(compileMs), 2),
    redactorMBs: roundSummary(red, 1),
    copyMBs: roundSummary(summarize(copyMBs), 1),
    ratio: round(ratio, 4),
    target: REDACT_TARGET_MBS,
    pass: red.median >= REDACT_TARGET_MBS,
  };
}
