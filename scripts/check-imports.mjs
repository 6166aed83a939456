#!/usr/bin/env node
// Checks the import direction between folders (ARCHITECTURE.md) over src/** and native-helpers/**.
// Usage: node scripts/check-imports.mjs [root]   (root defaults to the project this script is in)
// Exit 0: clean; 1: violations (one line each); 2: bad usage.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// Top to bottom. A folder may import its own files and any folder in a LOWER layer, never a
// sibling in the same layer nor anything above. Add new top-level src/ folders here.
const LAYERS = [
  ['cli'],
  // The operator's web page (`supervisor web`): an HTTP layer over the operator's queries, started by the CLI.
  ['web'],
  // The operator's queries and views that the terminal commands and the web page share (one copy).
  ['operator'],
  // Session assembly (core, catalog, store, supervisor, secrets, adapters, runtime) for the CLI and the library.
  ['session'],
  ['runtimes', 'turns'],
  ['effects'],
  // evolve: the evolution runtime (git worktrees, gates, security diff) behind evolve_core.
  ['catalog', 'secrets', 'adapters', 'evolve'],
  // The core loader and the policy layer are read by the catalog; neither needs anything above.
  ['core', 'policy'],
  // Background tasks run trees (process) and keep rows (store); adapters and the CLI drive them.
  ['tasks'],
  // control-plane: the PostgreSQL control plane (members, leases, claims); beside store, whose chain it shares.
  ['process', 'ipc', 'net', 'store', 'control-plane'],
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
  // evolve_core's adapter drives the evolution runtime; evolve never imports adapters.
  'adapters→evolve',
  // The evolution runtime's gate resolves the candidate's catalog with the catalog's own builder;
  // the catalog never imports evolve.
  'evolve→catalog',
  // The PostgreSQL control plane hashes and verifies its audit chain with the store's own code (one
  // definition of a chain); store never imports control-plane.
  'control-plane→store',
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
/**
 * Every module specifier the file names: static imports and re-exports (`import type` too),
 * `import()` and `require()` with a literal, found in TypeScript's own syntax tree, so comments,
 * strings, templates and regex literals are never taken for code. (`ts.preProcessFile` is lighter
 * but reads `/import("../cli")/`, a regex literal, as an import.)
 */
function findImports(text) {
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const starts = lineStarts(text);
  const out = [];
  const add = (literal) => out.push({ at: literal.getStart(source), spec: literal.text, line: lineAt(starts, literal.getStart(source)) });
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier);
    } else if (ts.isCallExpression(node) && node.arguments.length >= 1 && ts.isStringLiteralLike(node.arguments[0])) {
      const callee = node.expression;
      if (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) add(node.arguments[0]);
    } else if (ts.isExternalModuleReference(node) && ts.isStringLiteral(node.expression)) {
      add(node.expression); // import x = require('./x.js')
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal); // import('./x.js').T in a type position
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** 1-based line of `pos`: the number of line starts at or before it. */
function lineAt(starts, pos) {
  let lo = 0;
  let hi = starts.length;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid;
  }
  return lo + 1;
}

process.exitCode = main(process.argv.slice(2));
