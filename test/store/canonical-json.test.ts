// Canonical JSON: the bytes the audit chain hashes must not depend on key order, run or machine,
// and nothing JSON.stringify would silently drop or change may slip through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { canonicalJson, CanonicalJsonError, MAX_CANONICAL_DEPTH, parseCanonicalJson } from '../../src/store/canonical-json.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

// Keys chosen to tell code-unit order from code-point and locale order: NFD "e\u0301" before NFC
// "\u00e9", an astral emoji (surrogate 0xD83D) before U+FF5E, upper case before lower case.
const SAMPLE = {
  z: [3, 1, 2],
  a: { '\u00e9': 'caf\u00e9', 'e\u0301': 'NFD', '\u{1F600}': 'emoji', '\uFF5E': 'fullwidth', B: null, b: true },
  n: [0, -0, 1.0, 1e21, 1e-7, 0.1, -2.5],
  s: 'line\nbreak "quoted" \\ tab\t \u2028 \u0007',
  '': 'empty key',
};
const SAMPLE_CANONICAL =
  '{"":"empty key","a":{"B":null,"b":true,"e\u0301":"NFD","\u00e9":"caf\u00e9","\u{1F600}":"emoji","\uFF5E":"fullwidth"},' +
  '"n":[0,0,1,1e+21,1e-7,0.1,-2.5],"s":"line\\nbreak \\"quoted\\" \\\\ tab\\t \u2028 \\u0007","z":[3,1,2]}';
// Pinned: if this changes, every stored chain stops verifying. Change the format only with a new
// chain version, never in place.
const SAMPLE_SHA256 = '979fe4aa77739739dbb21abe3229c8e0872c8c469a061b471aaf793b36bba654';

test('keys are sorted by UTF-16 code units at every level; arrays keep their order; no whitespace', () => {
  assert.equal(canonicalJson(SAMPLE), SAMPLE_CANONICAL);
  assert.equal(sha256(canonicalJson(SAMPLE)), SAMPLE_SHA256);
  assert.equal(canonicalJson({ b: 1, a: { d: [{ y: 1, x: 2 }], c: 0 } }), '{"a":{"c":0,"d":[{"x":2,"y":1}]},"b":1}');
});

test('the same value built in a different key order serializes identically', () => {
  const reversed = Object.fromEntries(Object.entries(SAMPLE).reverse().map(([k, v]) => [k, v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v]));
  assert.equal(canonicalJson(reversed), SAMPLE_CANONICAL);
  assert.equal(canonicalJson(Object.assign(Object.create(null) as object, { b: 2, a: 1 })), '{"a":1,"b":2}');
});

test('another process produces the same bytes', () => {
  const mod = fileURLToPath(new URL('../../src/store/canonical-json.js', import.meta.url));
  const script = `import(${JSON.stringify(mod)}).then(m => process.stdout.write(m.canonicalJson(JSON.parse(process.argv[1]))))`;
  const r = spawnSync(process.execPath, ['-e', script, JSON.stringify(SAMPLE)], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, SAMPLE_CANONICAL);
});

test('unicode is kept as given: no normalization, lone surrogates escaped', () => {
  assert.notEqual(canonicalJson('\u00e9'), canonicalJson('e\u0301'));
  assert.equal(canonicalJson('\ud800'), '"\\ud800"');
  assert.equal(canonicalJson({ '\udc00': 1 }), '{"\\udc00":1}');
  assert.equal(canonicalJson('\u{1F600}'), '"\u{1F600}"');
});

test('numbers are written as JSON writes them', () => {
  assert.equal(canonicalJson([1.0, -0, 0.1 + 0.2, 2 ** 53, 5e-324, 1.7976931348623157e308]), '[1,0,0.30000000000000004,9007199254740992,5e-324,1.7976931348623157e+308]');
});

