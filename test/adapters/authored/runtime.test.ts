// Authored tools through the whole EffectRuntime: the example core's word_count runs, the tiers
// this build does not run are refused at step 4 before any code loads, deadlines and cancels end
// as the runtime reports them (the sandbox tier runs the same host inside bubblewrap), and agent.yaml's tool_hosts section is checked.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { authoredToolHosts, type AuthoredToolsHandle } from '../../../src/adapters/authored/index.js';
import { buildCatalog } from '../../../src/catalog/index.js';
import { loadCore, CoreLoadError } from '../../../src/core/index.js';
import { EffectRuntime } from '../../../src/effects/index.js';
import { ApprovalBroker, NonInteractiveApprover } from '../../../src/policy/index.js';
import { ProcessSupervisor, sandboxAvailability } from '../../../src/process/index.js';
import { createServer, type AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { openStore, SessionStore, type Database } from '../../../src/store/index.js';
import { makeCore, removeTempCores, toolFiles } from '../../core/temp-core.js';
import { FIXTURES, markedPids, tempDir } from '../../helpers/procs.js';

const PRINCIPAL = 'operator';
const EXAMPLE_CORE = resolve(FIXTURES, '../../examples/core');

describe('authored tools through the EffectRuntime', { skip: process.platform !== 'linux' && 'the hostile suite runs on Linux CI' }, () => {
  const state = tempDir('authored-runtime-');
  let sup: ProcessSupervisor;
  let db: Database;
  const handles: AuthoredToolsHandle[] = [];
  before(() => {
    sup = ProcessSupervisor.open({ stateDir: state.path });
    db = openStore(join(state.path, 'supervisor.db'));
  });
  after(async () => {
    const ids = sup.liveTrees().map((t) => t.spawnId);
    for (const h of handles) await h.close();
    db.close();
    await sup.close();
    state.remove();
    removeTempCores();
    assert.deepEqual(ids.flatMap((id) => markedPids(id)), []);
  });

  async function runtimeFor(dir: string, attach = true) {
    const core = await loadCore(dir);
    if (attach) handles.push(authoredToolHosts(sup, core));
    const catalog = buildCatalog({ core, principal: PRINCIPAL });
    const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new NonInteractiveApprover() }), supervisor: sup, db });
    const session = new SessionStore(db).createSession({ principal: PRINCIPAL }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
    return { core, runtime, ctx: { principal: PRINCIPAL, sessionId: session.id } };
  }

  test("the example core's word_count runs out of process and returns its JSON", async () => {
    const { runtime, ctx } = await runtimeFor(EXAMPLE_CORE);
    const out = await runtime.execute(runtime.request('word_count', { text: 'one two\nthree' })!, ctx);
    assert.equal(out.ok, true, JSON.stringify(out));
    if (!out.ok) return;
    assert.deepEqual(JSON.parse(out.views.model.content as string), { words: 3, lines: 2, characters: 13 });
    const detail = (out.views.durable as { detail: Record<string, unknown> }).detail;
    assert.equal(detail.tier, 'process');
    assert.deepEqual(detail.logs, ['info: counted 3 words']);
    assert.equal((out.views.durable as { audit: Record<string, unknown> }).audit.tier, 'process');
  });

  test('a manifest asking for the thread tier without the operator\'s mark is refused at step 4, naming the file, the field and the fix; its code never loads', async () => {
    const { core, runtime, ctx } = await runtimeFor(resolve(FIXTURES, 'tools'));
    const out = await runtime.execute(runtime.request('threaded', {})!, ctx);
    assert.equal(out.ok, false);
    if (out.ok) return;
    assert.equal(out.code, 'CHECK_FAILED');
    assert.equal(out.step, 4);
    assert.match(out.message, /agent\/tools\/threaded\/tool\.yaml: isolation\.tier: thread is refused/);
    assert.match(out.message, /tool_hosts\.trusted in agent\.yaml/);
    assert.match(out.message, /set isolation\.tier: process/);
    assert.equal(existsSync(join(core.dir, 'agent/tools/threaded/ran')), false);
  });

  test('the sandbox tier runs the same host inside bubblewrap: own pid namespace, no network, marker kept', async (t) => {
    if (!sandboxAvailability().usable) return t.skip(`sandbox unusable here: ${sandboxAvailability().reason}`);
    const { runtime, ctx } = await runtimeFor(resolve(FIXTURES, 'tools'));
    const seen = await runtime.execute(runtime.request('sandboxed', {})!, ctx);
    assert.equal(seen.ok, true, JSON.stringify(seen));
    if (!seen.ok) return;
    const view = JSON.parse(seen.views.model.content) as { pid: number; marker: boolean };
    assert.ok(view.pid <= 4, `the host runs as pid ${view.pid}: not in a pid namespace of its own`);
    assert.equal(view.marker, true);
    let connections = 0;
    const server = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    const port = (server.address() as AddressInfo).port;
    const tried = await runtime.execute(runtime.request('sandboxed', { mode: 'connect', port })!, ctx);
    assert.equal(tried.ok, true, JSON.stringify(tried));
    assert.equal((JSON.parse(tried.ok ? tried.views.model.content : '{}') as { connected: boolean }).connected, false);
    assert.equal(connections, 0, 'the host listener saw a connection from the sandbox');
  });

  test('a runtime needs no attach step: the adapter runs the catalog\'s own core, and the supervisor\'s close stops its hosts without replacing them', async () => {
    const dir = makeCore({
      'agent.yaml': 'name: t\ngrants: [tool.call:echo]\napproval:\n  default: auto\n',
      'agent/tools/echo/tool.yaml': 'name: echo\ndescription: e\ninput_schema: { type: object }\ncapability: tool.call:echo\napproval: auto\n',
      'agent/tools/echo/index.mjs': 'export async function handler(i) { return i; }\n',
    });
    const ownState = tempDir('authored-close-');
    const own = ProcessSupervisor.open({ stateDir: ownState.path });
    const core = await loadCore(dir);
    const catalog = buildCatalog({ core, principal: PRINCIPAL });
    const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new NonInteractiveApprover() }), supervisor: own, db });
    const session = new SessionStore(db).createSession({ principal: PRINCIPAL }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
    const out = await runtime.execute(runtime.request('echo', { n: 1 })!, { principal: PRINCIPAL, sessionId: session.id });
    assert.equal(out.ok && !out.isError, true, JSON.stringify(out));
    const hosts = authoredToolHosts(own, core);
    const pool = hosts.pools()[0]!;
    const ids = own.liveTrees().map((t) => t.spawnId);
    assert.equal(ids.length, 1, 'one warm host');
    await own.close();
    assert.deepEqual(ids.flatMap((id) => markedPids(id)), [], 'the host is gone');
    assert.equal(pool.stats.started, 1, 'no replacement was started while the supervisor closed');
    assert.equal(pool.stats.retired.closed, 1);
    ownState.remove();
  });

  test('a newer revision of a core replaces the older one\'s hosts: a catalog never runs code it was not built from', async () => {
    const files = {
      'agent.yaml': 'name: t\ngrants: [tool.call:ver]\napproval:\n  default: auto\n',
      'agent/tools/ver/tool.yaml': 'name: ver\ndescription: v\ninput_schema: { type: object }\ncapability: tool.call:ver\napproval: auto\n',
      'agent/tools/ver/index.mjs': 'export async function handler() { return 1; }\n',
    };
    const dir = makeCore(files);
    const run = async () => {
      const core = await loadCore(dir);
      const catalog = buildCatalog({ core, principal: PRINCIPAL });
      const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new NonInteractiveApprover() }), supervisor: sup, db });
      const session = new SessionStore(db).createSession({ principal: PRINCIPAL }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
      const out = await runtime.execute(runtime.request('ver', {})!, { principal: PRINCIPAL, sessionId: session.id });
      assert.equal(out.ok && !out.isError, true, JSON.stringify(out));
      const h = authoredToolHosts(sup, core);
      handles.push(h);
      return { value: out.ok ? out.views.model.content : '', pool: h.pools()[0]! };
    };
    const first = await run();
    assert.equal(first.value, '1');
    writeFileSync(join(dir, 'agent/tools/ver/index.mjs'), 'export async function handler() { return 2; }\n');
    const second = await run();
    assert.equal(second.value, '2', 'the new revision runs the new code');
    assert.notEqual(second.pool, first.pool);
    const deadline = Date.now() + 5000;
    while (first.pool.pids().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(first.pool.pids(), [], 'the older revision\'s host was stopped');
    assert.equal(first.pool.stats.retired.closed, 1);
  });

  test('the deadline gives a TIMEOUT result and a cancel gives CANCELLED; the next call works', async () => {
    const { runtime, ctx } = await runtimeFor(resolve(FIXTURES, 'tools'));
    const t = await runtime.execute(runtime.request('hostile', { action: 'loop' })!, { ...ctx, deadlineMs: 400 });
    assert.equal(t.ok && t.isError, true, JSON.stringify(t));
    assert.match(t.ok ? (t.views.model.content as string) : '', /^\[TIMEOUT\]/);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const c = await runtime.execute(runtime.request('hostile', { action: 'loop' })!, { ...ctx, signal: ac.signal });
    assert.equal(!c.ok && c.code, 'CANCELLED', JSON.stringify(c));
    const ok = await runtime.execute(runtime.request('hostile', { action: 'ok' })!, ctx);
    assert.equal(ok.ok && !ok.isError, true, JSON.stringify(ok));
  });

  test('a module the entry imports does not parse: the first call names its file, line and column (found with node --check, never imported by the supervisor)', async () => {
    const dir = makeCore({
      'agent.yaml': 'name: t\ngrants: [tool.call:alpha]\napproval:\n  default: auto\n',
      ...toolFiles('alpha', { approval: 'auto' }, "import { helper } from './lib/helper.mjs';\nexport async function handler() { return helper(); }\n"),
      'agent/tools/alpha/lib/helper.mjs': 'export function helper() {\n  return 1;\n}\nconst broken = 2 @@ 3;\n',
    });
    const { runtime, ctx } = await runtimeFor(dir);
    const out = await runtime.execute(runtime.request('alpha', {})!, ctx);
    assert.equal(out.ok && out.isError, true, JSON.stringify(out));
    if (!out.ok) return;
    assert.match(out.views.model.content as string, /^\[TOOL_SYNTAX_ERROR\] .*agent\/tools\/alpha\/lib\/helper\.mjs:4:18: SyntaxError: Invalid or unexpected token/);
  });

  test('agent.yaml tool_hosts is checked with file, field and fix', async () => {
    const dir = makeCore({ 'agent.yaml': 'name: t\ntool_hosts:\n  pool_size: 0\n  heap: 12\n' });
    await assert.rejects(loadCore(dir), (err: unknown) => {
      assert.ok(err instanceof CoreLoadError);
      assert.match(err.message, /agent\.yaml/);
      assert.match(err.message, /pool_size.*at least 1; write e\.g\. pool_size: 2/s);
      assert.match(err.message, /heap/);
      return true;
    });
  });

  test('tool_hosts.trusted may name only authored tools of the core', async () => {
    const dir = makeCore({ 'agent.yaml': 'name: t\ntool_hosts:\n  trusted: [terminal]\n' });
    await assert.rejects(loadCore(dir), (err: unknown) => {
      assert.ok(err instanceof CoreLoadError);
      assert.match(err.message, /tool_hosts\.trusted\[0\].*'terminal' is not an authored tool of this core/s);
      return true;
    });
  });
});

