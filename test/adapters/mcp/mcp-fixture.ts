// Shared by the MCP host tests: a supervisor and a store per suite, cores that declare fixture or
// npm servers, approvers that record what they were asked, a session that discovers and calls
// through the EffectRuntime, and a leak check after each test.
import { after, afterEach, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadCore, type CoreSnapshot } from '../../../src/core/index.js';
import { ProcessSupervisor } from '../../../src/process/index.js';
import { ApprovalBroker, approvalDecision, CapabilitySnapshot, type ApprovalRequest, type Approver } from '../../../src/policy/index.js';
import { openStore, SessionStore, type Database } from '../../../src/store/index.js';
import { McpConnectionManager, type McpConnectionManagerOptions } from '../../../src/adapters/mcp/index.js';
import { buildCatalog, IMPLICIT_GRANT } from '../../../src/catalog/index.js';
import { EffectRuntime, type EffectOutcome } from '../../../src/effects/index.js';
import { SecretStore } from '../../../src/secrets/index.js';
import { mcpSecretResolver } from '../../../src/session/index.js';
import { makeCore, removeTempCores } from '../../core/temp-core.js';
import { markedPids, tempDir } from '../../helpers/procs.js';

export const FIXTURE_SERVER = fileURLToPath(new URL('../../../../test/fixtures/mcp/server.mjs', import.meta.url));
export const HTTP_FIXTURE_SERVER = fileURLToPath(new URL('../../../../test/fixtures/mcp/http-server.mjs', import.meta.url));

/** A fixture MCP server over HTTP on 127.0.0.1, running as a supervised tree of the suite's supervisor. */
export interface HttpFixture {
  url: string;
  /** Everything it printed on stdout (request logs of the `record` mode, cancellations, closed sessions). */
  output(): string;
  stop(): Promise<unknown>;
}
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const NPM_SERVER = (name: 'everything' | 'memory' | 'filesystem'): string => join(ROOT, 'node_modules', '@modelcontextprotocol', `server-${name}`, 'dist', 'index.js');

/** YAML of one stdio declaration running `node <script> ...args`. */
export function declaration(name: string, args: string[], extra = ''): string {
  const list = [JSON.stringify(process.execPath), ...args.map((a) => JSON.stringify(a))];
  return [
    `name: ${name}`,
    'transport:',
    '  type: stdio',
    `  command: ${list[0]}`,
    `  args: [${list.slice(1).join(', ')}]`,
    extra,
  ].join('\n') + '\n';
}

export function fixtureDecl(name: string, mode: string, opts: { marker?: string; connectTimeout?: number; extra?: string; pages?: number; args?: string[] } = {}): string {
  const args = [FIXTURE_SERVER, mode, ...(opts.marker ? ['--marker', opts.marker] : []), ...(opts.pages ? ['--pages', String(opts.pages)] : []), ...(opts.args ?? [])];
  const lines = [`connect_timeout_seconds: ${opts.connectTimeout ?? 10}`, 'approval:', '  connect: auto', '  call: auto', opts.extra ?? ''];
  return declaration(name, args, lines.join('\n'));
}

export class RecordingApprover implements Approver {
  readonly asked: ApprovalRequest[] = [];
  constructor(private readonly answer: boolean | ((r: ApprovalRequest) => boolean)) {}
  async decide(r: ApprovalRequest) {
    this.asked.push(r);
    const yes = typeof this.answer === 'function' ? this.answer(r) : this.answer;
    return approvalDecision(yes, 'operator', yes ? 'test says yes' : 'test says no', false);
  }
}

