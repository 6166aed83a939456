// One run of an external agent CLI, in its order: a turn holding the prompt; an in-process
// loopback MCP server over the session's EffectRuntime, every call counted against the budgets;
// the CLI spawned through the lifecycle layer with a 0600 config naming that server; its
// stream-json read under hard bounds and folded into the session's hash-linked event chain; one
// verdict at the end. Whatever ends the run (a limit, a breach, a cancel) stops the tree and every
// call in flight.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { redactDeep, type EffectOutcome } from '../../effects/index.js';
import type { SupervisedTree, TreeOutcome } from '../../process/index.js';
import { settlesWithin } from '../../process/wait.js';
import { appendEvents, withPrivateUmask, writePrivateFile } from '../../store/index.js';
import { CallsInFlight, createCatalogServer, type CatalogCallGate } from '../mcp-server/catalog-server.js';
import { startLoopbackMcpHttp, type LoopbackMcpHttp } from '../mcp-server/loopback-http.js';
import { countOutcome, type RuntimeRunOptions, type RuntimeRunResult, type RuntimeSession } from '../runtime-types.js';
import { BoundedLineSplitter, type SplitLine } from './bounded-lines.js';
import type { ExternalBudgets } from './budgets.js';
import type { CliStreamEvent, ExternalCliAdapter } from './cli-adapter.js';

/** The environment names every child gets from the supervisor's (process/child-env.ts). */
const BASE_ENV = ['HOME', 'LOGNAME', 'PATH', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];
/** Events of one run folded into the chain one by one; beyond this they are only counted. */
const MAX_FOLDED_EVENTS = 2000;
/** Unreadable lines (not JSON, oversized) folded individually; beyond this only counted. */
const MAX_FOLDED_BAD_LINES = 50;
const STOP_GRACE_MS = 2000;
/** After the tree is gone the pipe's writer is too: its end comes; this cap is only a backstop. */
const DRAIN_AFTER_EXIT_MS = 5000;
/** A cancelled effect still records its end: the session's store stays open this long for it. */
const CALLS_IDLE_MS = 15_000;

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

/** What prepare() checked and resolved: the run spawns exactly this. */
export interface RunPlan {
  binary: string;
  argv: string[];
  runDir: string;
  budgets: ExternalBudgets;
}

type RunOutcome = RuntimeRunResult['outcome'];
interface Verdict {
  readonly outcome: RunOutcome;
  readonly reason: string;
}
type CliResult = Extract<CliStreamEvent, { kind: 'result' }>;
type BudgetName = 'tool_calls' | 'wall_clock' | 'cost_usd' | 'turns' | 'output_bytes';

export async function runExternal(adapter: ExternalCliAdapter, s: RuntimeSession, p: RunPlan, o: RuntimeRunOptions): Promise<RuntimeRunResult> {
  const run = ExternalRun.open(adapter, s, p, o);
  const http = await run.startServer();
  let outcome: TreeOutcome;
  try {
    outcome = await run.superviseCli(http);
  } finally {
    await run.finish(http);
  }
  return run.conclude(outcome);
}

class ExternalRun {
  private readonly scope: { principal: string };
  /** The CLI's name for a tool of the supervisor's server starts with this; anything else is a built-in. */
  private readonly prefix: string;
  private tree: SupervisedTree | null = null;
  /** Set once by the first thing that ends the run; it decides the verdict. */
  private ending: Verdict | null = null;
  // Ends every call in flight when the run ends (limit, breach, cancel), not only the CLI.
  private readonly stopCalls = new AbortController();
  private readonly inFlight = new CallsInFlight();

  // What the run counted, recorded in runtime.exited and the result.
  private readonly effects = { ok: 0, failed: 0 };
  private iteration = 0;
  /** Tool calls through the supervisor's server: the supervisor's own count, not the CLI's. */
  private calls = 0;
  private storedOutputBytes = 0;
  private folded = 0;
  private unfolded = 0;
  private readonly bad = { malformed: 0, oversized: 0, unknown: 0 };
  // Once the run is ending (a limit, a breach, a cancel) the CLI's output is only counted: the
  // tree takes up to its grace period to die, and a CLI that floods must not be written on.
  private readonly afterEnd = { lines: 0, bytes: 0 };
  private result: CliResult | null = null;
  private finalText: string | null = null;

  private constructor(
    private readonly adapter: ExternalCliAdapter,
    private readonly s: RuntimeSession,
    private readonly p: RunPlan,
    private readonly o: RuntimeRunOptions,
    private readonly prompt: string,
    private readonly turnId: string,
  ) {
    this.scope = { principal: s.principal };
    this.prefix = adapter.toolNameFor('');
  }

