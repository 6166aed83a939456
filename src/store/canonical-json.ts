// Canonical JSON: the one serialization the audit chain hashes, so the same value gives the same
// bytes in every run and on every machine. Object keys are sorted by UTF-16 code units (as RFC 8785
// does), there is no whitespace, numbers and strings are written as JSON.stringify writes them.
// Anything JSON.stringify would silently drop or change (undefined, functions, Map, Date, NaN) is
// refused instead: a hash over a silently altered value would prove nothing.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Nesting deeper than this is refused rather than risking a stack overflow mid-transaction. */
export const MAX_CANONICAL_DEPTH = 512;

export class CanonicalJsonError extends Error {
  readonly code = 'CANONICAL_JSON_INVALID';
  /** Where in the value the problem is, e.g. `$.result.items[2]`. */
  readonly path: string;
  /** The rule broken and its fix, without the path. */
  readonly reason: string;
  constructor(path: string, reason: string) {
    super(`${path}: ${reason}`);
    this.name = 'CanonicalJsonError';
    this.path = path;
    this.reason = reason;
  }
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

// The path is kept as segments and only spelled out when there is an error to report: building a
// string per key would cost more than the serialization itself.
type Segment = string | number;
function pathOf(segments: readonly Segment[]): string {
  let p = '$';
  for (const s of segments) p += typeof s === 'number' ? `[${s}]` : IDENT.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  return p;
}

const fail = (path: readonly Segment[], reason: string): CanonicalJsonError => new CanonicalJsonError(pathOf(path), reason);

function byCodeUnits(a: string, b: string): number {
  // The default sort compares UTF-16 code units, which is what we want; spelled out so nobody
  // "fixes" it with localeCompare, whose order depends on the machine's locale.
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Serializes `value` canonically; throws CanonicalJsonError naming the path of anything not plain JSON. */
export function canonicalJson(value: unknown): string {
  // The audit chain serializes every effect's durable view and every approval key: the fast
  // writer below builds one string and tracks no path. Anything it refuses is serialized again by
  // the path-tracking writer, which throws the error that names where the problem is (or, for
  // the rare value it accepts and the fast one does not, returns the same canonical text).
  const stack: object[] = [];
  // Plain JSON whose object keys are already in order is exactly what JSON.stringify writes.
  const shape = plainShape(value, stack);
  if (shape === SORTED) return JSON.stringify(value);
  const fast = shape === UNSORTED ? fastWrite(value, []) : undefined;
  if (fast !== undefined) return fast;
  const parts: string[] = [];
  write(value, [], new Set(), parts);
  // Rare values the fast writer leaves to the careful one (non-enumerable symbol keys) land here.
  return parts.join('');
}

const SORTED = 0;
const UNSORTED = 1;
const INVALID = 2;

/** SORTED: plain JSON with every object's keys in canonical order; UNSORTED: plain, some not; INVALID: not plain JSON. */
function plainShape(value: unknown, stack: object[]): number {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return SORTED;
    case 'number':
      return Number.isFinite(value) ? SORTED : INVALID;
    case 'object':
      break;
    default:
      return INVALID;
  }
  if (value === null) return SORTED;
  if (stack.length >= MAX_CANONICAL_DEPTH || stack.includes(value)) return INVALID;
  stack.push(value);
  let shape = SORTED;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return INVALID;
      const s = plainShape(value[i], stack);
      if (s === INVALID) return INVALID;
      if (s === UNSORTED) shape = UNSORTED;
    }
  } else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return INVALID;
    if (Object.getOwnPropertySymbols(value).length > 0) return INVALID;
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      if (i > 0 && keys[i - 1]! > keys[i]!) shape = UNSORTED;
      const s = plainShape((value as Record<string, unknown>)[keys[i]!], stack);
      if (s === INVALID) return INVALID;
      if (s === UNSORTED) shape = UNSORTED;
    }
  }
  stack.pop();
  return shape;
}

