// What the CLI loads (issue 17: a tree-safe `timeout` and the operator's commands must start fast).
// Each module is a file read, parsed and linked on every start; code for another platform or for
// the sandbox tier has no part in running one command here (decision 65, docs/benchmarks.md).
// `exec` runs from a one-file bundle and every other command from the CLI's split bundle when they
// are current (decisions 67 and 69): the modules, the bundles and the launcher's choice are checked.
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI, tempDir } from '../helpers/procs.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The launcher's choice (bin/bundles.js, plain JavaScript outside the compiled tree). */
const { freshBundle, BUILD_RECORDS } = (await import(new URL('../../../bin/bundles.js', import.meta.url).href)) as {
  freshBundle(root: string, name: string): string | null;
  BUILD_RECORDS: string[];
};
interface Contents {
  inputs: string[];
  /** Output file name → the inputs it holds. */
  outputs: Record<string, string[]>;
}
const contents = (name: string): Contents => JSON.parse(readFileSync(join(ROOT, 'dist', name, 'contents.json'), 'utf8')) as Contents;
const built = (name: string): boolean => existsSync(join(ROOT, 'dist', name, 'contents.json'));
const UNBUNDLED = { SUPERVISOR_BUNDLE: '0' };
const FOREIGN = (u: string): boolean =>
  /\/src\/process\/sandbox\/|\/native-helpers\/(libproc|kernel32)\.js$/.test(u) || ['linux', 'darwin', 'win32'].some((p) => p !== process.platform && u.includes(`/src/process/${p}/`));
const CORE_LOADER = /\/src\/core\/(index|load-core|input-schema)\.js$|\/node_modules\/(yaml|ajv|re2js)\//;
const MCP_SDK = /\/node_modules\/@modelcontextprotocol\//;

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
    // The loader's trace of a start that loads the core and the MCP SDK is several MiB.
    maxBuffer: 256 * 1024 * 1024,
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

test('the exec bundle holds the same modules, and a current one is what exec loads', { skip: !built('exec-bundle') && 'no bundle built (esbuild not installed)' }, (t) => {
  const { inputs: files } = contents('exec-bundle');
  // Every input a file of the project: an entry that names none would be a bundle of nothing.
  assert.deepEqual(files.filter((i) => !existsSync(join(ROOT, i))), []);
  const inputs = files.map((i) => `/${i}`);
  assert.ok(inputs.some((u) => u.endsWith('/src/cli/exec.js')), `exec.js not among the inputs:\n${inputs.join('\n')}`);
  assert.ok(inputs.some((u) => u.endsWith(`/src/process/${process.platform}/${process.platform}-platform.js`)), 'the host platform is bundled');
  assert.deepEqual(inputs.filter(FOREIGN), []);
  assert.deepEqual(inputs.filter((u) => CORE_LOADER.test(u)), []);
  if (freshBundle(ROOT, 'exec-bundle') === null) {
    t.skip('the bundle is older than the last compile (tsc without npm run build): exec runs the modules, checked above');
    return;
  }
  const urls = modulesLoaded(['exec', '--', 'true']);
  assert.ok(urls.some((u) => u.endsWith('/dist/exec-bundle/exec-main.js')), `the bundle not in the trace:\n${urls.join('\n')}`);
  assert.deepEqual(urls.filter((u) => u.includes('/dist/src/')), [], 'no module of dist/src is loaded beside the bundle');
  assert.deepEqual(urls.filter((u) => CORE_LOADER.test(u)), []);
});

