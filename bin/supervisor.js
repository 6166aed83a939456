#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (run by `npm ci` through `prepare`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write('supervisor: dist/src/cli/main.js is missing; run `npm run build` in the project first\n');
  process.exit(2);
}
const { runCli } = await import(entry.href);
await runCli(process.argv.slice(2));