  /** The run starts as a turn holding the prompt as its user message. */
  static open(adapter: ExternalCliAdapter, s: RuntimeSession, p: RunPlan, o: RuntimeRunOptions): ExternalRun {
    const prompt = o.prompt ?? (s.core.agent.description || 'Run your task.');
    const scope = { principal: s.principal };
    const turnId = s.sessions.addTurn(scope, s.sessionId).id;
    s.sessions.addMessage(scope, s.sessionId, { turnId, role: 'user', content: redactDeep({ role: 'user', content: prompt }, s.runtime.redactor()) });
    o.onEvent({ type: 'user', turn: 1, text: prompt });
    return new ExternalRun(adapter, s, p, o, prompt, turnId);
  }

  /** The per-run MCP server: the session's catalog, every call through the run's gate. */
  startServer(): Promise<LoopbackMcpHttp> {
    const { s, o } = this;
    return startLoopbackMcpHttp({
      host: '127.0.0.1',
      port: 0,
      makeServer: () =>
        createCatalogServer({
          runtime: s.runtime,
          principal: s.principal,
          sessionId: s.sessionId,
          signal: AbortSignal.any([o.signal, this.stopCalls.signal]),
          inFlight: this.inFlight,
          ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
          gate: this.gate,
          onOutcome: (outcome: EffectOutcome) => {
            countOutcome(this.effects, outcome);
            o.onEvent({ type: 'tool_result', iteration: this.iteration, outcome });
          },
        }),
    });
  }

  /** The supervisor's own count of what the CLI did: every call through its server. */
  private readonly gate: CatalogCallGate = (tool, args) => {
    if (this.ending) return { allow: false, message: `RUN_ENDING: the run is ending (${this.ending.reason})` };
    this.calls++;
    const max = this.p.budgets.maxToolCalls;
    if (this.calls > max) {
      this.limit('tool_calls', `call ${this.calls} of at most ${max} (limits.max_iterations)`);
      return { allow: false, message: `LIMIT_HIT: this run may make at most ${max} tool calls` };
    }
    this.o.onEvent({ type: 'tool_call', iteration: this.iteration, callId: `ext_${this.calls}`, name: tool, arguments: args });
    return { allow: true };
  };

  /** Spawns the CLI against the server and reads its stream until the tree is gone. */
  async superviseCli(http: LoopbackMcpHttp): Promise<TreeOutcome> {
    const { p, o } = this;
    this.writeMcpConfig(http);
    const tree = this.spawnCli(http);
    const wall = setTimeout(() => this.limit('wall_clock', `${p.budgets.wallClockMs} ms (limits.timeout_seconds)`), p.budgets.wallClockMs);
    const onAbort = (): void => this.end('cancelled', 'cancelled by the operator');
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    tree.stdin?.on('error', () => undefined); // a CLI that exits before reading its prompt
    tree.stdin?.end(this.prompt);
    const splitter = new BoundedLineSplitter();
    const drained = this.readLines(tree.stdout!, splitter);
    const outcome = await tree.done;
    await settlesWithin(drained, DRAIN_AFTER_EXIT_MS);
    const last = splitter.end();
    if (last) this.onLine(last);
    clearTimeout(wall);
    o.signal.removeEventListener('abort', onAbort);
    return outcome;
  }

  /** The config holds the run's bearer token: 0600 from the first byte, in a 0700 directory. */
  private writeMcpConfig(http: LoopbackMcpHttp): void {
    withPrivateUmask(() => mkdirSync(this.p.runDir, { recursive: true, mode: 0o700 }));
    writePrivateFile(join(this.p.runDir, 'mcp.json'), this.adapter.mcpConfig(http.url, http.token));
  }

  private spawnCli(http: LoopbackMcpHttp): SupervisedTree {
    const { adapter, s, p } = this;
    const env: Record<string, string> = {};
    for (const k of [...BASE_ENV, ...adapter.envPassThrough]) if (process.env[k] !== undefined) env[k] = process.env[k]!;
    this.fold('runtime.started', { runtime: adapter.name, binary_sha256: sha256(p.binary), argv: p.argv.map((a) => a.slice(0, 500)), budgets: { ...p.budgets } });
    const tree = s.supervisor.spawnTree({
      command: p.binary,
      args: p.argv,
      cwd: s.core.workspace,
      env,
      stdin: 'pipe',
      stdout: 'raw',
      // A backstop behind the supervisor's own wall clock (which records limit_hit).
      timeoutMs: p.budgets.wallClockMs + 10_000,
      graceMs: STOP_GRACE_MS,
      // The end of the stream-json is the run's result: read it all (the pipe closes once every
      // member is gone, so this only waits for our own reading, e.g. on a loaded machine).
      drainAfterExitMs: 10_000,
      // Live: secrets the session resolves during the run (its tool calls) are redacted from then on.
      redact: s.secrets.redaction.withExtra([http.token]),
    });
    this.tree = tree;
    this.o.onEvent({ type: 'runtime_started', runtime: adapter.name, pid: tree.pid, spawnId: tree.spawnId, binary: p.binary, budgets: { ...p.budgets } });
    return tree;
  }

