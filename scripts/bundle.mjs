#!/usr/bin/env node
// Bundles the CLI after tsc (decisions 67 and 69), so that a start reads a few files instead of
// resolving, reading and linking hundreds of ES and CommonJS modules one by one:
// - dist/exec-bundle/: `supervisor exec` (cli/exec-main.js and what it imports) as one file. exec
//   is a tree-safe `timeout`, its start is on the clock (issue 17). Packages stay in node_modules,
//   except better-sqlite3's JavaScript.
// - dist/cli-bundle/: every other command (cli/main.js), split at its dynamic imports so that a
//   command still loads only what it needs (the operator's `sessions` no MCP SDK). Packages are
//   bundled too (the MCP SDK, zod, ajv, yaml, and undici for the commands that load it: ~0.4 CPU-s
//   of module loading less per `run`), except ffi-rs, a native addon.
//
// Every path a module computes from its own location stays what it was: each `import.meta.url` in
// the project's modules is rewritten to the URL of the module's own file in dist/ (tool-host
// entries, package.json and the native addons are found exactly as unbundled).
// bin/supervisor.js uses a bundle only while tsc's and npm's records of the last compile and install
// are older than it (a `tsc` or an `npm install` without this script leaves it stale, then unused);
// contents.json lists each bundle's inputs, and each output file's, for the tests.
// Without esbuild (an install without dev dependencies) no bundle is made and the CLI runs from
// the modules of dist/src.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const PLATFORMS = ['linux', 'darwin', 'win32'];

/** The bundles: where each goes, its entry under dist/src, and which packages it keeps outside. */
const BUNDLES = [
  {
    name: 'exec-bundle',
    entry: 'cli/exec-main.js',
    // One file: exec's few modules load in one read.
    split: false,
    bundlesPackage: (name) => name === 'better-sqlite3',
  },
  {
    name: 'cli-bundle',
    entry: 'cli/main.js',
    split: true,
    bundlesPackage: (name) => name !== 'ffi-rs',
  },
];

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  for (const b of BUNDLES) fs.rmSync(path.join(root, 'dist', b.name), { recursive: true, force: true });
  console.error('bundle: esbuild is not installed; the CLI will run from the modules of dist/src');
  process.exit(0);
}

// Bundled, better-sqlite3 could not find its addon through `bindings` (which looks next to the
// calling file); store/database.ts gives it the addon's path when the addon is where its install
// puts it. So bundles are only made where that holds.
const addon = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
if (!fs.existsSync(addon)) {
  for (const b of BUNDLES) fs.rmSync(path.join(root, 'dist', b.name), { recursive: true, force: true });
  console.error(`bundle: ${path.relative(root, addon)} is not there; the CLI will run from the modules of dist/src`);
  process.exit(0);
}

/** A path relative to the directory `outdir`, as a module specifier (always with ./ or ../). */
function relativeSpecifier(outdir, file) {
  const rel = path.relative(outdir, file).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

function keepOwnLocation(outdir) {
  const dist = path.join(root, 'dist') + path.sep;
  return {
    name: 'keep-own-location',
    setup(build) {
      // Each of the project's modules keeps seeing its own file's URL (the bundle sits elsewhere
      // in dist/). A chunk's own URL is in the same folder as the bundle, so one relative URL
      // serves every chunk.
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!args.path.startsWith(dist)) return undefined;
        const text = await fs.promises.readFile(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
        const own = `new URL(${JSON.stringify(relativeSpecifier(outdir, args.path))}, import.meta.url).href`;
        return { contents: text.replaceAll('import.meta.url', own), loader: 'js' };
      });
      // Only this platform's process code goes in (decision 65); the others stay where they are,
      // never loaded here (host-platform.js picks by process.platform, and bin/supervisor.js uses
      // a bundle only on the platform that built it).
      build.onResolve({ filter: /^\.\/(linux|darwin|win32)\/\w+-platform\.js$/ }, (args) => {
        const p = args.path.split('/')[1];
        if (!args.importer.endsWith(`${path.sep}host-platform.js`) || p === process.platform || !PLATFORMS.includes(p)) return undefined;
        return { path: relativeSpecifier(outdir, path.join(args.resolveDir, args.path)), external: true };
      });
    },
  };
}

function packagesOutside(bundlesPackage) {
  return {
    name: 'packages-outside',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.path.startsWith('node:')) return { path: args.path, external: true };
        const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
        return bundlesPackage(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

async function bundle({ name, entry, split, bundlesPackage }) {
  const outdir = path.join(root, 'dist', name);
  fs.rmSync(outdir, { recursive: true, force: true });
  const entryFile = path.join(root, 'dist', 'src', entry);
  const result = await esbuild.build({
    entryPoints: [entryFile],
    ...(split ? { outdir, splitting: true, entryNames: '[name]', chunkNames: 'chunk-[hash]' } : { outfile: path.join(outdir, path.basename(entry)) }),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // CommonJS packages (better-sqlite3, ajv, undici) require Node's modules at run time.
    banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module';\nconst require = __bundleCreateRequire(import.meta.url);" },
    // Error classes are told apart by name (cli/failure.ts): renaming on a clash must not change them.
    keepNames: true,
    metafile: true,
    absWorkingDir: root,
    logLevel: 'warning',
    plugins: [keepOwnLocation(outdir), packagesOutside(bundlesPackage)],
  });
  const inputs = Object.keys(result.metafile.inputs).map((p) => path.relative(root, path.resolve(root, p)).split(path.sep).join('/'));
  // Which inputs each output file holds: the tests check what a command's start loads.
  const outputs = Object.fromEntries(
    Object.entries(result.metafile.outputs).map(([out, o]) => [path.basename(out), Object.keys(o.inputs).map((p) => path.relative(root, path.resolve(root, p)).split(path.sep).join('/'))]),
  );
  // What the launcher reads on every start (bin/bundles.js): small.
  fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ platform: process.platform, bundle: path.basename(entry) }) + '\n');
  fs.writeFileSync(path.join(outdir, 'contents.json'), JSON.stringify({ inputs, outputs }, null, 1) + '\n');
}

for (const b of BUNDLES) await bundle(b);
