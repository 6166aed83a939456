#!/usr/bin/env node
// Checks the import direction between folders (ARCHITECTURE.md) over src/** and native-helpers/**.
// Usage: node scripts/check-imports.mjs [root]   (root defaults to the project this script is in)
// Exit 0: clean; 1: violations (one line each); 2: bad usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

// Top to bottom. A folder may import its own files and any folder in a LOWER layer, never a
// sibling in the same layer nor anything above. Add new top-level src/ folders here.
const LAYERS = [
  ['cli'],
  ['runtimes', 'turns'],
  ['effects'],
  ['catalog', 'secrets', 'adapters'],
  // The core loader and the policy layer are read by the catalog; neither needs anything above.
  ['core', 'policy'],
  // Background tasks run trees (process) and keep rows (store); adapters and the CLI drive them.
  ['tasks'],
  ['process', 'ipc', 'net', 'store'],
  ['redaction'],
  ['native-helpers'],
];
// Same-layer imports the architecture explicitly accepts, as 'from→to', each with its reason.
const SIBLING_IMPORTS = new Set([
  // The process registry persists spawn records before a child can do harm; store never imports process.
  'process→store',
  // The core loader checks grants with the policy's own parser, so a core that loads is checked at
  // dispatch by the same grammar; policy never imports core.
  'core→policy',
  // The local runtime is the turn engine behind the one runtime interface; turns never imports runtimes.
  'runtimes→turns',
]);
const CHAIN = LAYERS.map((l) => l.join(', ')).join(' → ');
const RANK = new Map();
LAYERS.forEach((layer, i) => layer.forEach((f) => RANK.set(f, LAYERS.length - i)));
const layerOf = (folder) => (LAYERS.find((l) => l.includes(folder)) ?? []).join(', ');
const INDEX = 'index'; // src/index.ts: the package entry, may import anything, nothing imports it.
RANK.set(INDEX, Number.POSITIVE_INFINITY);

const CHILD_RULE = 'rule child-side: child entry points import only src/ipc/** and files named *-messages.ts, *-types.ts or types.ts';
const SOURCE_EXT = /\.(?:d\.ts|ts|tsx|mts|cts)$/;
const SPEC_EXT = /\.(?:d\.ts|ts|tsx|mts|cts|js|jsx|mjs|cjs)$/;

function main(argv) {
  if (argv.length > 1 || argv.some((a) => a.startsWith('-'))) {
    console.error('usage: node scripts/check-imports.mjs [root]   (root: a directory holding src/ and native-helpers/)');
    return 2;
  }
  const root = path.resolve(argv[0] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  if (!fs.existsSync(path.join(root, 'src'))) {
    console.error(`check-imports: ${root} has no src/ folder; pass the project root as the argument`);
    return 2;
  }
  const files = [...walk(root, 'src'), ...walk(root, 'native-helpers')].sort();
  const violations = [];
  const unknownReported = new Set();
  let imports = 0;
  for (const rel of files) {
    const from = classify(rel);
    if (from.unknown) {
      if (!unknownReported.has(from.folder)) {
        unknownReported.add(from.folder);
        violations.push(`${rel}:1: unknown top-level ${from.kind} '${from.folder}' under src/ (rule layers: add it to the LAYERS table in scripts/check-imports.mjs)`);
      }
      continue;
    }
    const text = fs.readFileSync(path.join(root, rel), 'utf8');
    const childSide = isChildSide(rel);
    for (const { spec, line } of findImports(text)) {
      imports++;
      if (!spec.startsWith('.') && !spec.startsWith('/')) continue; // packages and node: builtins
      const targetAbs = path.resolve(path.dirname(path.join(root, rel)), spec);
      const target = path.relative(root, targetAbs).split(path.sep).join('/');
      const to = classify(target);
      if (to.outside) continue; // e.g. ../package.json: not part of the layer chain
      const where = `${rel}:${line}`;
      if (childSide) {
        if (!childMayImport(target)) {
          violations.push(`${where}: ${from.folder} (child-side) must not import ${to.folder} ('${spec}') (${CHILD_RULE})`);
          continue;
        }
      }
      if (to.unknown) {
        violations.push(`${where}: ${from.folder} must not import ${to.folder} (rule layers: '${to.folder}' is not in the layer table; add it to LAYERS in scripts/check-imports.mjs)`);
        continue;
      }
      if (to.folder === from.folder) continue;
      const a = RANK.get(from.folder);
      const b = RANK.get(to.folder);
      if (b < a || SIBLING_IMPORTS.has(`${from.folder}→${to.folder}`)) continue;
      const why =
        to.folder === INDEX
          ? 'src/index.ts is the package entry; import the module itself'
          : b === a
            ? `${from.folder} and ${to.folder} share the layer "${layerOf(from.folder)}"; a folder imports only itself and lower layers, or add a reasoned '${from.folder}→${to.folder}' entry to SIBLING_IMPORTS in scripts/check-imports.mjs`
            : `${to.folder} is above ${from.folder} in ${CHAIN}`;
      violations.push(`${where}: ${from.folder} must not import ${to.folder} (rule layers: ${why})`);
    }
  }
  if (violations.length > 0) {
    for (const v of violations) console.log(v);
    console.error(`check-imports: ${violations.length} violation(s) in ${files.length} files`);
    return 1;
  }
  console.log(`check-imports: OK, ${files.length} files checked, ${imports} imports, no upward or child-side violations`);
  return 0;
}

function* walk(root, dir) {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return;
  for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
    if (e.name.startsWith('.') || e.name === 'node_modules') continue;
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) yield* walk(root, rel);
    else if (e.isFile() && SOURCE_EXT.test(e.name)) yield rel;
  }
}

