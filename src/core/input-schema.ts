// Input schemas come from outside (authored manifests, MCP servers' tools/list). They are compiled
// once, where a failure is a typed error (core load, MCP discovery), and every `pattern` and
// `patternProperties` key runs on RE2 (re2js): linear time in the input, so no schema and no
// argument can hold the supervisor's event loop (`^(a+)+$` took seconds per character on V8's
// backtracking engine). A pattern RE2 cannot express (backreferences, lookaround) does not compile.
// ajv is CommonJS: its module.exports is the class, also exported as `Ajv` (the named import works
// in Node and in the CLI's bundle alike, where the default import's shape differs).
import { Ajv as AjvClass, type ValidateFunction } from 'ajv';
import { RE2JS } from 're2js';
import type { FieldPath } from './yaml-source.js';

export type InputValidator = ValidateFunction;

export type CompiledInputSchema =
  | { readonly ok: true; readonly validate: InputValidator }
  | { readonly ok: false; readonly reason: string; readonly path: FieldPath };

/** What ajv needs of a regular expression: `test`, and a stable text for its cache key. */
interface LinearRegExp {
  test(input: string): boolean;
  toString(): string;
}

/**
 * ajv's `code.regExp` hook: ajv calls it while compiling, so an unsupported pattern is a compile
 * error. Flags: ajv passes 'u' (RE2 is Unicode-aware anyway); no other flag reaches here.
 */
function linearRegExp(pattern: string, flags: string): LinearRegExp {
  let re2Flags = 0;
  if (flags.includes('i')) re2Flags |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes('m')) re2Flags |= RE2JS.MULTILINE;
  if (flags.includes('s')) re2Flags |= RE2JS.DOTALL;
  const re = RE2JS.compile(pattern, re2Flags);
  return { test: (input: string) => re.test(input), toString: () => `/${pattern}/${flags}` };
}
// ajv's standalone code generation reads `.code`; we never generate standalone code, but name it.
(linearRegExp as unknown as { code: string }).code = 'require("re2js").RE2JS.compile';

type AjvInstance = { compile(schema: unknown): ValidateFunction; removeSchema(schema: unknown): unknown };
type AjvCtor = new (opts: Record<string, unknown>) => AjvInstance;

let shared: AjvInstance | null = null;
function ajv(): AjvInstance {
  if (shared === null) {
    shared = new (AjvClass as unknown as AjvCtor)({
      allErrors: true,
      strict: false,
      // Two schemas naming the same $id (two servers, two revisions of a core) must not collide.
      addUsedSchema: false,
      // An unknown `format` is ignored (no format runs a regex here); not a console line per schema.
      logger: false,
      code: { regExp: linearRegExp },
    });
  }
  return shared;
}

// Frozen schema objects (core snapshots, discovered tools) are compiled once per object.
const compiled = new WeakMap<object, CompiledInputSchema>();

/** Compiles a tool's input schema; never throws. The reason names the pattern and the rule. */
export function compileInputSchema(schema: unknown): CompiledInputSchema {
  const key = schema !== null && typeof schema === 'object' ? schema : null;
  const hit = key ? compiled.get(key) : undefined;
  if (hit) return hit;
  const result = compileOnce(schema);
  if (key) compiled.set(key, result);
  return result;
}

function compileOnce(schema: unknown): CompiledInputSchema {
  let bad: CompiledInputSchema | null;
  try {
    bad = firstUnsupportedPattern(schema, []);
  } catch {
    return { ok: false, reason: 'is nested too deeply to check; flatten the schema', path: [] };
  }
  if (bad) return bad;
  const a = ajv();
  try {
    const validate = a.compile(schema);
    return { ok: true, validate };
  } catch (err) {
    return { ok: false, reason: `is not a valid JSON Schema (${oneLine(err)}); fix the schema`, path: [] };
  } finally {
    // The validator keeps what it needs; the instance must not keep every schema it ever saw.
    if (schema !== null && typeof schema === 'object') a.removeSchema(schema);
  }
}

// Subschema positions whose values are data, not schemas: a `pattern` key there is not a rule.
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);

/** The first `pattern` / `patternProperties` key RE2 rejects, with its path in the schema. */
function firstUnsupportedPattern(node: unknown, path: (string | number)[]): CompiledInputSchema | null {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) {
      const bad = firstUnsupportedPattern(item, [...path, i]);
      if (bad) return bad;
    }
    return null;
  }
  if (node === null || typeof node !== 'object') return null;
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (DATA_KEYWORDS.has(k)) continue;
    if (k === 'pattern' && typeof v === 'string') {
      const why = re2Rejects(v);
      if (why) return { ok: false, reason: patternReason(v, why), path: [...path, k] };
    }
    if (k === 'patternProperties' && v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const p of Object.keys(v)) {
        const why = re2Rejects(p);
        if (why) return { ok: false, reason: patternReason(p, why), path: [...path, k, p] };
      }
    }
    // `properties` maps names to schemas: a property called "pattern" is an object, walked below.
    const bad = firstUnsupportedPattern(v, [...path, k]);
    if (bad) return bad;
  }
  return null;
}

function re2Rejects(pattern: string): string | null {
  try {
    RE2JS.compile(pattern);
    return null;
  } catch (err) {
    return oneLine(err);
  }
}

function patternReason(pattern: string, why: string): string {
  const shown = pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern;
  return `pattern ${JSON.stringify(shown)} cannot be used (${why}); patterns run on a linear-time engine (RE2 syntax): no backreferences, no lookahead or lookbehind — rewrite it, or drop the pattern and check the value in the tool`;
}

function oneLine(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  return msg.replace(/\s+/g, ' ').slice(0, 300);
}

/**
 * The doctor's line for untrusted schemas: the pattern that froze the event loop on a backtracking
 * engine (`^(a+)+$`, seconds per added character) is compiled and run the way a tool's schema is,
 * against 40 characters and a mismatch; it must answer at once, and a lookahead must not compile.
 */
export function probeSchemaPatterns(): { ok: boolean; detail: string } {
  const evil = compileInputSchema({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } });
  if (!evil.ok) return { ok: false, detail: `the probe pattern did not compile: ${evil.reason}` };
  const started = process.hrtime.bigint();
  const accepted = evil.validate({ s: `${'a'.repeat(40)}!` });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (accepted) return { ok: false, detail: 'the probe pattern accepted an input it must refuse' };
  const lookahead = compileInputSchema({ type: 'string', pattern: '^(?=a)a$' });
  if (lookahead.ok) return { ok: false, detail: 'a lookahead pattern compiled: patterns do not run on the linear-time engine' };
  if (ms > 100) return { ok: false, detail: `^(a+)+$ against 41 characters took ${ms.toFixed(1)} ms (expected well under 100 ms on a linear-time engine)` };
  return { ok: true, detail: `untrusted schema patterns run on RE2 (re2js, linear time): ^(a+)+$ against 41 characters refused in ${ms.toFixed(1)} ms; lookaround is a load error` };
}
