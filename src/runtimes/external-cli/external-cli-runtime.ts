// An external agent CLI as a runtime: the CLI reasons, the supervisor keeps the authority. Per
// run: an in-process loopback MCP server over the session's EffectRuntime (the same code as
// `supervisor serve --http`), a 0600 MCP config naming it with a fresh token, the CLI spawned
// through the lifecycle layer with no built-in tools, its stream-json parsed under hard bounds
// and folded into the session's hash-linked event chain, and the supervisor's own budgets.
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, rmSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ResolvedEffectCatalog } from '../../catalog/index.js';
import { redactDeep, type EffectOutcome } from '../../effects/index.js';
import type { SupervisedTree, TreeOutcome } from '../../process/index.js';
import { appendEvents, withPrivateUmask, writePrivateFile } from '../../store/index.js';
import { CallsInFlight, createCatalogServer, mcpToolsFor } from '../mcp-server/catalog-server.js';
import { startLoopbackMcpHttp, type LoopbackMcpHttp } from '../mcp-server/loopback-http.js';
import { boundOf } from '../effect-bound.js';
import { countOutcome, RuntimeSetupError, type AgentRuntime, type EffectBound, type PreparedRun, type RuntimeRunOptions, type RuntimeRunResult, type RuntimeSession } from '../runtime-types.js';
import { BoundedLineSplitter, type SplitLine } from './bounded-lines.js';
import { externalBudgets, type ExternalBudgets } from './budgets.js';
import type { CliArgvInput, CliStreamEvent, ExternalCliAdapter } from './cli-adapter.js';

/** The environment names every child gets from the supervisor's (process/child-env.ts). */
const BASE_ENV = ['HOME', 'LOGNAME', 'PATH', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];
/** Events of one run folded into the chain one by one; beyond this they are only counted. */
const MAX_FOLDED_EVENTS = 2000;
/** Unreadable lines (not JSON, oversized) folded individually; beyond this only counted. */
const MAX_FOLDED_BAD_LINES = 50;
const STOP_GRACE_MS = 2000;

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** Finds the CLI: the adapter's environment variable (a path), else its name on PATH. */
export function resolveCliBinary(adapter: ExternalCliAdapter, env: NodeJS.ProcessEnv = process.env): string {
  const named = env[adapter.binaryEnv];
  const candidate = named !== undefined && named !== '' ? named : adapter.defaultBinary;
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (candidate.includes('/')) {
    if (!isAbsolute(candidate)) throw new RuntimeSetupError('RUNTIME_BINARY_MISSING', `${adapter.binaryEnv}=${candidate}: give an absolute path`);
    if (executable(candidate)) return candidate;
    throw new RuntimeSetupError('RUNTIME_BINARY_MISSING', `${adapter.binaryEnv}=${candidate} is not an executable file`);
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const p = join(dir, candidate);
    if (executable(p)) return p;
  }
  throw new RuntimeSetupError(
    'RUNTIME_BINARY_MISSING',
    `runtime ${adapter.name}: no ${candidate} on PATH; install it or set ${adapter.binaryEnv} to its absolute path`,
  );
}

export function externalCliRuntime(adapter: ExternalCliAdapter): AgentRuntime {
  const argvInput = (catalog: ResolvedEffectCatalog, mcpConfigPath: string, passThrough: readonly string[] = []): CliArgvInput => ({
    mcpConfigPath,
    tools: catalog.entries.map((e) => e.name),
    budgets: externalBudgets(catalog.core),
    passThrough,
  });
  return {
    name: adapter.name,
    substrate: 'external-cli',
    locate() {
      try {
        return resolveCliBinary(adapter);
      } catch {
        return null;
      }
    },
    effectBound(catalog) {
      // What the per-run MCP server lists, and what the argv leaves of the CLI's own tools.
      const input = argvInput(catalog, '/nonexistent/mcp.json');
      const argv = adapter.buildArgv(input);
      adapter.checkArgv(argv, input);
      const tools = mcpToolsFor(catalog).map((t) => ({ name: t.name, schema: t.inputSchema }));
      return boundOf(catalog, tools, adapter.builtinsExposed(argv));
    },
    async prepare(s, o): Promise<PreparedRun> {
      const passThrough = o.passThrough ?? [];
      adapter.checkPassThrough(passThrough);
      const binary = resolveCliBinary(adapter);
      const runDir = join(s.stateDir, 'runtimes', s.sessionId);
      const input = argvInput(s.runtime.catalog, join(runDir, 'mcp.json'), passThrough);
      const argv = adapter.buildArgv(input);
      // The adapter's own argv is checked like an operator's: fail closed before anything starts.
      adapter.checkArgv(argv, input);
      const exposed = adapter.builtinsExposed(argv);
      if (exposed.length > 0) throw new RuntimeSetupError('RUNTIME_BUILTIN_EXPOSED', `runtime ${adapter.name}: the argv would expose ${exposed.join(', ')}`);
      return { run: (r) => runExternal(adapter, s, { binary, argv, runDir, budgets: input.budgets }, r), close: async () => undefined };
    },
  };
}

