// The one sanitiser for text a person reads
// (docs/decisions/0055-one-sanitiser-for-every-human-view.md). Untrusted text (a model's
// command line, a tool's output, a task's log) must not be able to redraw, hide or reorder what the
// operator sees: every control (C0, DEL, C1), format (Cf: zero-width, bidi embeddings, overrides and
// isolates, U+FEFF, tag characters), line/paragraph separator (U+2028/2029) and lone surrogate is
// shown as an escape, and the backslash itself is doubled, so the rendering is injective: two
// different texts never look the same. It sits with the redactor (the lowest layer that shapes
// text) so every view above can import it.

/** Characters that are never shown raw. `\p{Cs}` catches a lone surrogate under the `u` flag. */
const HIDDEN = /[\\\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;
const NAMED: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export interface DisplayOptions {
  /**
   * 'line' (default): one line; newline and tab are escaped too. 'log': a multi-line log, where a
   * newline and a tab stay (they only move the cursor forward); carriage return does not (it can
   * overwrite a line) and neither does anything else above.
   */
  readonly keep?: 'line' | 'log';
}

function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const cp = c.codePointAt(0)!;
  if (cp <= 0xff) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\u{${cp.toString(16)}}`;
}

/** `text` with every hidden character as a visible escape (see the header). */
export function displayText(text: string, options: DisplayOptions = {}): string {
  const log = options.keep === 'log';
  return String(text).replace(HIDDEN, (c) => (log && (c === '\n' || c === '\t') ? c : escapeOne(c)));
}

/**
 * A bounded, sanitised preview: at most `max` characters of the original text, escaped, and, when
 * cut, a note saying how much is missing and how to see it all (`more`, e.g. the command that
 * prints the whole text). A surrogate pair is never split.
 */
export function displayPreview(text: string, max: number, more?: string): string {
  const s = String(text);
  if (s.length <= max) return displayText(s);
  let end = max;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const rest = s.length - end;
  return `${displayText(s.slice(0, end))}… [cut: ${rest.toLocaleString('en-US')} more character${rest === 1 ? '' : 's'}${more ? `; ${more}` : ''}]`;
}

/**
 * A JSON line that is safe on a terminal and still the same JSON value: JSON.stringify leaves DEL,
 * C1, format characters and U+2028/2029 raw, so they are written as \uXXXX escapes (lossless).
 */
export function displayJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    const cp = c.codePointAt(0)!;
    if (cp <= 0xffff) return `\\u${cp.toString(16).padStart(4, '0')}`;
    // A format character beyond the BMP (tag characters): its surrogate pair, each escaped.
    const hi = Math.floor((cp - 0x10000) / 0x400) + 0xd800;
    const lo = ((cp - 0x10000) % 0x400) + 0xdc00;
    return `\\u${hi.toString(16)}\\u${lo.toString(16)}`;
  });
}
