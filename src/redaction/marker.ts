// Choosing the replacement marker. Output is raw input text with some runs replaced by the marker;
// a pattern occurrence lying wholly in raw text was in the input and so was removed. Any other
// occurrence touches a marker: it lies inside the marker, contains it, or overlaps one of its ends.
// A marker that none of the patterns can touch in those ways can therefore never form one.
import { RedactionError } from './errors.js';
import { secretForms } from './secret-forms.js';

const FIXED_MARKERS = ['[REDACTED]', '<redacted>', '***', '###'];
const BRACKETS: ReadonlyArray<readonly [string, string]> = [
  ['[', ']'],
  ['<', '>'],
  ['{', '}'],
  ['(', ')'],
  ['|', '|'],
  ['~', '~'],
];

/** True when `pattern` could occur in output that places `marker` next to arbitrary text. */
export function markerConflicts(marker: Buffer, pattern: Buffer): boolean {
  if (marker.length === 0) return true;
  if (marker.indexOf(pattern) !== -1 || pattern.indexOf(marker) !== -1) return true;
  const max = Math.min(pattern.length - 1, marker.length);
  for (let k = 1; k <= max; k++) {
    // A proper suffix of the pattern equal to a prefix of the marker.
    if (pattern.compare(marker, 0, k, pattern.length - k, pattern.length) === 0) return true;
    // A proper prefix of the pattern equal to a suffix of the marker.
    if (pattern.compare(marker, marker.length - k, marker.length, 0, k) === 0) return true;
  }
  return false;
}

function* markerCandidates(patterns: readonly Buffer[], preferred: string): Generator<string> {
  yield preferred;
  yield* FIXED_MARKERS;
  for (let n = 1; n <= 16; n++) {
    for (const [open, close] of BRACKETS) yield `${open}REDACTED-${n}${close}`;
  }
  // A marker made only of bytes absent from every pattern cannot overlap any pattern at all.
  const used = new Uint8Array(256);
  for (const p of patterns) for (const b of p) used[b] = 1;
  for (let b = 0x21; b < 0x7f; b++) if (used[b] === 0) yield String.fromCharCode(b).repeat(3);
  // Non-ASCII blocks survive pattern sets that use every printable ASCII byte.
  yield* ['\u2588\u2588\u2588', '\u27e6REDACTED\u27e7', '\u2591\u2591\u2591', '\u00a4\u00a4\u00a4'];
  // Last resort for adversarial sets: every printable pair.
  for (let a = 0x21; a < 0x7f; a++) {
    for (let b = 0x21; b < 0x7f; b++) yield String.fromCharCode(a, b);
  }
}

/** The first candidate marker that no pattern can touch; throws REDACTION_NO_SAFE_MARKER if none fits. */
export function chooseMarkerForPatterns(patterns: readonly Buffer[], preferred = '[REDACTED]'): string {
  const live = patterns.filter((p) => p.length > 0);
  for (const candidate of markerCandidates(live, preferred)) {
    const m = Buffer.from(candidate, 'utf8');
    if (!live.some((p) => markerConflicts(m, p))) return candidate;
  }
  throw new RedactionError(
    'REDACTION_NO_SAFE_MARKER',
    'redaction: no replacement marker is safe for this set of secrets and their encoded forms; ' +
      'pass a marker made of bytes that no secret contains',
  );
}

/** The marker for a set of secrets, checked against every secret and every encoded form of it. */
export function chooseMarker(secrets: readonly Buffer[], preferred = '[REDACTED]'): string {
  return chooseMarkerForPatterns(secrets.flatMap((s) => secretForms(s)), preferred);
}
