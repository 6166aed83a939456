#!/usr/bin/env node
// Runs the compiled tests with Node's built-in runner. Node 20 does not expand globs for --test,
// so the files are listed explicitly. Usage: node scripts/run-tests.mjs [filter...]
// A filter is a substring of the file path (e.g. `cgroup` or `test/cli/`); several are OR-ed.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const testDir = path.join(root, 'dist', 'test');

function* walk(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* walk(p);
    else if (e.isFile() && e.name.endsWith('.test.js')) yield p;
  }
}

const filters = process.argv.slice(2);
const flag = filters.find((f) => f.startsWith('-'));
if (flag) {
  console.error(`run-tests: unknown option '${flag}'; arguments are path substrings, e.g. node scripts/run-tests.mjs cgroup`);
  process.exit(2);
}

if (!fs.existsSync(testDir)) {
  console.error(`run-tests: ${path.relative(root, testDir)} does not exist; build first: npx tsc -p .`);
  process.exit(1);
}
const all = [...walk(testDir)].map((p) => path.relative(root, p).split(path.sep).join('/')).sort();
const files = filters.length === 0 ? all : all.filter((f) => filters.some((s) => f.includes(s)));
if (all.length === 0) {
  console.error(`run-tests: no *.test.js under ${path.relative(root, testDir)}; build first: npx tsc -p .`);
  process.exit(1);
}
if (files.length === 0) {
  console.error(`run-tests: no test file matches ${filters.map((f) => `'${f}'`).join(', ')} (of ${all.length} under dist/test)`);
  process.exit(1);
}

console.log(`run-tests: ${files.length} file(s)${filters.length ? ` matching ${filters.join(', ')}` : ''}:`);
for (const f of files) console.log(`  ${f}`);

const child = spawn(process.execPath, ['--test', '--test-reporter=spec', '--test-concurrency=1', ...files], {
  cwd: root,
  stdio: 'inherit',
});
// Pass a termination on to the runner, so it prints what it has and its own children go too.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  });
}
child.on('error', (err) => {
  console.error(`run-tests: could not start ${process.execPath}: ${err.message}`);
  process.exitCode = 1;
});
// 'close' after 'exit': the inherited stdout holds the runner's final summary (tests/pass/fail).
child.on('close', (code, signal) => {
  if (signal) console.error(`run-tests: the test runner was killed by ${signal}`);
  process.exitCode = code ?? 1;
});
