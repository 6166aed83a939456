// Turns zod's findings into CoreIssues that say the rule and the fix, not just "Invalid input".
import { z, type ZodErrorMap, type ZodTypeAny } from 'zod';
import type { CoreIssue } from './errors.js';
import { closest } from './names.js';
import { formatFieldPath, type FieldPath, type YamlSource } from './yaml-source.js';

/** Parses `source.value` with `schema`; on failure, one CoreIssue per problem (one per unknown key). */
export function parseWith<S extends ZodTypeAny>(schema: S, source: YamlSource): { ok: true; data: z.output<S> } | { ok: false; issues: CoreIssue[] } {
  if (source.value === null || source.value === undefined) {
    return { ok: false, issues: [{ file: source.file, field: '', message: 'the file is empty; it must be a YAML mapping (key: value lines), see docs/core-format.md' }] };
  }
  const result = schema.safeParse(source.value, { errorMap: coreErrorMap });
  if (result.success) return { ok: true, data: result.data };
  const issues: CoreIssue[] = [];
  for (const zi of result.error.issues) {
    if (zi.code === z.ZodIssueCode.unrecognized_keys) {
      const allowed = allowedKeysAt(schema, source.value, zi.path);
      for (const key of zi.keys) issues.push(at(source, [...zi.path, key], unknownKeyMessage(key, allowed), { key: true }));
    } else {
      issues.push(at(source, zi.path, zi.message));
    }
  }
  return { ok: false, issues };
}

/** A CoreIssue for `path` in `source`, positioned when the field exists in the document. */
export function at(source: YamlSource, path: FieldPath, message: string, opts?: { key?: boolean }): CoreIssue {
  const pos = source.locate(path, opts);
  return { file: source.file, field: formatFieldPath(path), ...(pos ? { line: pos.line, column: pos.column } : {}), message };
}

const coreErrorMap: ZodErrorMap = (issue, ctx) => {
  switch (issue.code) {
    case z.ZodIssueCode.invalid_type:
      if (issue.received === 'undefined') return { message: `is required (${article(issue.expected)}); add it` };
      return { message: `must be ${article(issue.expected)}, got ${article(issue.received)}; ${typeFix(issue.expected)}` };
    case z.ZodIssueCode.invalid_enum_value:
      return { message: `must be one of ${issue.options.map((o) => `'${String(o)}'`).join(', ')}, got ${show(issue.received)}; use one of them` };
    case z.ZodIssueCode.invalid_union_discriminator:
      return { message: `must be one of ${issue.options.map((o) => `'${String(o)}'`).join(', ')}; set it to one of them` };
    case z.ZodIssueCode.invalid_literal:
      return { message: `must be ${show(issue.expected)}; write exactly that` };
    case z.ZodIssueCode.too_small:
      if (issue.type === 'string') return { message: issue.minimum === 1 ? 'must not be empty; write a value or remove the key' : `must be at least ${String(issue.minimum)} characters` };
      if (issue.type === 'array') return { message: `must list at least ${String(issue.minimum)} item(s); add them or remove the key` };
      return { message: `must be ${issue.inclusive ? 'at least' : 'greater than'} ${String(issue.minimum)}; raise it` };
    case z.ZodIssueCode.too_big:
      if (issue.type === 'string') return { message: `must be at most ${String(issue.maximum)} characters; shorten it` };
      if (issue.type === 'array') return { message: `must list at most ${String(issue.maximum)} items; remove some` };
      return { message: `must be ${issue.inclusive ? 'at most' : 'less than'} ${String(issue.maximum)}; lower it` };
    case z.ZodIssueCode.not_finite:
      return { message: 'must be a finite number; write a number' };
    case z.ZodIssueCode.invalid_union:
      return { message: 'does not match any allowed form; see docs/core-format.md for this field' };
    default:
      return { message: ctx.defaultError };
  }
};

function article(type: string): string {
  switch (type) {
    case 'object':
      return 'a mapping';
    case 'array':
      return 'a list';
    case 'integer':
      return 'a whole number';
    case 'null':
      return 'null';
    case 'undefined':
      return 'nothing';
    default:
      return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
  }
}

function typeFix(expected: string): string {
  switch (expected) {
    case 'string':
      return "quote the value, e.g. 'text'";
    case 'number':
    case 'integer':
      return 'write a number without quotes';
    case 'boolean':
      return 'write true or false';
    case 'array':
      return "write a list, e.g. [a, b] or one '- item' per line";
    case 'object':
      return "write a mapping, 'key: value' per line";
    default:
      return `write ${article(expected)}`;
  }
}

function show(v: unknown): string {
  return typeof v === 'string' ? `'${v.length > 60 ? `${v.slice(0, 57)}...` : v}'` : String(v);
}

function unknownKeyMessage(key: string, allowed: string[] | undefined): string {
  if (allowed === undefined) return `unknown key '${key}'; remove it`;
  const guess = closest(key, allowed);
  const hint = guess === undefined ? 'remove it or fix its spelling' : `did you mean '${guess}'?`;
  return `unknown key '${key}' (allowed: ${allowed.join(', ')}); ${hint}`;
}

/** The keys an object schema at `path` accepts, following the data through lists, records and unions. */
function allowedKeysAt(schema: ZodTypeAny, data: unknown, path: FieldPath): string[] | undefined {
  let s: ZodTypeAny | undefined = unwrap(schema);
  let d: unknown = data;
  for (const seg of path) {
    if (s === undefined) return undefined;
    s = resolveUnion(s, d);
    const next = (d as Record<string | number, unknown> | null | undefined)?.[seg];
    if (s instanceof z.ZodObject) s = (s.shape as Record<string, ZodTypeAny>)[String(seg)];
    else if (s instanceof z.ZodArray) s = s.element as ZodTypeAny;
    else if (s instanceof z.ZodRecord) s = s.valueSchema as ZodTypeAny;
    else return undefined;
    s = s === undefined ? undefined : unwrap(s);
    d = next;
  }
  if (s === undefined) return undefined;
  s = resolveUnion(s, d);
  return s instanceof z.ZodObject ? Object.keys(s.shape as object) : undefined;
}

function resolveUnion(s: ZodTypeAny, d: unknown): ZodTypeAny | undefined {
  if (!(s instanceof z.ZodDiscriminatedUnion)) return s;
  const tag = (d as Record<string, unknown> | null | undefined)?.[s.discriminator as string];
  const option = (s.optionsMap as Map<unknown, ZodTypeAny>).get(tag);
  return option === undefined ? undefined : unwrap(option);
}

function unwrap(s: ZodTypeAny): ZodTypeAny {
  let cur = s;
  for (;;) {
    if (cur instanceof z.ZodOptional || cur instanceof z.ZodNullable) cur = cur.unwrap() as ZodTypeAny;
    else if (cur instanceof z.ZodDefault) cur = cur.removeDefault() as ZodTypeAny;
    else if (cur instanceof z.ZodEffects) cur = cur.innerType() as ZodTypeAny;
    else if (cur instanceof z.ZodPipeline) cur = cur._def.in as ZodTypeAny;
    else return cur;
  }
}
