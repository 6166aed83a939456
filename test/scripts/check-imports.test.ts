import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/test/scripts/x.test.js -> <project>/scripts/check-imports.mjs
const SCRIPT = fileURLToPath(new URL('../../../scripts/check-imports.mjs', import.meta.url));

function fakeTree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'check-imports-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

function check(root: string): { status: number | null; out: string } {
  // The timeout only stops a hung script: loading TypeScript took over 10 s on this 2-core machine
  // at a load average of 20 (issue 17), so it is generous.
  const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

const CLEAN: Record<string, string> = {
  'src/index.ts': "export * from './cli/main.js';\n",
  'src/cli/main.ts': "import { run } from '../effects/runtime.js';\nimport { z } from 'zod';\nimport * as fs from 'node:fs';\nexport { run };\n",
  'src/effects/runtime.ts': [
    '// import { x } from "../cli/main.js";  (a comment is not an import)',
    "const s = \"import '../cli/main.js'\";",
    'const t = `export * from "../cli/main.js" ${s}`;',
    'const re = /import("..\\/cli")/;',
    "import {",
    "  spawnTree,",
    "  type Tree,",
    "} from '../process/tree.js';",
    "export async function run() { return [s, t, re, spawnTree, await import('../redaction/r.js')]; }",
    '',
  ].join('\n'),
  'src/process/tree.ts': "import { kill } from '../../native-helpers/libc.js';\nimport type { R } from '../redaction/r.js';\nexport const spawnTree = kill; export type Tree = R;\n",
  'src/ipc/frame-messages.ts': 'export type Msg = string;\n',
  'src/redaction/r.ts': 'export const r = 1;\nexport type R = number;\n',
  'src/adapters/authored/child/host.ts': "import type { Msg } from '../../../ipc/frame-messages.js';\nimport { loop } from './loop.js';\nimport type { X } from '../../../process/types.js';\nexport const m: Msg | X = loop;\n",
  'src/adapters/authored/child/loop.ts': "import { r } from '../../../ipc/channel.js';\nexport const loop = String(r);\n",
  'src/ipc/channel.ts': "export const r = 1;\n",
  'src/process/types.ts': 'export type X = number;\n',
  'native-helpers/libc.ts': "import { createRequire } from 'node:module';\nexport const kill = createRequire;\n",
};

test('check-imports passes a clean tree and counts its files', () => {
  const root = fakeTree(CLEAN);
  try {
    const r = check(root);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, /OK, 11 files checked/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('check-imports names an upward import, a child entry importing process/, and an unknown folder', () => {
  const root = fakeTree({
    ...CLEAN,
    'src/process/tree.ts': "import { kill } from '../../native-helpers/libc.js';\n\nexport { run } from '../effects/runtime.js';\nexport const spawnTree = kill; export type Tree = number;\n",
    'src/adapters/authored/tool-entry.ts': "import { ok } from '../../ipc/channel.js';\nconst p = await import('../../process/tree.js');\nexport { ok, p };\n",
    'native-helpers/kernel32.ts': "import { r } from '../src/redaction/r.js';\nexport const k = r;\n",
    'src/gadgets/x.ts': 'export const x = 1;\n',
    // Spellings a regex lexer missed: a template literal in import(), TypeScript's import-equals.
    'src/redaction/late.ts': "export const late = () => import(`../effects/runtime.js`);\nimport cli = require('../cli/main.js');\nexport { cli };\n",
  });
  try {
    const r = check(root);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /^src\/process\/tree\.ts:3: process must not import effects \(rule layers: /m);
    assert.match(r.out, /^src\/adapters\/authored\/tool-entry\.ts:2: adapters \(child-side\) must not import process .*\(rule child-side/m);
    assert.match(r.out, /^native-helpers\/kernel32\.ts:1: native-helpers must not import redaction /m);
    assert.match(r.out, /^src\/gadgets\/x\.ts:1: unknown top-level folder 'gadgets'.*add it to the LAYERS table in scripts\/check-imports\.mjs/m);
    assert.match(r.out, /^src\/redaction\/late\.ts:1: redaction must not import effects /m);
    assert.match(r.out, /^src\/redaction\/late\.ts:2: redaction must not import cli /m);
    // The child entry's ipc import and the commented/stringed imports are not reported.
    assert.doesNotMatch(r.out, /tool-entry\.ts:1:/);
    assert.doesNotMatch(r.out, /runtime\.ts/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('check-imports refuses a root without src/ with exit code 2', () => {
  const root = fakeTree({ 'README.md': 'x' });
  try {
    const r = check(root);
    assert.equal(r.status, 2, r.out);
    assert.match(r.out, /has no src\/ folder/);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