test('the CLI bundle: plan loads it and no module of dist/src; --help and the operator commands load no core loader and no MCP SDK from it', { skip: !built('cli-bundle') && 'no bundle built (esbuild not installed)' }, (t) => {
  const { inputs, outputs } = contents('cli-bundle');
  assert.deepEqual(inputs.filter((i) => !existsSync(join(ROOT, i))), []);
  assert.ok(inputs.some((i) => i.endsWith('dist/src/cli/run.js')), 'run.js is bundled');
  assert.ok(inputs.some((i) => MCP_SDK.test(`/${i}`)), 'the MCP SDK is bundled');
  if (freshBundle(ROOT, 'cli-bundle') === null) {
    t.skip('the bundle is older than the last compile (tsc without npm run build): the CLI runs the modules, checked below');
    return;
  }
  /** The inputs of the bundle's files a start loaded. */
  const inputsLoaded = (urls: string[]): string[] => urls.filter((u) => u.includes('/dist/cli-bundle/')).flatMap((u) => outputs[basename(u)] ?? [`(unknown output ${u})`]);
  const state = tempDir();
  dirs.push(state);
  modulesLoaded(['exec', '--', 'true'], state.path); // makes the store the operator commands read
  const plan = modulesLoaded(['plan', fileURLToPath(new URL('../../../examples/demo/', import.meta.url))], state.path);
  assert.ok(plan.some((u) => u.endsWith('/dist/cli-bundle/main.js')), `the bundle not in the trace:\n${plan.join('\n')}`);
  assert.deepEqual(plan.filter((u) => u.includes('/dist/src/')), [], 'no module of dist/src is loaded beside the bundle');
  assert.ok(inputsLoaded(plan).some((i) => i.endsWith('dist/src/core/load-core.js')), 'plan loads the core loader from the bundle');
  for (const args of [['--help'], ['sessions'], ['approvals']]) {
    const loaded = inputsLoaded(modulesLoaded(args, state.path)).map((i) => `/${i}`);
    assert.ok(loaded.some((u) => u.endsWith('/src/cli/main.js')), `main.js not loaded by ${args.join(' ')}`);
    assert.deepEqual(loaded.filter((u) => CORE_LOADER.test(u) || MCP_SDK.test(u)), [], `${args.join(' ')} loaded the core loader or the MCP SDK`);
  }
});

test('the launcher runs a bundle only while it is newer than the last compile and install, built here, and not turned off', () => {
  const d = tempDir();
  dirs.push(d);
  const records = BUILD_RECORDS.map((r) => join(d.path, r));
  const bundle = join(d.path, 'dist', 'cli-bundle', 'main.js');
  for (const f of [...records, bundle]) {
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, '');
  }
  const manifest = (platform: string, name = 'main.js'): void => writeFileSync(join(d.path, 'dist', 'cli-bundle', 'manifest.json'), JSON.stringify({ platform, bundle: name }));
  const at = (file: string, seconds: number): void => utimesSync(file, seconds, seconds);
  for (const r of records) at(r, 1_000);
  at(bundle, 2_000);
  manifest(process.platform);
  assert.equal(freshBundle(d.path, 'cli-bundle'), bundle);
  for (const r of records) {
    at(r, 3_000); // tsc, or npm install, ran after the bundle was made
    assert.equal(freshBundle(d.path, 'cli-bundle'), null, `${r} newer than the bundle`);
    at(r, 1_000);
  }
  assert.equal(freshBundle(d.path, 'exec-bundle'), null, 'another bundle, not built');
  manifest(process.platform === 'linux' ? 'darwin' : 'linux');
  assert.equal(freshBundle(d.path, 'cli-bundle'), null, 'a bundle built on another platform');
  manifest(process.platform, 'gone.js');
  assert.equal(freshBundle(d.path, 'cli-bundle'), null, 'a bundle file that is not there');
  manifest(process.platform);
  process.env.SUPERVISOR_BUNDLE = '0';
  try {
    assert.equal(freshBundle(d.path, 'cli-bundle'), null, 'SUPERVISOR_BUNDLE=0');
  } finally {
    delete process.env.SUPERVISOR_BUNDLE;
  }
  assert.equal(freshBundle(d.path, 'cli-bundle'), bundle);
});

test('--help, exec and the operator commands load no core loader and no schema compiler (yaml, ajv, re2js) as modules', () => {
  // One state dir: exec makes the store the operator commands then read.
  const state = tempDir();
  dirs.push(state);
  // As modules here; the bundles' contents are checked above.
  for (const args of [['--help'], ['exec', '--', 'true'], ['sessions'], ['approvals']]) {
    const urls = modulesLoaded(args, state.path, UNBUNDLED);
    assert.ok(urls.some((u) => u.endsWith('/src/cli/main.js')), `main.js not in the trace of ${args.join(' ')}`);
    // The error boundary needs the core's error type only (src/core/errors.js), not the loader.
    const heavy = urls.filter((u) => CORE_LOADER.test(u));
    assert.deepEqual(heavy, [], `${args.join(' ')} loaded the core loader`);
  }
});
