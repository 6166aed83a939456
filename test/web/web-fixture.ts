// What the web page's tests share: a real state dir with a real session and pending requests
// (written through the store, as a run writes them), a real `supervisor web` process (the CLI,
// spawned), and Debian's chromium driven by playwright-core with a fresh profile. Everything a test
// starts is registered in its Cleanup and gone when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import { openStore, PendingApprovalStore, SessionStore, type Database, type PendingApproval } from '../../src/store/index.js';
import { localPrincipal } from '../../src/session/principal.js';
import { CLI } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { foregroundCallCore } from '../helpers/foreground-call-core.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Why the browser tests skip, or false: they need Debian's chromium (.ci/run installs it). */
export const NO_BROWSER: string | false = process.platform !== 'linux' ? 'the browser tests drive Debian chromium on Linux' : existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`;

/** Things to undo when a test ends, last first. */
export class Cleanup {
  private readonly steps: (() => void | Promise<void>)[] = [];
  add(step: () => void | Promise<void>): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    for (const s of this.steps.splice(0).reverse()) {
      try {
        await s();
      } catch {
        // the next step still runs
      }
    }
  }
}

export function stateDir(c: Cleanup): string {
  const dir = mkdtempSync(join(tmpdir(), 'web-test-'));
  c.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The store of a state dir, as a run opens it (closed at cleanup). */
export function store(c: Cleanup, dir: string): { db: Database; sessionId: string; ask(summary: string, ttlMs?: number): PendingApproval } {
  const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
  c.add(() => void db.close());
  const session = new SessionStore(db).createSession({ principal: localPrincipal() }, { coreDir: '/tmp/core', coreRevision: 'rev', runtime: 'local' });
  const approvals = new PendingApprovalStore(db);
  return {
    db,
    sessionId: session.id,
    // The row a run's StoreApprover writes for `--await-approval` (src/policy/store-approver.ts).
    ask: (summary, ttlMs = 600_000) =>
      approvals.create({ sessionId: session.id, tool: 'terminal', capability: 'terminal.exec', summary, preview: JSON.stringify({ command: summary }), ttlMs }),
  };
}

export function statusOf(db: Database, id: string): { status: string; decided_by: string | null } {
  return db.prepare('SELECT status, decided_by FROM pending_approvals WHERE id = ?').get(id) as { status: string; decided_by: string | null };
}

export interface WebProcess {
  url: string;
  port: number;
  token: string;
  child: ChildProcess;
  /** Everything it wrote on stderr so far (its refusal lines). */
  log(): string;
}

/** `supervisor web --json` as a real process on a state dir (or `{ store: url }`: the control plane); killed (its pid) at cleanup. */
export async function startWeb(c: Cleanup, dir: string | { store: string }, env: Record<string, string> = {}, args: string[] = []): Promise<WebProcess> {
  const where = typeof dir === 'string' ? ['--state-dir', dir] : ['--store', dir.store];
  const child = spawn(process.execPath, [CLI, 'web', '--json', ...where, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  c.add(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(t);
    }
  });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`supervisor web exited (${code}) before printing its URL: ${err}`)));
  });
  const { url, port } = JSON.parse(line) as { url: string; port: number };
  return { url, port, token: new URL(url).hash.replace('#token=', ''), child, log: () => err };
}

/** The file's one chromium (a start costs ~1 CPU-s); each test gets a context of its own. */
let shared: Browser | null = null;

/**
 * A fresh browser context (its own cookies, storage and cache, as a new profile) in the test
 * file's headless Debian chromium; closed at cleanup. The chromium itself is closed by
 * closeBrowser(), which every file that uses this calls in its after().
 */
export async function browser(c: Cleanup): Promise<BrowserContext> {
  shared ??= await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const context = await shared.newContext();
  c.add(() => context.close());
  return context;
}

/** Closes the file's chromium (after its last test), so no browser process outlives the file. */
export async function closeBrowser(): Promise<void> {
  const b = shared;
  shared = null;
  await b?.close();
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** An HTTP request with every header under the test's control (a forged Host, a missing Origin). */
export function raw(port: number, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The page's own sign-in, done over HTTP: the cookie and the CSRF token. */
export async function signIn(web: WebProcess): Promise<{ cookie: string; csrf: string; headers: Record<string, string> }> {
  const r = await raw(web.port, 'POST', '/api/session', { host: `127.0.0.1:${web.port}`, origin: `http://127.0.0.1:${web.port}`, 'content-type': 'application/json' }, JSON.stringify({ token: web.token }));
  if (r.status !== 200) throw new Error(`sign-in failed: ${r.status} ${r.body}`);
  const cookie = String(r.headers['set-cookie']).split(';')[0]!;
  const csrf = (JSON.parse(r.body) as { csrf: string }).csrf;
  return { cookie, csrf, headers: { host: `127.0.0.1:${web.port}`, origin: `http://127.0.0.1:${web.port}`, 'content-type': 'application/json', cookie, 'x-supervisor-csrf': csrf } };
}

/** The store a run is creating, once it opens (a run makes it on its first start). */
export async function waitForStore(dir: string, timeoutMs: number): Promise<Database> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
      new PendingApprovalStore(db);
      return db;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** A real `supervisor run` with --json on `dir`, killed at cleanup; what it printed and how it ended. */
export interface LiveRun {
  output(): string;
  exited: Promise<number | null>;
}

export function startRun(c: Cleanup, core: string, args: readonly string[], dir: string): LiveRun {
  const run = spawn(process.execPath, [CLI, 'run', core, ...args, '--json', '--state-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  run.stdout!.on('data', (d) => (out += d));
  run.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => run.once('close', r));
  c.add(() => void run.kill('SIGKILL'));
  return { output: () => out, exited };
}

/** A core whose first model turn starts `command` as a background terminal task and then waits for it. */
export function backgroundTaskCore(c: Cleanup, command: string): string {
  const core = makeCore({
    'agent.yaml': 'name: t\ntoolsets: [terminal, tasks]\ngrants: [terminal.exec, task.read, task.control]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n',
    'script.yaml': `turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: ${JSON.stringify(command)}, background: true } }\n  - tool_calls:\n      - { name: yield_until, arguments: { timeout_seconds: 110 } }\n  - text: done\n`,
  });
  c.add(() => removeTempCores());
  return core;
}

/** foregroundCallCore (test/helpers), removed at cleanup. */
export function foregroundCore(c: Cleanup, command: string): string {
  c.add(() => removeTempCores());
  return foregroundCallCore(command);
}

/** The run's store once it exists (closed at cleanup). */
export async function runStore(c: Cleanup, dir: string, timeoutMs: number): Promise<Database> {
  const db = await waitForStore(dir, timeoutMs);
  c.add(() => void db.close());
  return db;
}
