#!/usr/bin/env node
// `npm run build`: tsc into dist/, then the CLI's bundles (scripts/bundle.mjs).
//
// tsc builds incrementally (dist/.tsbuildinfo): `npm ci` already builds through `prepare`, so the
// build that `npm test` starts with finds nothing to do and takes a few seconds instead of ~30 s of
// CPU (issue 17: the suite's five minutes include it). tsc's record cannot see an output that was
// deleted after it was written (it would not write it again), so the record is dropped, and the
// build is a full one, whenever a compiled file is missing.
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
/** tsc's record of the last build (tsconfig.json: incremental, tsBuildInfoFile). */
const BUILD_INFO = path.join(root, 'dist', '.tsbuildinfo');
/** The folders tsconfig.json's `include` compiles (rootDir is the project, outDir dist/). */
const SOURCE_DIRS = ['src', 'native-helpers', 'test', 'bench'];

function* sources(dir) {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

/** The first source whose compiled file is not in dist/, or null. */
function missingOutput() {
  for (const d of SOURCE_DIRS) {
    for (const src of sources(path.join(root, d))) {
      const out = path.join(root, 'dist', path.relative(root, src)).replace(/\.ts$/, '.js');
      if (!fs.existsSync(out)) return path.relative(root, out);
    }
  }
  return null;
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.error) {
    console.error(`build: could not start ${cmd}: ${r.error.message}`);
    process.exit(1);
  }
  if (r.status !== 0) process.exit(r.status ?? 1);
}

/** What a build reads: every TypeScript source, the two projects' settings, the installed packages and these scripts. */
function inputs() {
  const files = [];
  for (const d of SOURCE_DIRS) for (const src of sources(path.join(root, d))) files.push(src);
  for (const f of ['tsconfig.json', 'src/web/page/tsconfig.json', 'package.json', 'node_modules/.package-lock.json', 'scripts/build.mjs', 'scripts/bundle.mjs']) files.push(path.join(root, f));
  return files.sort();
}

/** A digest of every input's path, size and modification time (a deleted or added source changes it too). */
function inputsStamp() {
  const h = createHash('sha256');
  for (const f of inputs()) {
    const st = fs.statSync(f, { throwIfNoEntry: false });
    h.update(`${path.relative(root, f)}\0${st ? `${st.size}:${st.mtimeMs}` : 'missing'}\n`);
  }
  return h.digest('hex');
}

/** Written after a build that finished: the inputs it was made from. */
const STAMP = path.join(root, 'dist', '.build-stamp');
/** What the last build made, which must all still be there for it to count. */
const OUTPUTS = [BUILD_INFO, path.join(root, 'dist', 'src', 'web', 'page', 'app.js'), path.join(root, 'dist', 'cli-bundle', 'manifest.json'), path.join(root, 'dist', 'exec-bundle', 'manifest.json')];

if (fs.existsSync(BUILD_INFO)) {
  const missing = missingOutput();
  if (missing) {
    console.error(`build: ${missing} is missing; compiling everything`);
    fs.rmSync(BUILD_INFO);
  }
}
// Nothing changed since the last build (npm test right after npm ci's): tsc would still spend ~4 s
// of CPU finding that out, its page project ~1.5 s and the bundles ~2 s (issue 17).
const stamp = inputsStamp();
if (fs.existsSync(BUILD_INFO) && OUTPUTS.every((f) => fs.existsSync(f)) && fs.readFileSync(STAMP, { encoding: 'utf8', flag: 'a+' }).trim() === stamp) {
  console.log('build: no source, setting or package changed since the last build; nothing to do');
  process.exit(0);
}
fs.rmSync(STAMP, { force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
run(process.execPath, [tsc, '-p', 'tsconfig.json']);
// The web page's script is compiled for the browser (DOM types) by a project of its own; its record
// is dropped the same way when the script is missing.
const PAGE_OUT = path.join(root, 'dist', 'src', 'web', 'page');
if (!fs.existsSync(path.join(PAGE_OUT, 'app.js'))) fs.rmSync(path.join(PAGE_OUT, '.tsbuildinfo'), { force: true });
run(process.execPath, [tsc, '-p', path.join('src', 'web', 'page', 'tsconfig.json')]);
run(process.execPath, [path.join(root, 'scripts', 'bundle.mjs')]);
// The bundle may be skipped without esbuild (bundle.mjs says so); the stamp records the inputs either way.
fs.writeFileSync(STAMP, `${stamp}\n`);
