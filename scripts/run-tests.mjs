#!/usr/bin/env node
// Runs the compiled tests with Node's built-in runner. Node 20 does not expand globs for --test,
// so the files are listed explicitly. Usage: node scripts/run-tests.mjs [filter...]
// A filter is a substring of the file path (e.g. `cgroup` or `test/cli/`); several are OR-ed.
//
// Two groups, one after the other, each reported file by file with the spec reporter, then one total:
// 1. parallel: every file not listed in SERIAL, TEST_CONCURRENCY (default 4) files at a time, each
//    in its own process. These files share nothing: each makes its own temp dirs (mkdtemp), ports
//    (0), spawn ids and cgroups, and sets env vars only in its own process. Most of their time is
//    spent waiting on child processes and timers, so four at a time fit two cores.
// 2. serial: the files in SERIAL, one at a time, after the parallel group has ended, because they
//    measure time on the machine (the reason is next to each). TEST_SERIAL_CONCURRENCY=N runs N at
//    once, to measure: two at a time failed a bound at load 16-19 (decision 121).
// TEST_CPU=1 adds each file's CPU-seconds (perf stat: the file and every process under it) to its
// line and each group's total: the suite is CPU-bound, so that is the figure to compare.
// This script schedules the files itself, one `node FILE` each with the reporters (what `node
// --test` starts per file, without a runner process above it), because `node --test` starts files
// in its own (path) order: the slowest files (SLOW_FIRST) began last and ran alone at the end
// (measured: 66 s of a 400 s run with one file running). Each file's report is printed when the file
// ends, whole, with its time. The exit code is non-zero if any file failed, hung or could not run.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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
  console.error(`run-tests: ${path.relative(root, testDir)} does not exist; build first: npm run build`);
  process.exit(1);
}
const all = [...walk(testDir)].map((p) => path.relative(root, p).split(path.sep).join('/')).sort();
const files = filters.length === 0 ? all : all.filter((f) => filters.some((s) => f.includes(s)));
if (all.length === 0) {
  console.error(`run-tests: no *.test.js under ${path.relative(root, testDir)}; build first: npm run build`);
  process.exit(1);
}
if (files.length === 0) {
  console.error(`run-tests: no test file matches ${filters.map((f) => `'${f}'`).join(', ')} (of ${all.length} under dist/test)`);
  process.exit(1);
}


/**
 * Files that run alone, after the parallel group. Each measures wall time or event-loop lag with a
 * bound that a machine busy with other test files could break through no fault of the code (two of
 * these at once did: decision 121); each prints its measured values beside its bounds. Keyed by the
 * path under dist/test.
 */
const SERIAL = new Map([
  // (The thread tier's concurrency and the hostile schemas' stalls are asserted by the host's own
  // clock and by CPU time, which load does not stretch: they run in the parallel group.)
  // exec --timeout 2 must end in 1.9-4.5 s as the supervisor measures it, a second Ctrl-C kill in
  // < 10 s: in the parallel group at load 25-30 the timeout run measured 17.8 s (issue 17's first
  // parallel run); alone at the same load it passed.
  ['cli/exec.test.js', 'the supervisor\'s measured duration of a 2 s timeout is bounded to 1.9-4.5 s'],
  // Issue 16: each operator command (a cold CLI start) answers within 2 s while a run is busy.
  ['cli/operator-long-wait.test.js', 'each operator command answers within 2 s of wall time'],
  // Issue 20: a stored approval request is visible in an open page within 500 ms (p99 over 50).
  ['web/web-latency.test.js', 'p99 < 500 ms from a stored request to the open page showing it'],
]);

/**
 * Files of the parallel group that take longest (longest first; wall time in the parallel group on
 * the 2-core VM, December 2026): started first, so that no long file starts last and runs alone at
 * the end. Most start the real CLI many times (a cold node start each) or a browser.
 */
const SLOW_FIRST = [
  'runtimes/claude-code-fake.test.js', // ~100 s: twelve runs, each with the fake CLI's MCP client
  'cli/fault-injection.test.js', // ~90 s: the demo killed at 25 points, 12 resumed
  'cli/run-call-catalog.test.js',
  'cli/operator-views.test.js',
  'cli/bad-state-dir.test.js',
  'web/web-browser.test.js', // a chromium start per test
  'cli/serve.test.js',
  'runtimes/claude-code-real.test.js',
  'adapters/authored/containment.test.js',
  'web/web-trees.test.js',
  'web/web-delegation.test.js',
  'web/web-open.test.js',
  'session/library-example.test.js', // tsc type-checks an embedder
  'control-plane/chaos.test.js', // five member processes on one PostgreSQL cluster
  'cli/operator.test.js',
  'adapters/mcp/discovery.test.js',
  'redaction/wrapped-forms.test.js',
  'cli/crash-reconcile.test.js',
  'cli/resume.test.js',
  'adapters/mcp/http.test.js',
  'turns/providers/run-cli.test.js',
  'session/delegation.test.js',
  'cli/enospc.test.js',
  'cli/audit.test.js',
  'session/agents-spawn.test.js',
  'adapters/authored/thread-tier.test.js',
  'process/lifecycle.test.js',
  'cli/demo.test.js',
  'adapters/authored/hostile.test.js',
  'adapters/mcp/calls.test.js',
  'cli/doctor.test.js',
];

