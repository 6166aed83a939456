// YAML with positions: syntax errors and field errors both point at a line and column.
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { CoreIssue } from './errors.js';
import { RESERVED_KEYS } from './names.js';

export type FieldPath = readonly (string | number)[];

export interface YamlSource {
  readonly file: string;
  /** The plain data (YAML 1.2 core schema: strings, numbers, booleans, null, lists, mappings). */
  readonly value: unknown;
  /** Line and column of a field: its value (or `key: true`, its key), else the closest enclosing node. */
  locate(path: FieldPath, opts?: { key?: boolean }): { line: number; column: number } | undefined;
}

export type YamlParse = { readonly ok: true; readonly source: YamlSource } | { readonly ok: false; readonly issues: CoreIssue[] };

// Aliases can blow up a document exponentially; a core never needs many.
const MAX_ALIAS_COUNT = 50;

export function parseYaml(text: string, file: string): YamlParse {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true, version: '1.2', schema: 'core' });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      issues: doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        const rule = e.message.split(/ at line \d+, column \d+/)[0] ?? e.message;
        return { file, field: '', line: pos?.line ?? 1, column: pos?.col ?? 1, message: `YAML syntax error: ${rule}; fix the YAML at this position` };
      }),
    };
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, issues: [{ file, field: '', message: `YAML could not be converted (${why}); use fewer aliases (at most ${MAX_ALIAS_COUNT}) and plain values` }] };
  }
  const locate = (path: FieldPath, opts: { key?: boolean } = {}) => locateIn(doc, lines, path, opts.key === true);
  const reserved: CoreIssue[] = [];
  findReservedKeys(value, [], (path) => {
    const at = locate(path, { key: true });
    reserved.push({ file, field: formatFieldPath(path), ...(at ? { line: at.line, column: at.column } : {}), message: `'${String(path[path.length - 1])}' is a reserved key; rename it` });
  });
  if (reserved.length > 0) return { ok: false, issues: reserved };
  return { ok: true, source: { file, value, locate } };
}

/** `tools.web.approval`, `transport.env[2].value`, `approval.rules["terminal.exec"]`. */
export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(seg)}]`;
  }
  return out;
}

function locateIn(doc: Document, lines: LineCounter, path: FieldPath, atKey: boolean): { line: number; column: number } | undefined {
  let node: unknown = doc.contents;
  let at: number | undefined = rangeStart(node);
  for (const [i, seg] of path.entries()) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg));
      if (pair === undefined) break;
      const last = i === path.length - 1;
      at = (last && atKey ? rangeStart(pair.key) : rangeStart(pair.value) ?? rangeStart(pair.key)) ?? at;
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      if (item === undefined) break;
      at = rangeStart(item) ?? at;
      node = item;
    } else {
      break;
    }
  }
  if (at === undefined) return undefined;
  const pos = lines.linePos(at);
  return { line: pos.line, column: pos.col };
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return Array.isArray(range) ? range[0] : undefined;
}

function findReservedKeys(value: unknown, path: (string | number)[], report: (path: FieldPath) => void): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => findReservedKeys(v, [...path, i], report));
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (RESERVED_KEYS.has(key)) report([...path, key]);
      else findReservedKeys((value as Record<string, unknown>)[key], [...path, key], report);
    }
  }
}
