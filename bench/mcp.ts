// MCP host benchmarks, each with its baseline in the same run:
// 1. one tools/call through the supervisor (EffectRuntime: all eight steps, our stdio transport
//    over a supervised tree, views, audit) vs the same call with a bare SDK client
//    (StdioClientTransport) to the same fixture server, interleaved; target: p50 ratio <= 1.25.
//    In the same loop, for the decomposition: the host path alone (our transport + SDK client) and
//    the effect pipeline alone (the tools_list builtin, which does no I/O).
// 2. discovery of 12 declared fixture servers of which 3 hang on initialize: time until the
//    catalog is ready (target: within the connect timeout + 250 ms) and the highest concurrency of
//    server operations (target: <= 4).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { liveConnection, McpConnectionManager } from '../src/adapters/mcp/index.js';
import { buildCatalog, identityInputFor } from '../src/catalog/index.js';
import { loadCore } from '../src/core/index.js';
import { EffectRuntime } from '../src/effects/index.js';
import { ApprovalBroker, NonInteractiveApprover } from '../src/policy/index.js';
import { openStore, SessionStore } from '../src/store/index.js';
import { BenchContext, progress } from './common.js';
import { msSince, round, roundSummary, summarize, type Summary } from './stats.js';

const FIXTURE = fileURLToPath(new URL('../../test/fixtures/mcp/server.mjs', import.meta.url));
export const CALL_TARGET = 1.25;
const READY_SLACK_MS = 250;

export interface McpBenchResult {
  call: { trials: number; supervisor: Summary; bare: Summary; ratio: number; target: number; pass: boolean; hostPath: Summary; hostRatio: number; pipeline: Summary; pipelineRatio: number };
  discovery: { servers: number; hanging: number; connectTimeoutMs: number; readyMs: number; targetMs: number; connected: number; timedOut: number; highestConcurrency: number; limit: number; pass: boolean };
  pass: boolean;
}

function decl(name: string, mode: string, timeoutS: number): string {
  return [
    `name: ${name}`,
    'transport:',
    '  type: stdio',
    `  command: ${JSON.stringify(process.execPath)}`,
    `  args: [${JSON.stringify(FIXTURE)}, ${mode}]`,
    `connect_timeout_seconds: ${timeoutS}`,
    'approval: { connect: auto, call: auto }',
    '',
  ].join('\n');
}

function writeCore(dir: string, servers: Record<string, string>): string {
  mkdirSync(join(dir, 'agent', 'mcp'), { recursive: true });
  writeFileSync(join(dir, 'agent.yaml'), 'name: bench\ngrants: ["mcp.connect:*", "mcp.call:*"]\napproval:\n  default: auto\n');
  for (const [name, text] of Object.entries(servers)) writeFileSync(join(dir, 'agent', 'mcp', `${name}.yaml`), text);
  return dir;
}

