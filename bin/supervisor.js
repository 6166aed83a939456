#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` through `prepare`).
// It runs from a bundle when a current one is there (decisions 67 and 69: a start is on the clock):
// `exec` from its one-file bundle, every other command from the CLI's.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { freshBundle } from './bundles.js';

const argv = process.argv.slice(2);
const root = fileURLToPath(new URL('..', import.meta.url));
const isExec = argv[0] === 'exec';
const bundle = freshBundle(root, isExec ? 'exec-bundle' : 'cli-bundle');
if (bundle) {
  const cli = await import(pathToFileURL(bundle).href);
  await (isExec ? cli.runExecCli(argv) : cli.runCli(argv));
} else {
  const entry = new URL('../dist/src/cli/main.js', import.meta.url);
  if (!existsSync(fileURLToPath(entry))) {
    process.stderr.write('supervisor: dist/src/cli/main.js is missing; run `npm run build` in the project first\n');
    process.exit(2);
  }
  const { runCli } = await import(entry.href);
  await runCli(argv);
}