  /** Feeds the CLI's stdout to onLine as bounded lines; resolves when the pipe is done. */
  private readLines(stdout: NodeJS.ReadableStream, splitter: BoundedLineSplitter): Promise<void> {
    return new Promise<void>((resolve) => {
      stdout.on('data', (chunk: Buffer) => {
        if (this.ending) this.afterEnd.bytes += chunk.length;
        for (const l of splitter.push(chunk)) this.onLine(l);
      });
      stdout.once('end', resolve);
      stdout.once('close', resolve);
      stdout.once('error', () => resolve());
    });
  }

  private onLine(l: SplitLine): void {
    if (this.ending) {
      this.afterEnd.lines++;
      return;
    }
    if ('oversized' in l) {
      this.bad.oversized++;
      this.foldRefusedLine({ reason: 'oversized', bytes: l.oversized });
      return;
    }
    if (l.line.trim() === '') return;
    let obj: unknown;
    try {
      obj = JSON.parse(l.line);
    } catch {
      this.bad.malformed++;
      this.foldRefusedLine({ reason: 'not JSON', bytes: Buffer.byteLength(l.line), sha256: sha256(l.line) });
      return;
    }
    const ev = this.adapter.parseEvent(obj);
    if (!ev) {
      this.bad.unknown++;
      return;
    }
    this.onStreamEvent(ev);
  }

  private foldRefusedLine(payload: Record<string, unknown>): void {
    if (this.bad.oversized + this.bad.malformed <= MAX_FOLDED_BAD_LINES) this.fold('runtime.line_refused', payload);
  }

  private onStreamEvent(ev: CliStreamEvent): void {
    switch (ev.kind) {
      case 'init':
        return this.onInit(ev);
      case 'assistant':
        return this.onAssistant(ev);
      case 'tool_result':
        this.fold('runtime.tool_result', { tool_use_id: ev.toolUseId, is_error: ev.isError });
        return;
      case 'result':
        return this.onResult(ev);
      case 'other':
        this.bad.unknown++;
        return;
    }
  }

  private onInit(ev: Extract<CliStreamEvent, { kind: 'init' }>): void {
    const { adapter, s, o } = this;
    this.fold('runtime.init', { tools: ev.tools, model: ev.model, version: ev.version, mcp_servers: ev.mcpServers });
    o.onEvent({ type: 'runtime_init', runtime: adapter.name, tools: ev.tools, model: ev.model, version: ev.version });
    // Belt and braces: what the CLI says it offers must be the catalog's tools only.
    const catalogNames = new Set(s.runtime.catalog.entries.map((e) => adapter.toolNameFor(e.name)));
    const foreign = ev.tools.filter((t) => !catalogNames.has(t) && !adapter.toleratedInitTools.includes(t));
    if (foreign.length === 0) return;
    const detail = `the CLI offers tools outside the catalog: ${foreign.slice(0, 20).join(', ')}`;
    this.fold('runtime.boundary_breach', { tools: foreign.slice(0, 100) });
    o.onEvent({ type: 'runtime_warning', message: `${detail}; stopping it` });
    this.end('failed', `RUNTIME_BUILTIN_EXPOSED: ${detail}`);
  }

  private onAssistant(ev: Extract<CliStreamEvent, { kind: 'assistant' }>): void {
    const { s, o, p } = this;
    const iteration = ++this.iteration;
    // A backstop on what the CLI reports (the tool-call count is the supervisor's own): the
    // answer after the last allowed call is one more turn. A turn past it is not stored.
    if (iteration > p.budgets.maxTurns + 1) {
      this.limit('turns', `turn ${iteration} of at most ${p.budgets.maxTurns + 1} (limits.max_iterations + the final answer)`);
      return;
    }
    const content = redactDeep({ role: 'assistant', content: ev.text, toolCalls: ev.toolUses }, s.runtime.redactor());
    const bytes = Buffer.byteLength(JSON.stringify(content), 'utf8');
    if (this.storedOutputBytes + bytes > p.budgets.maxStoredOutputBytes) {
      this.limit('output_bytes', `turn ${iteration} would bring the stored assistant output to ${this.storedOutputBytes + bytes} bytes, at most ${p.budgets.maxStoredOutputBytes}`);
      return;
    }
    this.storedOutputBytes += bytes;
    if (ev.text !== null) this.finalText = ev.text;
    this.fold('runtime.assistant', { iteration, text_sha256: ev.text === null ? null : sha256(ev.text), tool_uses: ev.toolUses.map((t) => t.name) });
    s.sessions.addMessage(this.scope, s.sessionId, { turnId: this.turnId, role: 'assistant', content });
    o.onEvent({ type: 'assistant', iteration, text: ev.text, toolCalls: ev.toolUses.length, streamed: false });
    for (const t of ev.toolUses) {
      if (t.name.startsWith(this.prefix)) continue;
      // A built-in the CLI should not have: it cannot reach the supervisor; it is recorded.
      this.fold('runtime.builtin_attempt', { iteration, tool: t.name });
      o.onEvent({ type: 'builtin_attempt', iteration, name: t.name });
    }
  }