/** Which layer folder a root-relative path belongs to. */
function classify(rel) {
  const parts = rel.split('/');
  if (parts[0] === 'native-helpers') return { folder: 'native-helpers' };
  if (parts[0] !== 'src' || parts.length < 2) return { outside: true, folder: parts[0] };
  if (parts.length === 2) {
    if (stem(parts[1]) === 'index') return { folder: INDEX };
    return { unknown: true, kind: 'file', folder: parts[1] };
  }
  const folder = parts[1];
  return RANK.has(folder) && folder !== INDEX ? { folder } : { unknown: true, kind: 'folder', folder };
}

function stem(name) {
  return name.replace(SPEC_EXT, '');
}

function isChildSide(rel) {
  if (!rel.startsWith('src/')) return false;
  const parts = rel.split('/');
  const base = stem(parts[parts.length - 1]);
  return parts.slice(1, -1).some((p) => p === 'entry' || p === 'child') || base.endsWith('-child') || base.endsWith('-entry');
}

function childMayImport(target) {
  if (!target.startsWith('src/')) return classify(target).outside === true && !target.startsWith('native-helpers/');
  if (target.startsWith('src/ipc/')) return true;
  const base = stem(target.split('/').pop());
  if (base === 'types' || base.endsWith('-types') || base.endsWith('-messages')) return true;
  // Another child-side file obeys this same rule, so the child's whole import closure stays ipc + types.
  return isChildSide(target);
}

/** Import specifiers with their 1-based line, from code with comments and strings understood. */
function findImports(text) {
  const { masked, inString } = lex(text);
  const patterns = [
    /\bimport\s+(?:type\s+)?(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*from\s*(['"])([^'"\n]+)\1/g,
    /\bexport\s+(?:type\s+)?(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(['"])([^'"\n]+)\1/g,
    /\bimport\s*(['"])([^'"\n]+)\1/g,
    /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*[,)]/g,
    /\brequire\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
  ];
  const seen = new Set();
  const out = [];
  for (const re of patterns) {
    for (const m of masked.matchAll(re)) {
      const at = m.index;
      if (inString[at] || masked[at - 1] === '.' || seen.has(at)) continue;
      seen.add(at);
      out.push({ at, spec: m[2], line: lineOf(text, at) });
    }
  }
  return out.sort((x, y) => x.at - y.at);
}

function lineOf(text, index) {
  let n = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}

const REGEX_AFTER = new Set('(,=:[!&|?{};+-*%<>~^'.split(''));
const REGEX_AFTER_WORDS = new Set(['return', 'typeof', 'case', 'do', 'else', 'in', 'of', 'new', 'delete', 'void', 'throw', 'instanceof', 'yield', 'await']);

/**
 * Blanks comments (newlines kept, so lines still count) and marks the characters inside string,
 * template and regex literals, so `import` inside a string or a comment is never taken for code.
 */
function lex(src) {
  const out = src.split('');
  const inString = new Uint8Array(src.length);
  const stack = []; // brace depths of the template literals we are inside a ${ } of
  let depth = 0;
  let i = 0;
  const prevSignificant = (k) => {
    let j = k - 1;
    while (j >= 0 && /\s/.test(out[j])) j--;
    if (j < 0) return { ch: '', word: '' };
    let w = j;
    while (w >= 0 && /[\w$]/.test(out[w])) w--;
    return { ch: out[j], word: out.slice(w + 1, j + 1).join('') };
  };
  const scanTemplate = () => {
    // At the first char after ` or after the } closing a ${ }.
    while (i < src.length) {
      const c = src[i];
      if (c === '\\') {
        inString[i] = inString[i + 1] = 1;
        i += 2;
        continue;
      }
      if (c === '`') {
        inString[i] = 1;
        i++;
        return;
      }
      if (c === '$' && src[i + 1] === '{') {
        inString[i] = inString[i + 1] = 1;
        i += 2;
        stack.push(depth);
        depth++;
        return;
      }
      inString[i] = 1;
      i++;
    }
  };
  while (i < src.length) {
    const c = src[i];
    const n = src[i + 1];
    if (c === '/' && n === '/') {
      while (i < src.length && src[i] !== '\n') out[i++] = ' ';
    } else if (c === '/' && n === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      for (; i < stop; i++) if (src[i] !== '\n') out[i] = ' ';
    } else if (c === "'" || c === '"') {
      inString[i++] = 1;
      while (i < src.length && src[i] !== c && src[i] !== '\n') {
        if (src[i] === '\\') inString[i++] = 1;
        inString[i++] = 1;
      }
      inString[i++] = 1;
    } else if (c === '`') {
      inString[i++] = 1;
      scanTemplate();
    } else if (c === '{') {
      depth++;
      i++;
    } else if (c === '}') {
      depth--;
      i++;
      if (stack.length > 0 && stack[stack.length - 1] === depth) {
        stack.pop();
        inString[i - 1] = 1;
        scanTemplate();
      }
    } else if (c === '/') {
      const p = prevSignificant(i);
      const isRegex = p.ch === '' || REGEX_AFTER.has(p.ch) || REGEX_AFTER_WORDS.has(p.word);
      if (!isRegex) {
        i++;
        continue;
      }
      inString[i++] = 1;
      let inClass = false;
      while (i < src.length && src[i] !== '\n') {
        const d = src[i];
        inString[i] = 1;
        if (d === '\\') {
          inString[i + 1] = 1;
          i += 2;
          continue;
        }
        i++;
        if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
      }
    } else {
      i++;
    }
  }
  return { masked: out.join(''), inString };
}

process.exitCode = main(process.argv.slice(2));
