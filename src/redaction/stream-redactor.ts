// Streaming exact-value redaction: every byte-level occurrence of every secret is replaced by a marker,
// even when an occurrence is split across chunk boundaries. Leaf module: imports nothing from src/.

const EMPTY = Buffer.alloc(0);

const FIXED_MARKERS = ['[REDACTED]', '<redacted>', '***', '###'];
const BRACKETS: ReadonlyArray<readonly [string, string]> = [
  ['[', ']'],
  ['<', '>'],
  ['{', '}'],
  ['(', ')'],
  ['|', '|'],
  ['~', '~'],
];

export interface StreamRedactorOptions {
  /** Replacement text; must not be able to form a secret with its surroundings (checked). */
  marker?: string;
}

// Proof: an output occurrence of s touching a marker m is inside m, contains m, or overlaps one end of m;
// occurrences away from markers lie in raw input text, where every occurrence was already removed.
function markerConflicts(marker: Buffer, secret: Buffer): boolean {
  if (marker.length === 0) return true;
  if (marker.indexOf(secret) !== -1 || secret.indexOf(marker) !== -1) return true;
  const max = Math.min(secret.length - 1, marker.length);
  for (let k = 1; k <= max; k++) {
    // A proper suffix of the secret equal to a prefix of the marker.
    if (secret.compare(marker, 0, k, secret.length - k, secret.length) === 0) return true;
    // A proper prefix of the secret equal to a suffix of the marker.
    if (secret.compare(marker, marker.length - k, marker.length, 0, k) === 0) return true;
  }
  return false;
}

function* markerCandidates(secrets: readonly Buffer[], preferred: string): Generator<string> {
  yield preferred;
  yield* FIXED_MARKERS;
  for (let n = 1; n <= 16; n++) {
    for (const [open, close] of BRACKETS) yield `${open}REDACTED-${n}${close}`;
  }
  // A marker made only of bytes absent from every secret cannot overlap any secret at all.
  const used = new Uint8Array(256);
  for (const s of secrets) for (const b of s) used[b] = 1;
  for (let b = 0x21; b < 0x7f; b++) if (used[b] === 0) yield String.fromCharCode(b).repeat(3);
  // Non-ASCII blocks survive secret sets that use every printable ASCII byte.
  yield* ['\u2588\u2588\u2588', '\u27e6REDACTED\u27e7', '\u2591\u2591\u2591', '\u00a4\u00a4\u00a4'];
  // Last resort for adversarial secret sets: every printable pair.
  for (let a = 0x21; a < 0x7f; a++) {
    for (let b = 0x21; b < 0x7f; b++) yield String.fromCharCode(a, b);
  }
}

/** The first candidate marker that no secret can overlap; throws if none fits. */
export function chooseMarker(secrets: Buffer[], preferred = '[REDACTED]'): string {
  const live = secrets.filter((s) => s.length > 0);
  for (const candidate of markerCandidates(live, preferred)) {
    const m = Buffer.from(candidate, 'utf8');
    if (!live.some((s) => markerConflicts(m, s))) return candidate;
  }
  throw new Error('chooseMarker: no replacement marker is safe for this set of secrets');
}

export class StreamRedactor {
  readonly marker: string;
  private readonly markerBuf: Buffer;
  private readonly secrets: Buffer[];
  private readonly maxLen: number;
  /** Secrets indexed by first byte, to find a pending partial match at the end of a window quickly. */
  private readonly byFirst: Array<Buffer[] | undefined> = new Array(256);
  /** Raw bytes not yet finalised (a possible start of a secret), at most maxLen - 1. */
  private hold: Buffer = EMPTY;
  /** Absolute stream offset of hold[0]. */
  private holdStart = 0;
  /** Absolute offset up to which bytes were emitted or swallowed by a marker. */
  private emitPos = 0;
  /** Absolute end of the last redacted interval; -1 when none (an interval starting here merges). */
  private coverEnd = -1;

  constructor(secrets: Iterable<string | Buffer>, options: StreamRedactorOptions = {}) {
    const seen = new Set<string>();
    const list: Buffer[] = [];
    for (const s of secrets) {
      const buf = typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s);
      if (buf.length === 0) continue;
      const key = buf.toString('latin1');
      if (seen.has(key)) continue;
      seen.add(key);
      list.push(buf);
    }
    this.secrets = list;
    this.maxLen = list.reduce((m, s) => Math.max(m, s.length), 0);
    for (const s of list) (this.byFirst[s[0]!] ??= []).push(s);

