// A compiled set of secrets: every form of every secret, the matcher over them and the marker that
// none of them can touch. Compile once per effect; stream redactors and text views share it.
import { PatternAutomaton } from './automaton.js';
import { SampledMatcher } from './sampled-matcher.js';
import { RedactionError } from './errors.js';
import { chooseMarkerForPatterns, markerConflicts } from './marker.js';
import { labelledSecretForms, type SecretFormKind } from './secret-forms.js';
import { isWrappable } from './wrapped-lines.js';

export interface RedactionOptions {
  /** Replacement text; must not be able to form any pattern with its surroundings (checked). */
  marker?: string;
}

/** Compiled sets kept by shared(), least recently used first. */
const SHARED = new Map<string, RedactionPatterns>();
const SHARED_MAX = 16;
let EMPTY: RedactionPatterns | undefined;

export class RedactionPatterns {
  readonly marker: string;
  readonly markerBytes: Buffer;
  /** Distinct non-empty secrets. */
  readonly secretCount: number;
  /** Every byte pattern removed: each secret's raw bytes and its encoded forms, deduplicated. */
  readonly patterns: readonly Buffer[];
  /** Finds the occurrences; null when there is nothing to redact. */
  readonly matcher: SampledMatcher | null;
  /** Decides the hold-back at the end of a chunk; null when there is nothing to redact. */
  readonly automaton: PatternAutomaton | null;
  /** Finds the patterns made only of base64 characters (base64, hex) across wrapped lines. */
  readonly wrappable: SampledMatcher | null;
  /** The longest of those patterns, in bytes. */
  readonly wrappableMaxLen: number;

  static compile(secrets: Iterable<string | Buffer>, options: RedactionOptions = {}): RedactionPatterns {
    return new RedactionPatterns(secrets, options);
  }

  /**
   * compile(secrets) for a set of text secrets, shared by every caller with the same values (in the
   * same order): the patterns are immutable, and compiling costs milliseconds with many secrets
   * while a session's set changes only when a new secret is resolved. Keyed by content, never by
   * the array's identity, so a caller that changed its array gets its own compile.
   */
  static shared(secrets: readonly string[]): RedactionPatterns {
    if (secrets.length === 0) return (EMPTY ??= new RedactionPatterns([], {}));
    const key = JSON.stringify(secrets);
    let p = SHARED.get(key);
    if (p) {
      // Most recently used last.
      SHARED.delete(key);
      SHARED.set(key, p);
      return p;
    }
    p = new RedactionPatterns(secrets, {});
    SHARED.set(key, p);
    if (SHARED.size > SHARED_MAX) SHARED.delete(SHARED.keys().next().value!);
    return p;
  }

  private constructor(secrets: Iterable<string | Buffer>, options: RedactionOptions) {
    const seenSecrets = new Set<string>();
    const seenPatterns = new Set<string>();
    const patterns: Buffer[] = [];
    const owner: Array<{ secret: number; kind: SecretFormKind }> = [];
    for (const s of secrets) {
      const buf = typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s);
      if (buf.length === 0) continue;
      const key = buf.toString('latin1');
      if (seenSecrets.has(key)) continue;
      seenSecrets.add(key);
      for (const form of labelledSecretForms(buf)) {
        const fk = form.bytes.toString('latin1');
        if (seenPatterns.has(fk)) continue;
        seenPatterns.add(fk);
        patterns.push(form.bytes);
        owner.push({ secret: seenSecrets.size, kind: form.kind });
      }
    }
    this.secretCount = seenSecrets.size;
    this.patterns = patterns;
    // First, as it refuses oversized sets before any other work on them.
    this.automaton = patterns.length === 0 ? null : new PatternAutomaton(patterns);
    this.matcher = patterns.length === 0 ? null : new SampledMatcher(patterns);
    const wrappable = patterns.filter(isWrappable);
    this.wrappable = wrappable.length === 0 ? null : new SampledMatcher(wrappable);
    this.wrappableMaxLen = wrappable.reduce((m, p) => Math.max(m, p.length), 0);

    if (options.marker !== undefined) {
      const m = Buffer.from(options.marker, 'utf8');
      if (m.length === 0) {
        throw new RedactionError('REDACTION_MARKER_EMPTY', 'redaction: the marker must not be empty; omit it to get a safe default');
      }
      // The secret itself is never named: the message may end up in logs.
      const bad = patterns.findIndex((p) => markerConflicts(m, p));
      if (bad !== -1) {
        const { secret, kind } = owner[bad]!;
        throw new RedactionError(
          'REDACTION_MARKER_CONFLICT',
          `redaction: marker ${JSON.stringify(options.marker)} conflicts with secret #${secret}` +
            `${kind === 'raw' ? '' : ` (its ${kind} form)`}: it could form that secret together with ` +
            'surrounding text; choose another marker or omit it to get a safe one',
        );
      }
      this.marker = options.marker;
    } else {
      this.marker = chooseMarkerForPatterns(patterns);
    }
    this.markerBytes = Buffer.from(this.marker, 'utf8');

  }
}
