// A bounded, field-name-redacted JSON preview of tool arguments, for approval prompts and audit.
// The raw arguments stay with the adapter; this is what an operator sees before saying yes.
//
// Bounds (defaults): 2,000 characters of JSON in total, 200 per string, 4 levels of containers,
// 20 keys per object, 20 items per array. Whatever is cut is said twice: inline (a string ends in
// "…[+N chars]", an object gets a "[cut]" member, an array a "[+N more items]" item) and as a
// note in `cuts`. The text is always valid JSON. Never throws: cycles, BigInt, functions, symbols,
// throwing getters, revoked proxies and huge strings all become short markers.
//
// Sensitive names (decision): a key is redacted when, lowercased with non-alphanumerics removed,
// it contains token, secret, password, passwd, passphrase, credential, cookie, bearer,
// authorization, authentication, apikey, privatekey or accesskey; or when one of its words
// (split at camelCase, snake_case, kebab-case, digits) is key(s), auth, session(s), private,
// pass or pwd. So apiKey, api_key, X-Api-Key, private_key, sessionId, authToken are redacted and
// monkey, keyboard, author, passenger, bypass are not. max_tokens is redacted too: over-redacting
// a preview is cheap, leaking a credential is not. Two value rules cover secrets without a
// telling key: a string that is "Bearer|Basic|Token <one credential-like word>" is redacted
// wherever it is (headers given as pairs), and in an object whose name/key/header/field/variable
// is a sensitive name (env lists such as { name: 'GITHUB_TOKEN', value }) value/val/data/content
// are redacted.

export interface PreviewLimits {
  readonly maxChars: number;
  readonly maxStringChars: number;
  readonly maxDepth: number;
  readonly maxKeys: number;
  readonly maxItems: number;
}

export const DEFAULT_PREVIEW_LIMITS: PreviewLimits = Object.freeze({ maxChars: 2000, maxStringChars: 200, maxDepth: 4, maxKeys: 20, maxItems: 20 });

export interface ArgumentPreview {
  /** Valid JSON, at most maxChars characters. */
  readonly text: string;
  /** Whether anything was cut (redaction alone does not count). */
  readonly truncated: boolean;
  /** JSONPath-like paths of redacted values (at most 20, then a count). */
  readonly redacted: readonly string[];
  /** One note per cut (at most 20, then a count). */
  readonly cuts: readonly string[];
}

const REDACTED = '"[redacted]"';
const STRONG = ['token', 'secret', 'password', 'passwd', 'passphrase', 'credential', 'cookie', 'bearer', 'authorization', 'authentication', 'apikey', 'privatekey', 'accesskey'];
const WEAK = new Set(['key', 'keys', 'auth', 'session', 'sessions', 'private', 'pass', 'pwd']);
// An HTTP auth scheme followed by one credential-looking word: 'Bearer eyJ…', not 'Basic setup'.
const AUTH_VALUE = /^\s*(?:bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}\s*$/i;
const MAX_AUTH_VALUE = 16_384;
// Name/value pairs ({ name: 'GITHUB_TOKEN', value: '…' }) hide the sensitive name in a value.
const PAIR_NAME_FIELDS = ['name', 'key', 'header', 'field', 'variable'];
const PAIR_VALUE_FIELDS = new Set(['value', 'val', 'data', 'content']);
const MAX_NOTES = 20;
const MIN_CHARS = 64;
/** Stands for a property whose getter threw. */
const UNREADABLE = Symbol('unreadable');

function read(obj: object, key: string | number): unknown {
  try {
    return (obj as Record<string | number, unknown>)[key];
  } catch {
    return UNREADABLE;
  }
}