const underTest = (f) => f.slice('dist/test/'.length);
for (const k of SERIAL.keys()) {
  if (!all.includes(`dist/test/${k}`)) {
    console.error(`run-tests: SERIAL names dist/test/${k}, which does not exist; update scripts/run-tests.mjs`);
    process.exit(1);
  }
}
for (const k of SLOW_FIRST) {
  if (!all.includes(`dist/test/${k}`)) {
    console.error(`run-tests: SLOW_FIRST names dist/test/${k}, which does not exist; update scripts/run-tests.mjs`);
    process.exit(1);
  }
}
const slowRank = (f) => {
  const i = SLOW_FIRST.indexOf(underTest(f));
  return i < 0 ? SLOW_FIRST.length : i;
};
const parallel = files.filter((f) => !SERIAL.has(underTest(f))).sort((a, b) => slowRank(a) - slowRank(b) || a.localeCompare(b));
const serial = files.filter((f) => SERIAL.has(underTest(f)));

/** A whole number >= 1 from the environment variable `name`, or `fallback` when it is unset. */
function width(name, fallback) {
  const text = process.env[name] ?? String(fallback);
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`run-tests: ${name}=${text} is not a whole number >= 1`);
    process.exit(2);
  }
  return n;
}
const concurrency = width('TEST_CONCURRENCY', 4);
// TEST_CPU=1: each file runs under `perf stat`, which counts the CPU time of the file's process and
// of every process under it (orphans too); its line shows CPU-seconds beside the wall time, and each
// group its total. The suite is CPU-bound on two cores, so this is the figure to compare (issue 17).
const measureCpu = process.env.TEST_CPU === '1';
if (measureCpu && spawnSync('perf', ['stat', '-x,', '-e', 'task-clock', '-o', '/dev/null', '--', 'true']).status !== 0) {
  console.error('run-tests: TEST_CPU=1 needs `perf stat` (apt-get install linux-perf) counting this user\'s processes (sysctl kernel.perf_event_paranoid <= 2)');
  process.exit(2);
}
const serialConcurrency = width('TEST_SERIAL_CONCURRENCY', 1);

console.log(`run-tests: ${files.length} file(s)${filters.length ? ` matching ${filters.join(', ')}` : ''}: ${parallel.length} in parallel (${concurrency} at a time), then ${serial.length} serial (${serialConcurrency} at a time)`);
for (const f of parallel) console.log(`  ${f}`);
for (const f of serial) console.log(`  ${f}  (serial: ${SERIAL.get(underTest(f))})`);

/** The files running now (their process groups are stopped on a signal). */
const running = new Set();
let stopping = null;
// Pass a termination on to every running file's process group, so it prints what it has and its own
// children go too; nothing new is started.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    stopping = sig;
    for (const child of running) signalGroup(child, sig);
  });
}

function signalGroup(child, sig) {
  try {
    process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}

/** A file that runs longer than this is stopped (its whole process group) and fails the run. */
const FILE_TIMEOUT_MS = 900_000;
const COUNT_KEYS = ['tests', 'pass', 'fail', 'cancelled', 'skipped', 'todo'];

/** The CPU-seconds `perf stat -x,` wrote to `file` (its task-clock line is in milliseconds), or null. */
function cpuSeconds(file) {
  try {
    const line = fs.readFileSync(file, 'utf8').split('\n').find((l) => l.includes('task-clock'));
    const ms = Number(line?.split(',')[0]);
    return Number.isFinite(ms) ? ms / 1000 : null;
  } catch {
    return null;
  }
}

/** Runs one file in its own process; resolves to { ok, counts, output, secs, cpu }. */
function runFile(file, countFile, tapFile) {
  return new Promise((resolve) => {
    const started = Date.now();
    const tap = tapFile ? ['--test-reporter=tap', `--test-reporter-destination=${tapFile}`] : [];
    const counter = [`--test-reporter=${pathToFileURL(path.join(root, 'scripts', 'test-count-reporter.mjs')).href}`, `--test-reporter-destination=${countFile}`];
    let output = '';
    const node = [process.execPath, '--test-reporter=spec', '--test-reporter-destination=stdout', ...tap, ...counter, file];
    const cpuFile = `${countFile}.cpu`;
    const [command, ...args] = measureCpu ? ['perf', 'stat', '-x,', '-e', 'task-clock', '-o', cpuFile, '--', ...node] : node;
    const child = spawn(command, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a hung file is stopped with everything it started.
      detached: true,
    });
    running.add(child);
    child.stdout.setEncoding('utf8').on('data', (d) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (output += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signalGroup(child, 'SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('error', (err) => {
      output += `run-tests: could not start ${command}: ${err.message}\n`;
    });
    // 'close' after 'exit': the pipes hold the reporter's last lines.
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(child);
      const secs = (Date.now() - started) / 1000;
      if (timedOut) output += `run-tests: ${file} ran past ${FILE_TIMEOUT_MS / 1000} s and was stopped; the test that hung is the first one not reported above\n`;
      else if (signal) output += `run-tests: ${file} was killed by ${signal}\n`;
      let counts = null;
      try {
        counts = JSON.parse(fs.readFileSync(countFile, 'utf8'));
      } catch {
        // no counts: the file did not finish (it fails by its exit code)
      }
      resolve({ ok: code === 0 && counts !== null, counts, output, secs, cpu: measureCpu ? cpuSeconds(cpuFile) : null });
    });
  });
}