    if (options.marker !== undefined) {
      const m = Buffer.from(options.marker, 'utf8');
      if (m.length === 0) throw new Error('StreamRedactor: the marker must not be empty');
      // The secret itself is never named in the error: it may end up in logs.
      const bad = list.findIndex((s) => markerConflicts(m, s));
      if (bad !== -1) {
        throw new Error(
          `StreamRedactor: marker ${JSON.stringify(options.marker)} conflicts with secret #${bad + 1}: ` +
            'it could form that secret together with surrounding text',
        );
      }
      this.marker = options.marker;
    } else {
      this.marker = chooseMarker(list);
    }
    this.markerBuf = Buffer.from(this.marker, 'utf8');
  }

  /** Redacts a chunk; returns what can be emitted now (may share memory with `chunk`). */
  push(chunk: Buffer): Buffer {
    if (this.secrets.length === 0) return chunk;
    if (chunk.length === 0) return EMPTY;
    // Only a non-empty hold-back costs a copy; it is usually empty or a few bytes.
    const window = this.hold.length === 0 ? chunk : Buffer.concat([this.hold, chunk]);
    return this.scan(window, false);
  }

  /** Emits the held-back bytes and ends the stream; a later push starts a new stream. */
  flush(): Buffer {
    if (this.secrets.length === 0) return EMPTY;
    const out = this.scan(this.hold, true);
    this.hold = EMPTY;
    this.holdStart = 0;
    this.emitPos = 0;
    this.coverEnd = -1;
    return out;
  }

  /** First window offset where the remaining bytes are a proper prefix of some secret, else the length. */
  private pendingStart(window: Buffer): number {
    const n = window.length;
    for (let q = Math.max(0, n - this.maxLen + 1); q < n; q++) {
      const list = this.byFirst[window[q]!];
      if (list === undefined) continue;
      const rem = n - q;
      for (const s of list) {
        if (s.length > rem && window.compare(s, 0, rem, q, n) === 0) return q;
      }
    }
    return n;
  }

  private scan(window: Buffer, final: boolean): Buffer {
    const base = this.holdStart;
    // Bytes before `limit` are final: no occurrence that could cover them is still unknown.
    const limit = final ? window.length : this.pendingStart(window);

    let starts: number[] | undefined;
    let ends: number[] | undefined;
    let contributors = 0;
    for (const s of this.secrets) {
      let idx = window.indexOf(s);
      if (idx === -1 || idx >= limit) continue;
      contributors++;
      starts ??= [];
      ends ??= [];
      // Overlapping occurrences of one secret are merged here already (step of 1 finds them all).
      let curStart = idx;
      let curEnd = idx + s.length;
      for (idx = window.indexOf(s, idx + 1); idx !== -1 && idx < limit; idx = window.indexOf(s, idx + 1)) {
        if (idx <= curEnd) {
          curEnd = idx + s.length;
        } else {
          starts.push(curStart);
          ends.push(curEnd);
          curStart = idx;
          curEnd = idx + s.length;
        }
      }
      starts.push(curStart);
      ends.push(curEnd);
    }

    let emit = this.emitPos - base;
    let coverEnd = this.coverEnd - base;
    const pieces: Buffer[] = [];
    if (starts !== undefined && ends !== undefined) {
      let order: number[] | undefined;
      if (contributors > 1) {
        order = starts.map((_, i) => i);
        const st = starts;
        order.sort((a, b) => st[a]! - st[b]!);
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
        if (q > emit) pieces.push(window.subarray(emit, q));
        pieces.push(this.markerBuf);
        coverEnd = e;
        emit = e;
      }
    }
    if (limit > emit) {
      pieces.push(window.subarray(emit, limit));
      emit = limit;
    }

    // Copy the (small) hold-back so it never pins a large caller or concat buffer.
    this.hold = limit < window.length ? Buffer.from(window.subarray(limit)) : EMPTY;
    this.holdStart = base + limit;
    this.emitPos = base + emit;
    this.coverEnd = base + coverEnd;

    if (pieces.length === 0) return EMPTY;
    if (pieces.length === 1) return pieces[0]!;
    return Buffer.concat(pieces);
  }
}