describe('secrets bound to an authored tool', { skip: process.platform !== 'linux' && 'the hostile suite runs on Linux CI' }, () => {
  const state = tempDir('authored-secrets-');
  let sup: ProcessSupervisor;
  let db: Database;
  const handles: AuthoredToolsHandle[] = [];
  before(() => {
    sup = ProcessSupervisor.open({ stateDir: state.path });
    db = openStore(join(state.path, 'supervisor.db'));
  });
  after(async () => {
    for (const h of handles) await h.close();
    db.close();
    await sup.close();
    state.remove();
    removeTempCores();
  });

  test('reach ctx.secrets after approval, and the value never reaches a view', async () => {
    const value = `authored-secret-${process.pid}-${Date.now()}`;
    process.env.SV_AUTHORED_SECRET_SRC = value;
    const dir = makeCore({
      'agent.yaml': [
        'name: t',
        "grants: [tool.call:leaky, 'secret:API_KEY']",
        'approval:\n  default: auto',
        'secrets:\n  API_KEY: { env: SV_AUTHORED_SECRET_SRC }',
        'tools:\n  leaky:\n    secrets:\n      - { secret: API_KEY, env: API_KEY, ttl: 1m }',
      ].join('\n') + '\n',
      'agent/tools/leaky/tool.yaml': 'name: leaky\ndescription: prints its secret\ninput_schema: { type: object }\ncapability: tool.call:leaky\napproval: auto\n',
      'agent/tools/leaky/index.mjs':
        "import { createHash } from 'node:crypto';\nexport async function handler(_i, ctx) {\n  const v = ctx.secrets.API_KEY;\n  return { sha: createHash('sha256').update(v).digest('hex'), raw: v, env: process.env.API_KEY ?? null };\n}\n",
    });
    const core = await loadCore(dir);
    handles.push(authoredToolHosts(sup, core));
    const catalog = buildCatalog({ core, principal: PRINCIPAL });
    const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new NonInteractiveApprover() }), supervisor: sup, db });
    const session = new SessionStore(db).createSession({ principal: PRINCIPAL }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
    const out = await runtime.execute(runtime.request('leaky', {})!, { principal: PRINCIPAL, sessionId: session.id });
    assert.equal(out.ok, true, JSON.stringify(out));
    if (!out.ok) return;
    const got = JSON.parse(out.views.model.content) as { sha: string; raw: string; env: string | null };
    assert.equal(got.sha, createHash('sha256').update(value).digest('hex'), 'the handler received the bound value');
    assert.equal(got.env, null, 'the binding is not put into the host environment');
    assert.notEqual(got.raw, value);
    for (const [name, view] of Object.entries(out.views)) assert.ok(!JSON.stringify(view).includes(value), `the ${name} view leaks the secret`);
    delete process.env.SV_AUTHORED_SECRET_SRC;
  });
});