export function mcpSuite() {
  const state = tempDir('mcp-test-');
  let sup: ProcessSupervisor;
  let db: Database;
  const managers: McpConnectionManager[] = [];
  const fixtures: HttpFixture[] = [];
  before(() => {
    sup = ProcessSupervisor.open({ stateDir: state.path });
    db = openStore(join(state.path, 'supervisor.db'));
  });
  afterEach(async () => {
    for (const m of managers.splice(0)) await m.close();
    for (const f of fixtures.splice(0)) await f.stop();
    // Nothing a test started may outlive it: no process carries a spawn id of this supervisor's trees.
    const left = sup.liveTrees().flatMap((t) => markedPids(t.spawnId));
    assert.deepEqual(left, [], 'server processes left alive after the test');
    assert.equal(sup.liveTrees().length, 0, 'trees still live after the test');
  });
  after(async () => {
    db.close();
    await sup.close();
    state.remove();
    removeTempCores();
  });
  return {
    supervisor: () => sup,
    db: (): Database => db,
    stateDir: state.path,
    /** Starts the HTTP fixture in `mode`; it is stopped after the test (before the leak check). */
    async httpServer(mode: string, args: string[] = []): Promise<HttpFixture> {
      let out = '';
      let ready: (url: string) => void = () => undefined;
      const listening = new Promise<string>((r) => (ready = r));
      const tree = sup.spawnTree({
        command: process.execPath,
        args: [HTTP_FIXTURE_SERVER, mode, ...args],
        cwd: ROOT,
        artifacts: false,
        graceMs: 500,
        onStdout: (chunk) => {
          out += chunk.toString('utf8');
          const m = /listening (\S+)/.exec(out);
          if (m) ready(m[1]!);
        },
      });
      const f: HttpFixture = { url: '', output: () => out, stop: () => tree.stop() };
      fixtures.push(f);
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the HTTP fixture (${mode}) did not listen within 10 s: ${out}`)), 10_000).unref());
      f.url = await Promise.race([listening, timeout, tree.done.then((o) => Promise.reject(new Error(`the HTTP fixture exited: ${JSON.stringify(o.stderr.tail)}`)))]);
      return f;
    },
    manager(o: Partial<McpConnectionManagerOptions> = {}): McpConnectionManager {
      const m = new McpConnectionManager({ supervisor: sup, graceMs: 500, ...o });
      managers.push(m);
      return m;
    },
    async core(files: Record<string, string>, grants: string[] = ['mcp.connect:*', 'mcp.call:*'], approval = '  default: auto\n'): Promise<CoreSnapshot> {
      const agent = `name: t\ngrants: [${grants.map((g) => JSON.stringify(g)).join(', ')}]\napproval:\n${approval}`;
      return loadCore(makeCore({ 'agent.yaml': agent, ...files }));
    },
    /**
     * A stored session on `core`: discovery through `m` (secrets resolved as `run` does), the catalog
     * it yields, and an EffectRuntime on the suite's supervisor and store. `call` asserts the tool is
     * in the catalog, then executes it.
     */
    async session(core: CoreSnapshot, m: McpConnectionManager, opts: { approver?: RecordingApprover; onProgress?: (p: unknown) => void } = {}) {
      const principal = 'local:test';
      const approver = opts.approver ?? new RecordingApprover(true);
      const broker = new ApprovalBroker({ approver });
      const sess = new SessionStore(db).createSession({ principal }, { coreDir: core.dir, coreRevision: core.revision, runtime: 'local' });
      const capabilities = CapabilitySnapshot.from([...core.agent.grants, IMPLICIT_GRANT]);
      const secrets = SecretStore.fromCore(core);
      const found = await m.discover({ sessionId: sess.id, principal, core, capabilities, broker, resolveEnv: mcpSecretResolver(secrets, capabilities) });
      const catalog = buildCatalog({ core, principal, mcpTools: found.tools, connectPolicy: found.connectPolicy });
      const runtime = new EffectRuntime({ catalog, broker, supervisor: sup, db, secrets, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
      const ctx = { principal, sessionId: sess.id };
      const call = (name: string, args: unknown, extra: { signal?: AbortSignal } = {}): Promise<EffectOutcome> => {
        const req = runtime.request(name, args);
        assert.ok(req, `${name} is in the catalog (${catalog.entries.map((e) => e.name).join(', ')})`);
        return runtime.execute(req, { ...ctx, ...extra });
      };
      return { found, catalog, runtime, call, approver };
    },
  };
}

export function request(core: CoreSnapshot, sessionId: string, approver: Approver = new RecordingApprover(true)) {
  return {
    sessionId,
    principal: 'local:test',
    core,
    capabilities: CapabilitySnapshot.from([...core.agent.grants, IMPLICIT_GRANT]),
    broker: new ApprovalBroker({ approver }),
  };
}