/** Runs one group, `width` files at a time in the given order; resolves with its counts and failures. */
async function runGroup(name, groupFiles, width) {
  console.log(`\nrun-tests: ${name} group: ${groupFiles.length} file(s), ${width} at a time`);
  const started = Date.now();
  // TEST_TAP_DIR=DIR also writes each group's results as TAP to DIR/<group>.tap (durations, for
  // comparing runs): each file's TAP, in the order the files ended.
  const tapDir = process.env.TEST_TAP_DIR ? path.resolve(process.env.TEST_TAP_DIR) : null;
  const counts = Object.fromEntries(COUNT_KEYS.map((k) => [k, 0]));
  let cpu = 0;
  const failed = [];
  const tapParts = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < groupFiles.length && !stopping) {
      const i = next++;
      const file = groupFiles[i];
      const tapFile = tapDir ? path.join(countDir, `${name}-${i}.tap`) : null;
      const r = await runFile(file, path.join(countDir, `${name}-${i}.json`), tapFile);
      done++;
      for (const k of COUNT_KEYS) counts[k] += r.counts?.[k] ?? 0;
      cpu += r.cpu ?? 0;
      if (!r.ok) failed.push(file);
      if (tapFile && fs.existsSync(tapFile)) tapParts.push(fs.readFileSync(tapFile, 'utf8'));
      const verdict = r.ok ? `${r.counts.pass} passed${r.counts.skipped ? `, ${r.counts.skipped} skipped` : ''}` : `FAILED${r.counts ? ` (${r.counts.fail} of ${r.counts.tests})` : ''}`;
      const cpuText = r.cpu === null ? '' : ` (${r.cpu.toFixed(1)} CPU-s)`;
      process.stdout.write(`\n── ${file}: ${verdict}, ${r.secs.toFixed(1)} s${cpuText} [${done}/${groupFiles.length}, ${((Date.now() - started) / 1000).toFixed(0)} s into the ${name} group]\n${r.output}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, groupFiles.length) }, worker));
  if (tapDir) {
    fs.mkdirSync(tapDir, { recursive: true });
    fs.writeFileSync(path.join(tapDir, `${name}.tap`), tapParts.join(''));
  }
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  const ok = failed.length === 0 && !stopping;
  const cpuText = measureCpu ? ` (${cpu.toFixed(1)} CPU-s)` : '';
  console.log(`\nrun-tests: ${name} group ${ok ? 'passed' : 'FAILED'} in ${secs} s${cpuText}: tests ${counts.tests}, pass ${counts.pass}, fail ${counts.fail}${failed.length ? `; failed files: ${failed.join(', ')}` : ''}`);
  return { ok, counts, cpu };
}

const countDir = fs.mkdtempSync(path.join(os.tmpdir(), 'run-tests-'));
const started = Date.now();
const results = [];
if (parallel.length > 0) results.push(['parallel', await runGroup('parallel', parallel, concurrency)]);
if (serial.length > 0 && !stopping) results.push(['serial', await runGroup('serial', serial, serialConcurrency)]);
if (stopping) results.push([`stopped by ${stopping}`, { ok: false, counts: null }]);
fs.rmSync(countDir, { recursive: true, force: true });
const total = Object.fromEntries(COUNT_KEYS.map((k) => [k, 0]));
for (const [, r] of results) for (const k of COUNT_KEYS) total[k] += r.counts?.[k] ?? 0;
const totalCpu = results.reduce((sum, [, r]) => sum + (r.cpu ?? 0), 0);
const failedGroups = results.filter(([, r]) => !r.ok).map(([n]) => n);
console.log(`\nrun-tests: both groups: tests ${total.tests}, pass ${total.pass}, fail ${total.fail} (cancelled ${total.cancelled}), skipped ${total.skipped}, todo ${total.todo}; ${((Date.now() - started) / 1000).toFixed(1)} s${measureCpu ? `, ${totalCpu.toFixed(1)} CPU-s` : ''}`);
console.log(`run-tests: ${failedGroups.length === 0 ? 'all groups passed' : `FAILED: ${failedGroups.join(', ')}`}`);
process.exitCode = failedGroups.length === 0 ? 0 : 1;