test('anything that is not plain JSON is refused with its path and a fix', () => {
  const refuses = (value: unknown, path: string, reason: RegExp) => {
    assert.throws(
      () => canonicalJson(value),
      (err: unknown) => {
        assert.ok(err instanceof CanonicalJsonError, String(err));
        assert.equal(err.code, 'CANONICAL_JSON_INVALID');
        assert.equal(err.path, path);
        assert.match(err.reason, reason);
        return true;
      },
    );
  };
  refuses(Number.NaN, '$', /not a finite number/);
  refuses({ a: [1, Infinity] }, '$.a[1]', /not a finite number/);
  refuses({ a: { b: undefined } }, '$.a.b', /undefined is not JSON; omit the key or use null/);
  refuses(undefined, '$', /undefined/);
  refuses({ f: () => 1 }, '$.f', /function/);
  refuses({ 'odd key': 10n }, '$["odd key"]', /BigInt/);
  refuses([Symbol('s')], '$[0]', /symbol/);
  refuses({ [Symbol('k')]: 1 }, '$', /symbol keys/);
  refuses({ when: new Date(0) }, '$.when', /Date is not plain JSON/);
  refuses({ m: new Map() }, '$.m', /Map/);
  refuses({ b: Buffer.from('x') }, '$.b', /Buffer/);
  class Point {
    x = 1;
  }
  refuses(new Point(), '$', /Point/);
  // eslint-disable-next-line no-sparse-arrays
  refuses([1, , 3], '$[1]', /sparse array/);
  const cycle: Record<string, unknown> = { a: {} };
  (cycle.a as Record<string, unknown>).self = cycle;
  refuses(cycle, '$.a.self', /cycle/);
  let deep: unknown = 0;
  for (let i = 0; i <= MAX_CANONICAL_DEPTH; i++) deep = [deep];
  assert.throws(() => canonicalJson(deep), /nested deeper than/);
});

test('a value shared twice (not a cycle) is fine', () => {
  const shared = { k: 1 };
  assert.equal(canonicalJson({ a: shared, b: [shared, shared] }), '{"a":{"k":1},"b":[{"k":1},{"k":1}]}');
});

test('parseCanonicalJson accepts only the canonical spelling', () => {
  assert.deepEqual(parseCanonicalJson(SAMPLE_CANONICAL), { ok: true, value: JSON.parse(SAMPLE_CANONICAL) });
  for (const text of ['{"b":1,"a":2}', '{ "a":1}', '{"a":1.0}', '{"a":"\\u0041"}', '{"a":1,"a":1}', '1e400', '']) {
    const r = parseCanonicalJson(text);
    assert.equal(r.ok, false, text);
  }
  // __proto__ arrives from JSON.parse as an ordinary key and round-trips as one.
  assert.equal(parseCanonicalJson('{"__proto__":{"x":1}}').ok, true);
});

test('the fast paths agree with a plain reference writer on random values, integer-like keys included', () => {
  let seed = 42;
  const rnd = (): number => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const keyChars = ['a', 'b', 'B', 'é', '\u{1F600}', '_', '1', '9', '0', '"', '\\'];
  const gen = (depth: number): unknown => {
    const r = rnd();
    if (depth > 3 || r < 0.3) return [null, true, false, -0, 1.5e300, -7, 'x"\n\u2028', '\ud800'][Math.floor(rnd() * 8)];
    if (r < 0.6) return Array.from({ length: Math.floor(rnd() * 4) }, () => gen(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(rnd() * 5); i > 0; i--) o[Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => keyChars[Math.floor(rnd() * keyChars.length)]).join('')] = gen(depth + 1);
    return o;
  };
  // Written out by hand: a sorted copy would not do, since JS objects put integer-like keys first.
  const reference = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(reference).join(',')}]`;
    if (v !== null && typeof v === 'object') {
      return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`).join(',')}}`;
    }
    return JSON.stringify(v);
  };
  for (let i = 0; i < 2000; i++) {
    const v = gen(0);
    assert.equal(canonicalJson(v), reference(v));
  }
});
