#!/usr/bin/env node
// Bundles `supervisor exec` (dist/src/cli/exec-main.js and everything it imports) into one ES
// module, dist/exec-bundle/exec-main.js, after tsc (decision 67). exec is a tree-safe `timeout`:
// its start is on the clock (issue 17), and Node 20 spent a fifth of it resolving, reading and
// linking ~55 modules one by one. Other commands are not bundled.
//
// Every path a module computes from its own location stays what it was: each `import.meta.url` is
// rewritten to the URL of the module's own file in dist/ (tool-host entries, package.json and the
// native addons are found exactly as unbundled). Packages are loaded from node_modules as before,
// except better-sqlite3's JavaScript, which is bundled too (its addon is still opened by path). manifest.json lists the inputs: bin/supervisor.js uses the bundle only
// while none of them is newer than it (a `tsc` without this script leaves it stale, then unused).
// Without esbuild (an install without dev dependencies) no bundle is made and exec runs unbundled.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist', 'exec-bundle');
const entry = path.join(root, 'dist', 'src', 'cli', 'exec-main.js');
const PLATFORMS = ['linux', 'darwin', 'win32'];

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  fs.rmSync(outdir, { recursive: true, force: true });
  console.error('bundle-exec: esbuild is not installed; supervisor exec will run unbundled');
  process.exit(0);
}

/** A path relative to the bundle's directory, as a module specifier (always with ./ or ../). */
function fromOutdir(file) {
  const rel = path.relative(outdir, file).split(path.sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

const keepOwnLocation = {
  name: 'keep-own-location',
  setup(build) {
    // Each module keeps seeing its own file's URL (the bundle sits elsewhere in dist/).
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      const text = await fs.promises.readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'js' };
      const own = `new URL(${JSON.stringify(fromOutdir(args.path))}, import.meta.url).href`;
      return { contents: text.replaceAll('import.meta.url', own), loader: 'js' };
    });
    // Only this platform's process code goes in (decision 65); the others stay where they are,
    // never loaded here (host-platform.js picks by process.platform, and bin/supervisor.js uses the
    // bundle only on the platform that built it).
    build.onResolve({ filter: /^\.\/(linux|darwin|win32)\/\w+-platform\.js$/ }, (args) => {
      const p = args.path.split('/')[1];
      if (!args.importer.endsWith(`${path.sep}host-platform.js`) || p === process.platform || !PLATFORMS.includes(p)) return undefined;
      return { path: fromOutdir(path.join(args.resolveDir, args.path)), external: true };
    });
  },
};

/** Packages whose JavaScript goes into the bundle; every other package stays in node_modules. */
const BUNDLED_PACKAGES = ['better-sqlite3'];
const packagesExternal = {
  name: 'packages-external',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = args.path.startsWith('@') ? args.path.split('/').slice(0, 2).join('/') : args.path.split('/')[0];
      return BUNDLED_PACKAGES.includes(name) ? undefined : { path: args.path, external: true };
    });
  },
};

// Bundled, better-sqlite3 could not find its addon through `bindings` (which looks next to the
// calling file); store/database.ts gives it the addon's path when the addon is where its install
// puts it. So a bundle is only made where that holds.
const addon = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
if (!fs.existsSync(addon)) {
  fs.rmSync(outdir, { recursive: true, force: true });
  console.error(`bundle-exec: ${path.relative(root, addon)} is not there; supervisor exec will run unbundled`);
  process.exit(0);
}

fs.rmSync(outdir, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: [entry],
  outfile: path.join(outdir, 'exec-main.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // better-sqlite3's CommonJS requires Node's modules and its addon at run time.
  banner: { js: "import { createRequire as __bundleCreateRequire } from 'node:module';\nconst require = __bundleCreateRequire(import.meta.url);" },
  // Error classes are told apart by name (cli/failure.ts): renaming on a clash must not change them.
  keepNames: true,
  metafile: true,
  absWorkingDir: root,
  logLevel: 'warning',
  plugins: [keepOwnLocation, packagesExternal],
});
const inputs = Object.keys(result.metafile.inputs).map((p) => path.relative(root, path.resolve(root, p)).split(path.sep).join('/'));
fs.writeFileSync(path.join(outdir, 'manifest.json'), JSON.stringify({ platform: process.platform, bundle: 'exec-main.js', inputs }, null, 1) + '\n');