/** Whether a field name is sensitive (see the decision at the top of this file). */
export function isSensitiveFieldName(name: string): boolean {
  const compact = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (STRONG.some((s) => compact.includes(s))) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([A-Za-z])([0-9])/g, '$1 $2')
    .replace(/([0-9])([A-Za-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((w) => WEAK.has(w));
}

export function previewArguments(args: unknown, limits: Partial<PreviewLimits> = {}): ArgumentPreview {
  const l = normalizeLimits(limits);
  const writer = new PreviewWriter(l);
  try {
    const text = writer.emit(args, '$', 1, l.maxChars) ?? writer.tooLarge();
    return writer.result(text);
  } catch (err) {
    // Unreachable by design (every access is guarded); kept so an approval prompt never crashes.
    const why = err instanceof Error ? err.name : typeof err;
    return Object.freeze({ text: '"[preview unavailable]"', truncated: true, redacted: Object.freeze([]), cuts: Object.freeze([`preview failed (${why})`]) });
  }
}

function normalizeLimits(limits: Partial<PreviewLimits>): PreviewLimits {
  const pick = (v: unknown, d: number, min: number): number => (typeof v === 'number' && Number.isInteger(v) && v >= min ? v : d);
  const d = DEFAULT_PREVIEW_LIMITS;
  return {
    maxChars: pick(limits.maxChars, d.maxChars, MIN_CHARS),
    maxStringChars: pick(limits.maxStringChars, d.maxStringChars, 1),
    maxDepth: pick(limits.maxDepth, d.maxDepth, 1),
    maxKeys: pick(limits.maxKeys, d.maxKeys, 1),
    maxItems: pick(limits.maxItems, d.maxItems, 1),
  };
}

/** Cuts to at most n UTF-16 units without splitting a surrogate pair. */
function cutAt(s: string, n: number): string {
  if (s.length <= n) return s;
  const code = s.charCodeAt(n - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

function pathOf(parent: string, key: string): string {
  const shown = key.length > 40 ? `${cutAt(key, 40)}…` : key;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(shown) ? `${parent}.${shown}` : `${parent}[${JSON.stringify(shown)}]`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function fit(text: string, budget: number): string | null {
  return text.length <= budget ? text : null;
}

class PreviewWriter {
  private readonly redactedPaths: string[] = [];
  private redactedCount = 0;
  private readonly cutNotes: string[] = [];
  private cutCount = 0;
  /** Containers on the current path: a shared object printed twice is fine, a cycle is not. */
  private readonly ancestors = new Set<object>();

  constructor(private readonly l: PreviewLimits) {}

  result(text: string): ArgumentPreview {
    const more = (n: number, shown: number, what: string): string[] => (n > shown ? [`… and ${n - shown} more ${what}`] : []);
    return Object.freeze({
      text,
      truncated: this.cutCount > 0,
      redacted: Object.freeze([...this.redactedPaths, ...more(this.redactedCount, this.redactedPaths.length, 'redacted fields')]),
      cuts: Object.freeze([...this.cutNotes, ...more(this.cutCount, this.cutNotes.length, 'cuts')]),
    });
  }

  tooLarge(): string {
    this.cut('$: the arguments do not fit the preview');
    return '"[arguments too large to preview]"';
  }

  private cut(note: string): void {
    this.cutCount++;
    if (this.cutNotes.length < MAX_NOTES) this.cutNotes.push(note);
  }

  private redact(path: string, budget: number): string | null {
    const text = fit(REDACTED, budget);
    if (text !== null) {
      this.redactedCount++;
      if (this.redactedPaths.length < MAX_NOTES) this.redactedPaths.push(path);
    }
    return text;
  }

  /** JSON for `value` in at most `budget` characters, or null if not even a marker fits. */
  emit(value: unknown, path: string, level: number, budget: number): string | null {
    try {
      switch (typeof value) {
        case 'string':
          return value.length <= MAX_AUTH_VALUE && AUTH_VALUE.test(value) ? this.redact(path, budget) : this.emitString(value, path, budget);
        case 'number':
          return fit(Number.isFinite(value) ? JSON.stringify(value) : `"[${String(value)}]"`, budget);
        case 'boolean':
          return fit(String(value), budget);
        case 'bigint': {
          const abs = value < 0n ? -value : value;
          // toString of a huge BigInt costs more than it is worth to show.
          return abs < 1n << 1024n ? this.emitString(`${value}n`, path, budget) : fit(`"[bigint of ${abs.toString(16).length * 4} bits]"`, budget);
        }
        case 'undefined':
          return fit('"[undefined]"', budget);
        case 'symbol':
          return fit(value === UNREADABLE ? '"[unreadable]"' : '"[symbol]"', budget);
        case 'function': {
          const name = typeof value.name === 'string' && value.name !== '' ? ` ${cutAt(value.name, 40)}` : '';
          return fit(JSON.stringify(`[function${name}]`), budget);
        }
        default:
          return value === null ? fit('null', budget) : this.emitObject(value as object, path, level, budget);
      }
    } catch {
      return fit('"[unreadable]"', budget);
    }
  }

  private emitString(s: string, path: string, budget: number): string | null {
    let shown = cutAt(s, this.l.maxStringChars);
    const render = (): string => (shown.length === s.length ? JSON.stringify(s) : JSON.stringify(`${shown}…[+${s.length - shown.length} chars]`));
    let text = render();
    while (text.length > budget) {
      if (shown.length === 0) return null;
      shown = cutAt(s, Math.max(0, shown.length - (text.length - budget)));
      text = render();
    }
    if (shown.length < s.length) this.cut(`${path}: string cut to ${shown.length} of ${s.length} chars`);
    return text;
  }

  private emitObject(obj: object, path: string, level: number, budget: number): string | null {
    if (this.ancestors.has(obj)) {
      this.cut(`${path}: cycle (refers back to an enclosing value)`);
      return fit('"[cycle]"', budget);
    }
    const special = this.special(obj);
    if (special !== undefined) return this.emitString(special, path, budget);
    const isArray = Array.isArray(obj);
    const count = isArray ? (obj as unknown[]).length : Object.keys(obj).length;
    if (level > this.l.maxDepth) {
      this.cut(`${path}: ${isArray ? 'array' : 'object'} below depth ${this.l.maxDepth} not shown`);
      return fit(JSON.stringify(isArray ? `[array of ${plural(count, 'item')}]` : `[object with ${plural(count, 'key')}]`), budget);
    }
    this.ancestors.add(obj);
    try {
      return isArray ? this.emitArray(obj as unknown[], path, level, budget) : this.emitRecord(obj as Record<string, unknown>, path, level, budget);
    } finally {
      this.ancestors.delete(obj);
    }
  }

  /** A one-line stand-in for values whose enumerable keys do not describe them. */
  private special(obj: object): string | undefined {
    if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? '[invalid date]' : obj.toISOString();
    if (obj instanceof RegExp) return `[regexp ${obj.source}]`;
    if (ArrayBuffer.isView(obj)) return `[${obj.constructor?.name ?? 'binary'} of ${obj.byteLength} bytes]`;
    if (obj instanceof ArrayBuffer) return `[ArrayBuffer of ${obj.byteLength} bytes]`;
    if (obj instanceof Map) return `[Map of ${obj.size} ${obj.size === 1 ? 'entry' : 'entries'}]`;
    if (obj instanceof Set) return `[Set of ${plural(obj.size, 'item')}]`;
    if (obj instanceof Promise || obj instanceof WeakMap || obj instanceof WeakSet) return `[${obj.constructor.name}]`;
    if (obj instanceof Error) return `[${obj.name}: ${obj.message}]`;
    return undefined;
  }

  private emitRecord(obj: Record<string, unknown>, path: string, level: number, budget: number): string | null {
    const keys = Object.keys(obj);
    if (keys.length === 0) return fit('{}', budget);
    const marker = (n: number): string => `"[cut]":${JSON.stringify(`+${n} more keys`)}`;
    const reserve = 1 + marker(keys.length).length + 1; // ',' + marker + '}'
    if (1 + reserve > budget) return null;
    const pairedSecret = PAIR_NAME_FIELDS.some((f) => {
      const v = keys.includes(f) ? read(obj, f) : undefined;
      return typeof v === 'string' && isSensitiveFieldName(v);
    });
    let out = '{';
    let shown = 0;
    let sizeLimited = false;
    for (const key of keys.slice(0, this.l.maxKeys)) {
      const shownKey = key.length > this.l.maxStringChars ? `${cutAt(key, this.l.maxStringChars)}…` : key;
      const head = `${shown > 0 ? ',' : ''}${JSON.stringify(shownKey)}:`;
      const room = budget - out.length - head.length - reserve;
      const childPath = pathOf(path, key);
      let text: string | null = null;
      if (room > 0) {
        if (isSensitiveFieldName(key) || (pairedSecret && PAIR_VALUE_FIELDS.has(key))) text = this.redact(childPath, room);
        else text = this.emit(read(obj, key), childPath, level + 1, room);
      }
      if (text === null) {
        sizeLimited = true;
        break;
      }
      out += head + text;
      shown++;
    }
    const cut = keys.length - shown;
    if (cut > 0) {
      const why = sizeLimited ? 'preview size limit' : `limit ${this.l.maxKeys} keys per object`;
      this.cut(`${path}: ${cut} of ${keys.length} keys not shown (${why})`);
      out += `${shown > 0 ? ',' : ''}${marker(cut)}`;
    }
    return `${out}}`;
  }

  private emitArray(arr: unknown[], path: string, level: number, budget: number): string | null {
    const length = Number.isSafeInteger(arr.length) && arr.length >= 0 ? arr.length : 0; // a proxy may lie
    if (length === 0) return fit('[]', budget);
    const marker = (n: number): string => JSON.stringify(`[+${n} more items]`);
    const reserve = 1 + marker(length).length + 1;
    if (1 + reserve > budget) return null;
    let out = '[';
    let shown = 0;
    let sizeLimited = false;
    for (let i = 0; i < Math.min(length, this.l.maxItems); i++) {
      const sep = shown > 0 ? ',' : '';
      const room = budget - out.length - sep.length - reserve;
      let text: string | null = null;
      if (room > 0) text = this.emit(read(arr, i), `${path}[${i}]`, level + 1, room);
      if (text === null) {
        sizeLimited = true;
        break;
      }
      out += sep + text;
      shown++;
    }
    const cut = length - shown;
    if (cut > 0) {
      const why = sizeLimited ? 'preview size limit' : `limit ${this.l.maxItems} items per array`;
      this.cut(`${path}: ${cut} of ${length} items not shown (${why})`);
      out += `${shown > 0 ? ',' : ''}${marker(cut)}`;
    }
    return `${out}]`;
  }
}