export async function runMcp(ctx: BenchContext): Promise<McpBenchResult> {
  const sup = ctx.openSupervisor('cgroup', 'mcp');
  const principal = 'local:bench';
  const broker = new ApprovalBroker({ approver: new NonInteractiveApprover() });

  // 1. Call: supervisor vs bare SDK client, interleaved.
  const core = await loadCore(writeCore(join(ctx.root, 'core-call'), { fx: decl('fx', 'basic', 10) }));
  const manager = new McpConnectionManager({ supervisor: sup });
  const db = openStore(join(ctx.root, 'mcp-store.db'));
  const session = new SessionStore(db).createSession({ principal }, { coreDir: core.dir, coreRevision: core.revision, runtime: 'local' });
  const capabilities = identityInputFor({ core, principal }).capabilities;
  const found = await manager.discover({ sessionId: session.id, principal, core, capabilities, broker });
  const catalog = buildCatalog({ core, principal, mcpTools: found.tools, connectPolicy: found.connectPolicy });
  const runtime = new EffectRuntime({ catalog, broker, supervisor: sup, db });
  const bare = new Client({ name: 'bench', version: '0' });
  await bare.connect(new StdioClientTransport({ command: process.execPath, args: [FIXTURE, 'basic'] }));
  const trials = ctx.options.quick ? 60 : 400;
  const warmup = 30;
  const sv: number[] = [];
  const bv: number[] = [];
  const hv: number[] = [];
  // The decomposition, in the same run: the eight steps around a builtin that does nearly nothing.
  const pv: number[] = [];
  const conn = liveConnection(found.tools[0]!.connection)!;
  progress(`mcp: ${warmup} warm-up + ${trials} interleaved echo calls`);
  for (let i = 0; i < warmup + trials; i++) {
    const args = { text: `hello ${i}` };
    const t0 = process.hrtime.bigint();
    const out = await runtime.execute(runtime.request('fx_echo', args)!, { principal, sessionId: session.id });
    const s = msSince(t0);
    if (!out.ok) throw new Error(`supervisor call failed: ${out.code} ${out.message}`);
    const t1 = process.hrtime.bigint();
    await bare.callTool({ name: 'echo', arguments: args });
    const b = msSince(t1);
    const t2 = process.hrtime.bigint();
    await conn.call('echo', args, { timeoutMs: 10_000 });
    const h = msSince(t2);
    const t3 = process.hrtime.bigint();
    const listed = await runtime.execute(runtime.request('tools_list', {})!, { principal, sessionId: session.id });
    const p = msSince(t3);
    if (!listed.ok) throw new Error(`tools_list failed: ${listed.code} ${listed.message}`);
    if (i >= warmup) {
      sv.push(s);
      bv.push(b);
      hv.push(h);
      pv.push(p);
    }
  }
  await bare.close();
  await manager.close();
  db.close();
  const supS = summarize(sv);
  const bareS = summarize(bv);
  const ratio = supS.median / bareS.median;

  // 2. Discovery of 12 servers, 3 of which hang.
  const timeoutS = ctx.options.quick ? 4 : 5;
  const servers: Record<string, string> = {};
  for (let i = 0; i < 12; i++) {
    const name = `s${String(i).padStart(2, '0')}`;
    servers[name] = decl(name, i % 4 === 1 ? 'hang' : 'basic', timeoutS);
  }
  const many = await loadCore(writeCore(join(ctx.root, 'core-discovery'), servers));
  const dm = new McpConnectionManager({ supervisor: sup });
  progress(`mcp: discovery of 12 servers (3 hang), connect timeout ${timeoutS} s`);
  const t0 = process.hrtime.bigint();
  const r = await dm.discover({ sessionId: 'bench-discovery', principal, core: many, capabilities: identityInputFor({ core: many, principal }).capabilities, broker });
  buildCatalog({ core: many, principal, mcpTools: r.tools, connectPolicy: r.connectPolicy });
  const readyMs = msSince(t0);
  const connected = r.servers.filter((x) => x.state === 'connected').length;
  const timedOut = r.servers.filter((x) => x.code === 'MCP_CONNECT_TIMEOUT').length;
  const highest = dm.highestConcurrency;
  await dm.close();
  const targetMs = timeoutS * 1000 + READY_SLACK_MS;
  const discovery = {
    servers: 12,
    hanging: 3,
    connectTimeoutMs: timeoutS * 1000,
    readyMs: round(readyMs, 1),
    targetMs,
    connected,
    timedOut,
    highestConcurrency: highest,
    limit: 4,
    pass: readyMs <= targetMs && highest <= 4 && connected === 9 && timedOut === 3,
  };
  await ctx.closeSupervisor(sup);
  const hostS = summarize(hv);
  const pipeS = summarize(pv);
  const call = {
    trials,
    supervisor: roundSummary(supS),
    bare: roundSummary(bareS),
    ratio: round(ratio),
    target: CALL_TARGET,
    pass: ratio <= CALL_TARGET,
    hostPath: roundSummary(hostS),
    hostRatio: round(hostS.median / bareS.median),
    pipeline: roundSummary(pipeS),
    pipelineRatio: round(pipeS.median / bareS.median),
  };
  return { call, discovery, pass: call.pass && discovery.pass };
}
