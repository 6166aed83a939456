// What a command prints for a person is a view like any other (docs/security-model.md, *Views*):
// every secret the session has resolved so far is removed, with the same redactor the store's
// view uses, and what remains passes the one display sanitiser (src/redaction/display-text.ts).
// The secret set grows during a run (a binding resolves a value at step 6), so the patterns are
// recompiled whenever the session's secret store knows one more value, not fixed at start.
import { cliIo } from './io.js';
import { StringDecoder } from 'node:string_decoder';
import { redactDeep } from '../effects/index.js';
import { displayJson, displayText, RedactionPatterns, redactText, StreamRedactor } from '../redaction/index.js';

/** The session's secret store, as far as a view needs it. */
export interface KnownSecrets {
  readonly knownCount: number;
  knownValues(): Buffer[];
}

/** Printed instead of text that could not be redacted safely (never the text itself). */
export const WITHHELD = '[output withheld: it could not be safely redacted]\n';

export interface ViewPrinter {
  /** Readable text, as a stream: a secret split across two writes is still caught. */
  text(s: string): void;
  /** One JSON value as one line. */
  json(value: unknown): void;
  /** Flushes what the stream redactor held back; idempotent. */
  end(): void;
}

export function viewPrinter(secrets: KnownSecrets, write: (s: string) => void = (s) => void cliIo().stdout.write(s)): ViewPrinter {
  let count = -1;
  let patterns: RedactionPatterns | null = null;
  let stream: StreamRedactor | null = null;
  let decoder = new StringDecoder('utf8');
  let ended = false;
  let failed = false;

  // Redacted bytes as display text: a multi-line log keeps newline and tab, escapes the rest.
  const show = (bytes: Buffer): void => {
    const s = decoder.write(bytes);
    if (s.length > 0) write(displayText(s, { keep: 'log' }));
  };
  // The current patterns; when the set grew, what the old stream held back is pushed into the new one.
  const current = (): boolean => {
    if (failed) return false;
    if (secrets.knownCount === count && stream !== null) return true;
    try {
      const held = stream?.flush() ?? Buffer.alloc(0);
      count = secrets.knownCount;
      patterns = RedactionPatterns.compile(secrets.knownValues());
      stream = new StreamRedactor(patterns);
      if (held.length > 0) show(stream.push(held));
      return true;
    } catch {
      failed = true;
      write(WITHHELD);
      return false;
    }
  };
  return {
    text(s) {
      if (ended || !current()) return;
      show(stream!.push(Buffer.from(s, 'utf8')));
    },
    json(value) {
      if (!current()) return;
      let line: string;
      try {
        // Each string first (JSON escaping could split a secret's bytes), then the line as a net.
        const p = patterns!;
        line = redactText(displayJson(redactDeep(value, (t) => redactText(t, p))), p);
      } catch {
        line = displayJson({ type: 'error', error: { code: 'REDACTION_FAILED', message: WITHHELD.trim() } });
      }
      write(`${line}\n`);
    },
    end() {
      if (ended) return;
      ended = true;
      if (stream === null || failed) return;
      show(stream.flush());
      const rest = decoder.end();
      if (rest.length > 0) write(displayText(rest, { keep: 'log' }));
      decoder = new StringDecoder('utf8');
    },
  };
}