  private onResult(ev: CliResult): void {
    const max = this.p.budgets.maxCostUsd;
    this.result = ev;
    if (ev.text !== null) this.finalText = ev.text;
    this.fold('runtime.result', { subtype: ev.subtype, is_error: ev.isError, cost_usd: ev.costUsd, turns: ev.turns, stop_reason: ev.stopReason });
    this.o.onEvent({ type: 'runtime_result', subtype: ev.subtype, costUsd: ev.costUsd, turns: ev.turns, stopReason: ev.stopReason });
    if (ev.costUsd !== null && ev.costUsd > max) this.limit('cost_usd', `reported ${ev.costUsd} USD, at most ${max} (limits.max_cost_usd)`);
  }

  /** A budget is spent: recorded, told, and the run ends with limit_hit. */
  private limit(kind: BudgetName, detail: string): void {
    if (this.ending) return;
    this.fold('runtime.limit_hit', { limit: kind, detail });
    this.o.onEvent({ type: 'runtime_limit', limit: kind, detail });
    this.end('limit_hit', `${kind}: ${detail}`);
  }

  private end(outcome: RunOutcome, reason: string): void {
    if (this.ending) return;
    this.ending = { outcome, reason };
    this.stopCalls.abort();
    void this.tree?.stop('cancelled');
  }

  /** One redacted event into the session's chain; past MAX_FOLDED_EVENTS only limits and the exit are. */
  private fold(kind: string, payload: Record<string, unknown>): void {
    if (this.folded >= MAX_FOLDED_EVENTS && kind !== 'runtime.limit_hit' && kind !== 'runtime.exited') {
      this.unfolded++;
      return;
    }
    this.folded++;
    appendEvents(this.s.db, this.s.sessionId, [{ kind, payload: redactDeep(payload, this.s.runtime.redactor()) }]);
  }

  /** The server and every call in flight end with the run; the config (it holds the token) goes too. */
  async finish(http: LoopbackMcpHttp): Promise<void> {
    this.stopCalls.abort();
    await http.close();
    await this.inFlight.idle(CALLS_IDLE_MS);
    rmSync(this.p.runDir, { recursive: true, force: true });
  }

  /** The verdict, recorded as runtime.exited, closes the turn. */
  conclude(outcome: TreeOutcome): RuntimeRunResult {
    const { s, o } = this;
    const verdict = verdictOf(this.ending, this.result, outcome);
    this.fold('runtime.exited', {
      outcome: verdict.outcome,
      reason: verdict.reason.slice(0, 1000),
      exit_code: outcome.exitCode ?? null,
      signal: outcome.signal ?? null,
      tree: outcome.reason ?? null,
      killed: { ...outcome.killed },
      tool_calls: this.calls,
      lines: { ...this.bad, after_end: this.afterEnd.lines },
      bytes_after_end: this.afterEnd.bytes,
      stored_output_bytes: this.storedOutputBytes,
      unfolded_events: this.unfolded,
    });
    if (this.finalText !== null) o.onEvent({ type: 'final', iteration: this.iteration, text: this.finalText });
    s.sessions.endTurn(this.scope, this.turnId, verdict.outcome === 'completed' ? 'completed' : verdict.outcome === 'cancelled' ? 'cancelled' : 'failed');
    return { outcome: verdict.outcome, turns: 1, iterations: this.iteration, effects: this.effects, reason: verdict.reason, costUsd: this.result?.costUsd ?? null };
  }
}

/** What ended the run, else what the CLI and its tree said, in that order. */
function verdictOf(ending: Verdict | null, r: CliResult | null, outcome: TreeOutcome): Verdict {
  if (ending) return ending;
  if (r && (r.subtype === 'error_max_turns' || r.subtype === 'error_max_budget_usd')) return { outcome: 'limit_hit', reason: `the CLI stopped itself: ${r.subtype}` };
  if (r && r.subtype === 'success' && !r.isError && outcome.exitCode === 0) return { outcome: 'completed', reason: 'success' };
  if (outcome.reason === 'timeout') return { outcome: 'limit_hit', reason: 'wall_clock: the process deadline' };
  return { outcome: 'failed', reason: r ? `the CLI ended with ${r.subtype}` : `the CLI exited (${outcome.exitCode ?? outcome.signal ?? '?'}) without a result; stderr: ${outcome.stderr.tail.slice(-500)}` };
}