/** Canonical text of `value`, or undefined when it holds anything that is not plain JSON. */
function fastWrite(value: unknown, stack: object[]): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : undefined;
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return 'null';
  if (stack.length >= MAX_CANONICAL_DEPTH || stack.includes(value)) return undefined;
  stack.push(value);
  let out: string | undefined;
  if (Array.isArray(value)) {
    out = '[';
    for (let i = 0; i < value.length; i++) {
      if (!(i in value)) return undefined;
      const v = fastWrite(value[i], stack);
      if (v === undefined) return undefined;
      out += i === 0 ? v : `,${v}`;
    }
    out += ']';
  } else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) return undefined;
    if (Object.getOwnPropertySymbols(value).length > 0) return undefined;
    const keys = Object.keys(value);
    // Most payloads are built with keys in order already; sorting is only needed when they are not.
    for (let i = 1; i < keys.length; i++) {
      if (keys[i - 1]! > keys[i]!) {
        keys.sort(byCodeUnits);
        break;
      }
    }
    out = '{';
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i]!;
      const v = fastWrite((value as Record<string, unknown>)[k], stack);
      if (v === undefined) return undefined;
      out += `${i === 0 ? '' : ','}${JSON.stringify(k)}:${v}`;
    }
    out += '}';
  }
  stack.pop();
  return out;
}

function write(value: unknown, path: Segment[], stack: Set<object>, out: string[]): void {
  switch (typeof value) {
    case 'string':
      out.push(JSON.stringify(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'number':
      if (!Number.isFinite(value)) throw fail(path, `${value} is not a finite number; JSON has no NaN or Infinity (store it as a string or null)`);
      out.push(JSON.stringify(value)); // -0 becomes 0, as in JSON.stringify
      return;
    case 'undefined':
      throw fail(path, 'undefined is not JSON; omit the key or use null');
    case 'bigint':
      throw fail(path, 'a BigInt is not JSON; convert it to a string (or a number if it is a safe integer)');
    case 'function':
      throw fail(path, 'a function is not JSON');
    case 'symbol':
      throw fail(path, 'a symbol is not JSON');
  }
  if (value === null) {
    out.push('null');
    return;
  }
  const obj = value as object;
  if (path.length >= MAX_CANONICAL_DEPTH) throw fail(path, `nested deeper than ${MAX_CANONICAL_DEPTH} levels`);
  if (stack.has(obj)) throw fail(path, 'the value refers to itself (a cycle)');
  stack.add(obj);
  try {
    if (Array.isArray(obj)) {
      out.push('[');
      for (let i = 0; i < obj.length; i++) {
        if (i > 0) out.push(',');
        path.push(i);
        if (!(i in obj)) throw fail(path, 'a hole in a sparse array is not JSON; fill it with null');
        write(obj[i], path, stack, out);
        path.pop();
      }
      out.push(']');
      return;
    }
    const proto = Object.getPrototypeOf(obj) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      const kind = (obj as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw fail(path, `a ${kind} is not plain JSON; convert it first (a Date to an ISO string or epoch ms, a Map to an object, a Buffer to base64)`);
    }
    if (Object.getOwnPropertySymbols(obj).some((s) => Object.prototype.propertyIsEnumerable.call(obj, s))) {
      throw fail(path, 'symbol keys are not JSON');
    }
    const keys = Object.keys(obj).sort(byCodeUnits);
    out.push('{');
    keys.forEach((k, i) => {
      if (i > 0) out.push(',');
      out.push(JSON.stringify(k), ':');
      path.push(k);
      write((obj as Record<string, unknown>)[k], path, stack, out);
      path.pop();
    });
    out.push('}');
  } finally {
    stack.delete(obj);
  }
}

/**
 * Parses `text` and returns the value only if `text` is exactly its canonical form: a verifier
 * uses this to refuse stored payloads that were rewritten by hand (whitespace, key order,
 * duplicate keys, 1.0 for 1) even when they still parse.
 */
export function parseCanonicalJson(text: string): { ok: true; value: JsonValue } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not JSON (${(err as Error).message})` };
  }
  let again: string;
  try {
    again = canonicalJson(value);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  if (again !== text) return { ok: false, reason: 'valid JSON but not in canonical form (key order, whitespace, number or escape spelling changed)' };
  return { ok: true, value: value as JsonValue };
}
