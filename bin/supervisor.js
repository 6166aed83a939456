#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` through `prepare`).
// `exec` runs from its one-file bundle when that is current (decision 67: its start is on the clock).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = argv[0] === 'exec' ? (await import('./exec-bundle.js')).freshExecBundle(root) : null;
if (bundle) {
  const { runExecCli } = await import(pathToFileURL(bundle).href);
  await runExecCli(argv);
} else {
  const entry = new URL('../dist/src/cli/main.js', import.meta.url);
  if (!existsSync(fileURLToPath(entry))) {
    process.stderr.write('supervisor: dist/src/cli/main.js is missing; run `npm run build` in the project first\n');
    process.exit(2);
  }
  const { runCli } = await import(entry.href);
  await runCli(argv);
}
