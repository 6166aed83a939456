// What `supervisor exec` loads (issue 17: a tree-safe `timeout` must start fast). Each module is a
// file read, parsed and linked on every start; code for another platform or for the sandbox tier
// has no part in running one command here (decision 65, docs/benchmarks.md).
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { CLI, tempDir } from '../helpers/procs.js';

const dirs: { remove(): void }[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/** The ES modules a CLI run loaded, from Node's own loader trace (NODE_DEBUG=esm). */
function modulesLoaded(args: string[], stateDir?: string): string[] {
  const d = stateDir ? { path: stateDir, remove: () => undefined } : tempDir();
  dirs.push(d);
  const r = spawnSync(process.execPath, [CLI, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_DEBUG: 'esm', SUPERVISOR_STATE_DIR: d.path },
  });
  assert.equal(r.status, 0, r.stderr.slice(-2000));
  return [...r.stderr.matchAll(/Storing (file:\/\/\S+) /g)].map((m) => m[1]!);
}

test('exec -- true loads only this platform’s process code: no other platform, no sandbox builder', () => {
  const urls = modulesLoaded(['exec', '--', 'true']);
  // The trace is read at all (a loader that logs differently must fail this test, not pass it).
  assert.ok(urls.some((u) => u.endsWith('/src/cli/exec.js')), `exec.js not in the trace:\n${urls.join('\n')}`);
  assert.ok(urls.some((u) => u.endsWith(`/src/process/${process.platform}/${process.platform}-platform.js`)), 'the host platform is loaded');
  const foreign = urls.filter((u) =>
    /\/src\/process\/sandbox\/|\/native-helpers\/(libproc|kernel32)\.js$/.test(u) ||
    ['linux', 'darwin', 'win32'].some((p) => p !== process.platform && u.includes(`/src/process/${p}/`)),
  );
  assert.deepEqual(foreign, []);
});

test('--help, exec and the operator commands load no core loader and no schema compiler (yaml, ajv, re2js)', () => {
  // One state dir: exec makes the store the operator commands then read.
  const state = tempDir();
  dirs.push(state);
  for (const args of [['--help'], ['exec', '--', 'true'], ['sessions'], ['approvals']]) {
    const urls = modulesLoaded(args, state.path);
    assert.ok(urls.some((u) => u.endsWith('/src/cli/main.js')), `main.js not in the trace of ${args.join(' ')}`);
    // The error boundary needs the core's error type only (src/core/errors.js), not the loader.
    const heavy = urls.filter((u) => /\/src\/core\/(index|load-core|input-schema)\.js$|\/node_modules\/(yaml|ajv|re2js)\//.test(u));
    assert.deepEqual(heavy, [], `${args.join(' ')} loaded the core loader`);
  }
});