interface RunPlan {
  binary: string;
  argv: string[];
  runDir: string;
  budgets: ExternalBudgets;
}

async function runExternal(adapter: ExternalCliAdapter, s: RuntimeSession, p: RunPlan, o: RuntimeRunOptions): Promise<RuntimeRunResult> {
  const scope = { principal: s.principal };
  const redact = (): ((t: string) => string) => s.runtime.redactor();
  let folded = 0;
  let unfolded = 0;
  const fold = (kind: string, payload: Record<string, unknown>): void => {
    if (folded >= MAX_FOLDED_EVENTS && kind !== 'runtime.limit_hit' && kind !== 'runtime.exited') {
      unfolded++;
      return;
    }
    folded++;
    appendEvents(s.db, s.sessionId, [{ kind, payload: redactDeep(payload, redact()) }]);
  };
  const prompt = o.prompt ?? (s.core.agent.description || 'Run your task.');
  const prefix = adapter.toolNameFor('');
  const turnId = s.sessions.addTurn(scope, s.sessionId).id;
  s.sessions.addMessage(scope, s.sessionId, { turnId, role: 'user', content: redactDeep({ role: 'user', content: prompt }, redact()) });
  o.onEvent({ type: 'user', turn: 1, text: prompt });

  const effects = { ok: 0, failed: 0 };
  let iteration = 0;
  let calls = 0;
  let ending: { outcome: RuntimeRunResult['outcome']; reason: string } | null = null;
  let tree: SupervisedTree | null = null;
  let result: Extract<CliStreamEvent, { kind: 'result' }> | null = null;
  let finalText: string | null = null;
  const bad = { malformed: 0, oversized: 0, unknown: 0 };
  // Once the run is ending (a limit, a breach, a cancel) the CLI's output is only counted: the
  // tree takes up to its grace period to die, and a CLI that floods must not be written on.
  const afterEnd = { lines: 0, bytes: 0 };
  let storedOutputBytes = 0;

  // Ends every call in flight when the run ends (limit, breach, cancel), not only the CLI.
  const stopCalls = new AbortController();
  const inFlight = new CallsInFlight();
  const end = (outcome: RuntimeRunResult['outcome'], reason: string): void => {
    if (ending) return;
    ending = { outcome, reason };
    stopCalls.abort();
    void tree?.stop('cancelled');
  };
  const limit = (kind: 'tool_calls' | 'wall_clock' | 'cost_usd' | 'turns' | 'output_bytes', detail: string): void => {
    if (ending) return;
    fold('runtime.limit_hit', { limit: kind, detail });
    o.onEvent({ type: 'runtime_limit', limit: kind, detail });
    end('limit_hit', `${kind}: ${detail}`);
  };

  const http: LoopbackMcpHttp = await startLoopbackMcpHttp({
    host: '127.0.0.1',
    port: 0,
    makeServer: () =>
      createCatalogServer({
        runtime: s.runtime,
        principal: s.principal,
        sessionId: s.sessionId,
        signal: AbortSignal.any([o.signal, stopCalls.signal]),
        inFlight,
        ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
        // The supervisor's own count of what the CLI did: every call through its server.
        gate: (tool, args) => {
          if (ending) return { allow: false, message: `RUN_ENDING: the run is ending (${ending.reason})` };
          calls++;
          if (calls > p.budgets.maxToolCalls) {
            limit('tool_calls', `call ${calls} of at most ${p.budgets.maxToolCalls} (limits.max_iterations)`);
            return { allow: false, message: `LIMIT_HIT: this run may make at most ${p.budgets.maxToolCalls} tool calls` };
          }
          o.onEvent({ type: 'tool_call', iteration, callId: `ext_${calls}`, name: tool, arguments: args });
          return { allow: true };
        },
        onOutcome: (outcome: EffectOutcome) => {
          countOutcome(effects, outcome);
          o.onEvent({ type: 'tool_result', iteration, outcome });
        },
      }),
  });
  const finish = async (): Promise<void> => {
    stopCalls.abort();
    await http.close();
    // A cancelled effect still records its end; the session's store must be open for it.
    await inFlight.idle(15_000);
    // The config holds the run's token: gone with the run.
    rmSync(p.runDir, { recursive: true, force: true });
  };
  let outcome: TreeOutcome | null = null;
  try {
    // The config holds the run's bearer token: 0600 from the first byte, in a 0700 directory.
    withPrivateUmask(() => mkdirSync(p.runDir, { recursive: true, mode: 0o700 }));
    writePrivateFile(join(p.runDir, 'mcp.json'), adapter.mcpConfig(http.url, http.token));
    const env: Record<string, string> = {};
    for (const k of [...BASE_ENV, ...adapter.envPassThrough]) if (process.env[k] !== undefined) env[k] = process.env[k]!;
    fold('runtime.started', { runtime: adapter.name, binary_sha256: sha256(p.binary), argv: p.argv.map((a) => a.slice(0, 500)), budgets: { ...p.budgets } });
    tree = s.supervisor.spawnTree({
      command: p.binary,
      args: p.argv,
      cwd: s.core.workspace,
      env,
      stdin: 'pipe',
      stdout: 'raw',
      // A backstop behind the supervisor's own wall clock below (which records limit_hit).
      timeoutMs: p.budgets.wallClockMs + 10_000,
      graceMs: STOP_GRACE_MS,
      // The end of the stream-json is the run's result: read it all (the pipe closes once every
      // member is gone, so this only waits for our own reading, e.g. on a loaded machine).
      drainAfterExitMs: 10_000,
      // Live: secrets the session resolves during the run (its tool calls) are redacted from then on.
      redact: s.secrets.redaction.withExtra([http.token]),
    });
    o.onEvent({ type: 'runtime_started', runtime: adapter.name, pid: tree.pid, spawnId: tree.spawnId, binary: p.binary, budgets: { ...p.budgets } });
    const wall = setTimeout(() => limit('wall_clock', `${p.budgets.wallClockMs} ms (limits.timeout_seconds)`), p.budgets.wallClockMs);
    const onAbort = (): void => end('cancelled', 'cancelled by the operator');
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    tree.stdin?.on('error', () => undefined); // a CLI that exits before reading its prompt
    tree.stdin?.end(prompt);

    const splitter = new BoundedLineSplitter();
    const onLine = (l: SplitLine): void => {
      if (ending) {
        afterEnd.lines++;
        return;
      }
      if ('oversized' in l) {
        bad.oversized++;
        if (bad.oversized + bad.malformed <= MAX_FOLDED_BAD_LINES) fold('runtime.line_refused', { reason: 'oversized', bytes: l.oversized });
        return;
      }
      if (l.line.trim() === '') return;
      let obj: unknown;
      try {
        obj = JSON.parse(l.line);
      } catch {
        bad.malformed++;
        if (bad.oversized + bad.malformed <= MAX_FOLDED_BAD_LINES) fold('runtime.line_refused', { reason: 'not JSON', bytes: Buffer.byteLength(l.line), sha256: sha256(l.line) });
        return;
      }
      const ev = adapter.parseEvent(obj);
      if (!ev) {
        bad.unknown++;
        return;
      }
      handle(ev);
    };
    const handle = (ev: CliStreamEvent): void => {
      switch (ev.kind) {
        case 'init': {
          fold('runtime.init', { tools: ev.tools, model: ev.model, version: ev.version, mcp_servers: ev.mcpServers });
          o.onEvent({ type: 'runtime_init', runtime: adapter.name, tools: ev.tools, model: ev.model, version: ev.version });
          // Belt and braces: what the CLI says it offers must be the catalog's tools only.
          const catalogNames = new Set(s.runtime.catalog.entries.map((e) => adapter.toolNameFor(e.name)));
          const foreign = ev.tools.filter((t) => !catalogNames.has(t) && !adapter.toleratedInitTools.includes(t));
          if (foreign.length > 0) {
            const detail = `the CLI offers tools outside the catalog: ${foreign.slice(0, 20).join(', ')}`;
            fold('runtime.boundary_breach', { tools: foreign.slice(0, 100) });
            o.onEvent({ type: 'runtime_warning', message: `${detail}; stopping it` });
            end('failed', `RUNTIME_BUILTIN_EXPOSED: ${detail}`);
          }
          return;
        }
        case 'assistant': {
          iteration++;
          // A backstop on what the CLI reports (the tool-call count is the supervisor's own): the
          // answer after the last allowed call is one more turn. A turn past it is not stored.
          if (iteration > p.budgets.maxTurns + 1) {
            limit('turns', `turn ${iteration} of at most ${p.budgets.maxTurns + 1} (limits.max_iterations + the final answer)`);
            return;
          }
          const content = redactDeep({ role: 'assistant', content: ev.text, toolCalls: ev.toolUses }, redact());
          const bytes = Buffer.byteLength(JSON.stringify(content), 'utf8');
          if (storedOutputBytes + bytes > p.budgets.maxStoredOutputBytes) {
            limit('output_bytes', `turn ${iteration} would bring the stored assistant output to ${storedOutputBytes + bytes} bytes, at most ${p.budgets.maxStoredOutputBytes}`);
            return;
          }
          storedOutputBytes += bytes;
          if (ev.text !== null) finalText = ev.text;
          fold('runtime.assistant', { iteration, text_sha256: ev.text === null ? null : sha256(ev.text), tool_uses: ev.toolUses.map((t) => t.name) });
          s.sessions.addMessage(scope, s.sessionId, { turnId, role: 'assistant', content });
          o.onEvent({ type: 'assistant', iteration, text: ev.text, toolCalls: ev.toolUses.length, streamed: false });
          for (const t of ev.toolUses) {
            if (t.name.startsWith(prefix)) continue;
            // A built-in the CLI should not have: it cannot reach the supervisor; it is recorded.
            fold('runtime.builtin_attempt', { iteration, tool: t.name });
            o.onEvent({ type: 'builtin_attempt', iteration, name: t.name });
          }
          return;
        }
        case 'tool_result':
          fold('runtime.tool_result', { tool_use_id: ev.toolUseId, is_error: ev.isError });
          return;
        case 'result': {
          result = ev;
          if (ev.text !== null) finalText = ev.text;
          fold('runtime.result', { subtype: ev.subtype, is_error: ev.isError, cost_usd: ev.costUsd, turns: ev.turns, stop_reason: ev.stopReason });
          o.onEvent({ type: 'runtime_result', subtype: ev.subtype, costUsd: ev.costUsd, turns: ev.turns, stopReason: ev.stopReason });
          if (ev.costUsd !== null && ev.costUsd > p.budgets.maxCostUsd) limit('cost_usd', `reported ${ev.costUsd} USD, at most ${p.budgets.maxCostUsd} (limits.max_cost_usd)`);
          return;
        }
        case 'other':
          bad.unknown++;
          return;
      }
    };
    const stdout = tree.stdout!;
    const drained = new Promise<void>((resolve) => {
      stdout.on('data', (chunk: Buffer) => {
        if (ending) afterEnd.bytes += chunk.length;
        for (const l of splitter.push(chunk)) onLine(l);
      });
      stdout.once('end', resolve);
      stdout.once('close', resolve);
      stdout.once('error', () => resolve());
    });
    outcome = await tree.done;
    // The tree is gone, so the pipe's writer is too: the end comes; the cap is only a backstop.
    let capTimer: NodeJS.Timeout | undefined;
    await Promise.race([drained, new Promise((r) => (capTimer = setTimeout(r, 5000)))]);
    clearTimeout(capTimer);
    const last = splitter.end();
    if (last) onLine(last);
    clearTimeout(wall);
    o.signal.removeEventListener('abort', onAbort);
  } finally {
    await finish();
  }
  const r = result as Extract<CliStreamEvent, { kind: 'result' }> | null;
  let verdict: { outcome: RuntimeRunResult['outcome']; reason: string };
  if (ending) verdict = ending;
  else if (r && (r.subtype === 'error_max_turns' || r.subtype === 'error_max_budget_usd')) verdict = { outcome: 'limit_hit', reason: `the CLI stopped itself: ${r.subtype}` };
  else if (r && r.subtype === 'success' && !r.isError && outcome?.exitCode === 0) verdict = { outcome: 'completed', reason: 'success' };
  else if (outcome?.reason === 'timeout') verdict = { outcome: 'limit_hit', reason: 'wall_clock: the process deadline' };
  else verdict = { outcome: 'failed', reason: r ? `the CLI ended with ${r.subtype}` : `the CLI exited (${outcome?.exitCode ?? outcome?.signal ?? '?'}) without a result; stderr: ${outcome?.stderr.tail.slice(-500) ?? ''}` };
  fold('runtime.exited', {
    outcome: verdict.outcome,
    reason: verdict.reason.slice(0, 1000),
    exit_code: outcome?.exitCode ?? null,
    signal: outcome?.signal ?? null,
    tree: outcome?.reason ?? null,
    killed: outcome ? { ...outcome.killed } : null,
    tool_calls: calls,
    lines: { ...bad, after_end: afterEnd.lines },
    bytes_after_end: afterEnd.bytes,
    stored_output_bytes: storedOutputBytes,
    unfolded_events: unfolded,
  });
  if (finalText !== null) o.onEvent({ type: 'final', iteration, text: finalText });
  s.sessions.endTurn(scope, turnId, verdict.outcome === 'completed' ? 'completed' : verdict.outcome === 'cancelled' ? 'cancelled' : 'failed');
  return { outcome: verdict.outcome, turns: 1, iterations: iteration, effects, reason: verdict.reason, costUsd: r?.costUsd ?? null };
}

export type { EffectBound };
