// One-shot redaction of a string, for the views built from an effect's result.
import { RedactionError } from './errors.js';
import { RedactionPatterns } from './patterns.js';
import { StreamRedactor } from './stream-redactor.js';

function redactBytes(compiled: RedactionPatterns, bytes: Buffer): Buffer {
  const r = new StreamRedactor(compiled);
  const head = r.push(bytes);
  const tail = r.flush();
  return tail.length === 0 ? head : Buffer.concat([head, tail]);
}

/**
 * `text` with every secret and every encoded form of it replaced by the marker. UTF-8 in, UTF-8
 * out. Pass the effect's compiled set (or a redactor, whose compiled set is used; its stream state
 * is not touched) to avoid compiling the secrets again. Throws RedactionError; a caller must then
 * publish a fixed failed result, never `text`.
 */
export function redactText(text: string, source: RedactionPatterns | StreamRedactor | Iterable<string | Buffer>): string {
  const compiled =
    source instanceof RedactionPatterns ? source : source instanceof StreamRedactor ? source.compiled : RedactionPatterns.compile(source);
  if (compiled.matcher === null) return text;
  let current = text;
  for (let pass = 0; pass < 3; pass++) {
    const out = redactBytes(compiled, Buffer.from(current, 'utf8'));
    const decoded = out.toString('utf8');
    // Valid UTF-8 decodes exactly: the string is the redacted bytes, which hold no pattern.
    if (Buffer.from(decoded, 'utf8').equals(out)) return decoded;
    // A secret that is part of a character left a broken one; the U+FFFD that decoding put in
    // its place is new text that could complete a pattern, so it is redacted again.
    current = decoded;
  }
  throw new RedactionError(
    'REDACTION_UNSTABLE_TEXT',
    'redaction: the redacted text did not settle into valid UTF-8 after 3 passes (a secret that is part of a character); ' +
      'publish a failed result instead of the text',
  );
}
