// The byte patterns that reveal a secret: its raw bytes and the common encodings an output may carry
// it in. Every form here is "substring-stable": encoding a longer text that contains the secret
// yields a text that contains the form, so one exact-match pass over the output finds them all.

/**
 * A derived form shorter than this many bytes is not used. Below it, a form is mostly base64 or
 * percent noise that ordinary output contains by chance (a 2-character base64 run would redact
 * nearly everything), and very short forms make a safe marker hard to find. Raw secrets are always
 * used, whatever their length. Every form of a secret of at least 7 bytes reaches the floor.
 */
export const FORM_FLOOR = 8;

export type SecretFormKind =
  | 'raw'
  | 'base64'
  | 'base64url'
  | 'percent'
  | 'form-urlencoded'
  | 'percent-twice'
  | 'hex'
  | 'hex-separated'
  | 'hex-grouped'
  | 'json'
  | 'utf16le';

export interface SecretForm {
  bytes: Buffer;
  kind: SecretFormKind;
}

const B64_TO_URL: Record<string, string> = { '+': '-', '/': '_' };

/**
 * Base64 runs of the secret at byte offset 0, 1 and 2 of a 3-byte group: only the characters whose
 * 6 bits all come from the secret (the first and last character of a run inside a longer stream
 * mix in neighbouring bytes). At offset 0, the whole encoding with and without padding as well:
 * that is what a secret encoded on its own looks like.
 */
function base64Runs(secret: Buffer): string[] {
  const n = secret.length;
  const runs: string[] = [];
  for (let k = 0; k < 3; k++) {
    const enc = Buffer.concat([Buffer.alloc(k), secret]).toString('base64');
    const start = Math.ceil((8 * k) / 6);
    const end = Math.floor((8 * (k + n)) / 6);
    if (end > start) runs.push(enc.slice(start, end));
  }
  const whole = secret.toString('base64');
  runs.push(whole, whole.replace(/=+$/, ''));
  return runs;
}

// encodeURIComponent leaves these alone; WHATWG application/x-www-form-urlencoded (URLSearchParams,
// HTML forms) leaves only alphanumerics and *-._ alone and writes a space as '+'.
const URI_COMPONENT_SAFE = /[A-Za-z0-9\-_.!~*'()]/;
const FORM_SAFE = /[A-Za-z0-9*\-._]/;

function percentEncode(secret: Buffer, safe: RegExp, spaceAsPlus: boolean, upper: boolean): string {
  let out = '';
  for (const byte of secret) {
    const ch = String.fromCharCode(byte);
    if (byte < 0x80 && safe.test(ch)) out += ch;
    else if (spaceAsPlus && byte === 0x20) out += '+';
    else {
      const hex = byte.toString(16).padStart(2, '0');
      out += `%${upper ? hex.toUpperCase() : hex}`;
    }
  }
  return out;
}

/**
 * Hex of the secret: plain (`0a1b2c`), one separator between bytes (`0a:1b:2c`, `0a 1b 2c`), and
 * xxd's two-byte groups (`0a1b 2c3d`) at both phases a secret can start at; lower and upper case.
 * Each is the inner part of the same encoding of any longer text, so it stays substring-stable.
 */
function hexForms(secret: Buffer): string[] {
  const out: string[] = [];
  for (const upper of [false, true]) {
    const bytes = Array.from(secret, (x) => {
      const h = x.toString(16).padStart(2, '0');
      return upper ? h.toUpperCase() : h;
    });
    out.push(bytes.join(''), bytes.join(':'), bytes.join(' '));
    // xxd: a space after every second byte of the dump; the secret's first byte is either one.
    for (const phase of [0, 1]) {
      out.push(bytes.map((h, i) => (i < bytes.length - 1 && (i + phase) % 2 === 1 ? `${h} ` : h)).join(''));
    }
  }
  return out;
}

/** The secret as text, or null when its bytes are not valid UTF-8 (then no JSON encoder emits it). */
function asUtf8(secret: Buffer): string | null {
  const text = secret.toString('utf8');
  return Buffer.from(text, 'utf8').equals(secret) ? text : null;
}

/**
 * What JSON encoders put between the quotes: JSON.stringify's escaping; the ASCII-only form that
 * writes every non-ASCII UTF-16 unit as \uXXXX (Python's json.dumps default, Java, PHP), in lower
 * and upper hex; and each with '/' written as '\/' (PHP's json_encode).
 */
function jsonForms(text: string): string[] {
  const plain = JSON.stringify(text).slice(1, -1);
  const asciiOnly = (upper: boolean): string =>
    plain.replace(/[\u0080-\uffff]/g, (c) => {
      const hex = c.charCodeAt(0).toString(16).padStart(4, '0');
      return `\\u${upper ? hex.toUpperCase() : hex}`;
    });
  const forms = [plain, asciiOnly(false), asciiOnly(true)];
  return [...forms, ...forms.map((f) => f.replaceAll('/', '\\/'))];
}

/** Every form of one secret with its kind, deduplicated, raw first; derived forms below FORM_FLOOR dropped. */
export function labelledSecretForms(secret: Buffer): SecretForm[] {
  const out: SecretForm[] = [];
  if (secret.length === 0) return out;
  const seen = new Set<string>();
  const add = (bytes: Buffer, kind: SecretFormKind): void => {
    if (kind !== 'raw' && bytes.length < FORM_FLOOR) return;
    const key = bytes.toString('latin1');
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ bytes, kind });
  };
  add(Buffer.from(secret), 'raw');
  const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
  for (const run of base64Runs(secret)) {
    add(ascii(run), 'base64');
    add(ascii(run.replace(/[+/]/g, (c) => B64_TO_URL[c]!)), 'base64url');
  }
  for (const upper of [true, false]) {
    const percent = percentEncode(secret, URI_COMPONENT_SAFE, false, upper);
    const form = percentEncode(secret, FORM_SAFE, true, upper);
    add(ascii(percent), 'percent');
    add(ascii(form), 'form-urlencoded');
    // Encoded twice by the same encoder (a URL inside a query parameter): '%' becomes '%25'.
    add(ascii(percentEncode(ascii(percent), URI_COMPONENT_SAFE, false, upper)), 'percent-twice');
    add(ascii(percentEncode(ascii(form), FORM_SAFE, true, upper)), 'percent-twice');
  }
  const hex = hexForms(secret);
  for (let i = 0; i < hex.length; i++) add(ascii(hex[i]!), i % 5 === 0 ? 'hex' : i % 5 < 3 ? 'hex-separated' : 'hex-grouped');
  const text = asUtf8(secret);
  if (text !== null) {
    for (const f of jsonForms(text)) add(Buffer.from(f, 'utf8'), 'json');
    // What Windows tools print: the text as UTF-16 little-endian code units.
    add(Buffer.from(text, 'utf16le'), 'utf16le');
  }
  return out;
}

/** The byte patterns redaction removes for one secret: raw bytes first, then its encoded forms. */
export function secretForms(secret: Buffer): Buffer[] {
  return labelledSecretForms(secret).map((f) => f.bytes);
}
