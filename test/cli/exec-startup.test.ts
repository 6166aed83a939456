// What `supervisor exec` loads (issue 17: a tree-safe `timeout` must start fast). Each module is a
// file read, parsed and linked on every start; code for another platform or for the sandbox tier
// has no part in running one command here (decision 65, docs/benchmarks.md). exec runs from a
// one-file bundle of those modules when it is current (decision 67): both are checked.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, tempDir } from '../helpers/procs.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MANIFEST = join(ROOT, 'dist', 'exec-bundle', 'manifest.json');
/** The launcher's choice (bin/exec-bundle.js, plain JavaScript outside the compiled tree). */
const { freshExecBundle } = (await import(new URL('../../../bin/exec-bundle.js', import.meta.url).href)) as { freshExecBundle(root: string): string | null };
const UNBUNDLED = { SUPERVISOR_EXEC_BUNDLE: '0' };
const FOREIGN = (u: string): boolean =>
  /\/src\/process\/sandbox\/|\/native-helpers\/(libproc|kernel32)\.js$/.test(u) || ['linux', 'darwin', 'win32'].some((p) => p !== process.platform && u.includes(`/src/process/${p}/`));
const CORE_LOADER = /\/src\/core\/(index|load-core|input-schema)\.js$|\/node_modules\/(yaml|ajv|re2js)\//;

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/** The ES modules a CLI run loaded, from Node's own loader trace (NODE_DEBUG=esm). */
function modulesLoaded(args: string[], stateDir?: string, env: Record<string, string> = {}): string[] {
  const d = stateDir ? { path: stateDir, remove: () => undefined } : tempDir();
  dirs.push(d);
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_DEBUG: 'esm', SUPERVISOR_STATE_DIR: d.path, ...env },
  });
  assert.equal(r.status, 0, r.stderr.slice(-2000));
  return [...r.stderr.matchAll(/Storing (file:\/\/\S+) /g)].map((m) => m[1]!);
}

test('exec -- true loads only this platform’s process code: no other platform, no sandbox builder', () => {
  const urls = modulesLoaded(['exec', '--', 'true'], undefined, UNBUNDLED);
  // The trace is read at all (a loader that logs differently must fail this test, not pass it).
  assert.ok(urls.some((u) => u.endsWith('/src/cli/exec.js')), `exec.js not in the trace:\n${urls.join('\n')}`);
  assert.ok(urls.some((u) => u.endsWith(`/src/process/${process.platform}/${process.platform}-platform.js`)), 'the host platform is loaded');
  assert.deepEqual(urls.filter(FOREIGN), []);
});

test('the exec bundle holds the same modules, and a current one is what exec loads', { skip: !existsSync(MANIFEST) && 'no bundle built (esbuild not installed)' }, () => {
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as { platform: string; bundle: string; inputs: string[] };
  // Every input a file of the project: an entry that names none would make every bundle look stale.
  assert.deepEqual(manifest.inputs.filter((i) => !existsSync(join(ROOT, i))), []);
  const inputs = manifest.inputs.map((i) => `/${i}`);
  assert.ok(inputs.some((u) => u.endsWith('/src/cli/exec.js')), `exec.js not among the inputs:\n${inputs.join('\n')}`);
  assert.ok(inputs.some((u) => u.endsWith(`/src/process/${process.platform}/${process.platform}-platform.js`)), 'the host platform is bundled');
  assert.deepEqual(inputs.filter(FOREIGN), []);
  assert.deepEqual(inputs.filter((u) => CORE_LOADER.test(u)), []);
  const bundle = freshExecBundle(ROOT);
  if (bundle === null) return; // dist/ rebuilt by tsc alone: exec runs the modules (checked above)
  const urls = modulesLoaded(['exec', '--', 'true']);
  assert.ok(urls.some((u) => u.endsWith('/dist/exec-bundle/exec-main.js')), `the bundle not in the trace:\n${urls.join('\n')}`);
  assert.deepEqual(urls.filter((u) => u.includes('/dist/src/')), [], 'no module of dist/src is loaded beside the bundle');
  assert.deepEqual(urls.filter((u) => CORE_LOADER.test(u)), []);
});

test('the launcher runs the bundle only while it is current, built here, and not turned off', () => {
  const d = tempDir();
  dirs.push(d);
  const input = join(d.path, 'dist', 'src', 'a.js');
  const bundle = join(d.path, 'dist', 'exec-bundle', 'exec-main.js');
  mkdirSync(dirname(input), { recursive: true });
  mkdirSync(dirname(bundle), { recursive: true });
  writeFileSync(input, '');
  writeFileSync(bundle, '');
  const manifest = (platform: string, inputs: string[]): void =>
    writeFileSync(join(d.path, 'dist', 'exec-bundle', 'manifest.json'), JSON.stringify({ platform, bundle: 'exec-main.js', inputs }));
  const at = (file: string, seconds: number): void => utimesSync(file, seconds, seconds);
  at(input, 1_000);
  at(bundle, 2_000);
  manifest(process.platform, ['dist/src/a.js']);
  assert.equal(freshExecBundle(d.path), bundle);
  at(input, 3_000); // tsc ran after the bundle was made
  assert.equal(freshExecBundle(d.path), null, 'an input newer than the bundle');
  at(input, 1_000);
  manifest(process.platform === 'linux' ? 'darwin' : 'linux', ['dist/src/a.js']);
  assert.equal(freshExecBundle(d.path), null, 'a bundle built on another platform');
  manifest(process.platform, ['dist/src/gone.js']);
  assert.equal(freshExecBundle(d.path), null, 'an input that no longer exists');
  manifest(process.platform, ['dist/src/a.js']);
  process.env.SUPERVISOR_EXEC_BUNDLE = '0';
  try {
    assert.equal(freshExecBundle(d.path), null, 'SUPERVISOR_EXEC_BUNDLE=0');
  } finally {
    delete process.env.SUPERVISOR_EXEC_BUNDLE;
  }
  assert.equal(freshExecBundle(d.path), bundle);
});

test('--help, exec and the operator commands load no core loader and no schema compiler (yaml, ajv, re2js)', () => {
  // One state dir: exec makes the store the operator commands then read.
  const state = tempDir();
  dirs.push(state);
  // exec as modules here; the bundle's inputs are checked above.
  for (const args of [['--help'], ['exec', '--', 'true'], ['sessions'], ['approvals']]) {
    const urls = modulesLoaded(args, state.path, UNBUNDLED);
    assert.ok(urls.some((u) => u.endsWith('/src/cli/main.js')), `main.js not in the trace of ${args.join(' ')}`);
    // The error boundary needs the core's error type only (src/core/errors.js), not the loader.
    const heavy = urls.filter((u) => CORE_LOADER.test(u));
    assert.deepEqual(heavy, [], `${args.join(' ')} loaded the core loader`);
  }
});
