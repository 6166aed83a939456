// `supervisor run <core>`: one session of the core's agent through the turn loop, every tool call
// through EffectRuntime; offline and deterministic with the scripted provider, or against a real
// model (OpenAI-compatible or Anthropic).
import { cliIo } from './io.js';
import { resolve } from 'node:path';
import type { EffectOutcome } from '../effects/index.js';
import { displayJson, displayText } from '../redaction/index.js';
// The registry and the types, not the runtimes' barrel: it re-exports the MCP server, which a run
// loads only when an external runtime starts its CLI.
import { registeredRuntimes, runtimeFor } from '../runtimes/registry.js';
import { RuntimeSetupError, type PreparedRun, type RuntimeEvent, type RuntimeRunResult } from '../runtimes/runtime-types.js';
import { ProviderError } from '../turns/providers/errors.js';
import { openCoreSession, type CoreSession, type CoreSessionOptions } from './core-session.js';
import { parseFlags } from './flags.js';
import { installShutdown } from './shutdown.js';
import { DEFAULT_STORE_APPROVAL_WAIT_MS, joinForRun, storeUrlOf, type ControlPlaneStop } from './control-plane-cli.js';
import { defaultStateDir } from './state-dir.js';
import { parseDuration, UsageError } from './usage.js';
import { viewPrinter } from './view-printer.js';

export const RUN_HELP = `Usage: supervisor run <core> [--prompt TEXT] [--json] [--approve RULE]... [--deny RULE]...
                      [--timeout S] [--resume ID] [--await-approval S] [--state-dir DIR]
                      [--runtime NAME] [--runtime-arg ARG]... [--store URL]

Runs a session of the core's agent with the core's model provider. Each tool call the model makes
goes through the supervisor's pipeline (capability, checks, approval, the adapter in a supervised
process tree, redacted views) and is recorded in the session's hash-linked audit log
(check it with: supervisor audit verify --session ID).

Options:
  --prompt TEXT     the user's first message (default: the script's first user: item, or
                    "Run your task.")
  --approve RULE    approve matching prompts without asking: TOOL, TOOL:GLOB or capability:PATTERN
  --deny RULE       deny matching calls, whatever else says yes
                    (a rule that names no tool or capability of the catalog is refused,
                    exit 2, with the closest valid spelling)
  --resume ID       continue your ended session ID of this core (its conversation so far);
                    with --store, also a session another machine ran (or that died with its
                    machine), taken over from its copy on the control plane once that verifies
  --await-approval S  without a terminal, let a prompt wait up to S for an answer from another
                    terminal (supervisor approvals approve ID); default: deny at once
  --store URL       join the PostgreSQL control plane at URL (postgres://user@host:5432/db, or
                    $SUPERVISOR_STORE_URL) as a member: prompts wait there (--await-approval S,
                    default 600 s) for an operator on any machine (supervisor approvals --store URL);
                    a run that loses its lease is cancelled. The session's record stays in
                    --state-dir; its chain, messages and task logs are copied there as they grow
  --timeout S       each effect's deadline (default 120 s)
  --runtime NAME    the runtime target: local (the supervisor's own turn engine, the default) or
                    claude-code (Claude Code's CLI, \`claude -p\`, does the reasoning); overrides
                    agent.yaml runtime:. The authority is the same on every runtime (supervisor plan)
  --runtime-arg ARG one more argument for an external CLI; only --model, --fallback-model,
                    --effort, --system-prompt and --append-system-prompt (each with its value) pass;
                    anything that could widen the CLI's authority is refused before it starts
  --json            one JSON event per line instead of the readable log
  --state-dir DIR   store and artifacts (default $SUPERVISOR_STATE_DIR or ~/.local/state/isolation-supervisor)

Providers (agent.yaml model.provider): "scripted" replays the core's script file; its user: items
are the session's later user turns, each run in the same session with the conversation so far.
"openai-compatible" (OpenAI or a local server's /v1) and "anthropic" stream the model's text as it
arrives (text_delta events with --json); one --prompt turn per run. The API key comes from the
core's secrets (model.api_key: { secret: NAME }) and is removed from everything printed.
claude-code: the CLI gets no built-in tool (no shell, no file access of its own); its only tools
are this catalog's, served by a per-run MCP server on 127.0.0.1 with a fresh token, each call
through the same pipeline. The CLI is found as $SUPERVISOR_CLAUDE_BIN or claude on PATH. Budgets:
limits.max_iterations (tool calls, and the CLI's --max-turns), limits.timeout_seconds (the whole
run) and limits.max_cost_usd, clamped by the supervisor's ceilings; a breach kills the CLI's
process tree and ends the run with limit_hit. The CLI's stream-json is folded into the session's
audit chain (docs/runtimes.md).
Exit status: 0 the session completed (refused tool calls are reported to the model and in the
log, not as a failure of the session); 1 it hit a limit (limit_hit); 2 usage or core errors, a
model section the provider cannot use (options, key secret), a runtime that cannot start (no
binary, a refused --runtime-arg); 3 the model provider, the external CLI or the control plane
(--store) failed (key refused, still unavailable after retries, broken or truncated stream, a
control plane gone or this run's lease lost: the message names which, the host and the fix);
130 cancelled.
`;

export async function runRun(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['prompt', 'timeout', 'state-dir', 'await-approval', 'resume', 'runtime', 'store'], multi: ['approve', 'deny', 'runtime-arg'] }, 'run');
  if (f.help) {
    cliIo().stdout.write(RUN_HELP);
    return 0;
  }
  const [coreDir, ...extra] = f.positionals;
  if (!coreDir || extra.length > 0) throw new UsageError('run needs one core directory: supervisor run <core>');
  const timeout = f.value.get('timeout');
  const deadlineMs = timeout === undefined ? undefined : parseDuration('--timeout', timeout);
  const json = f.bool.has('json');
  // The command line wins over agent.yaml runtime:; an unknown name is refused before a session opens.
  const runtimeFlag = f.value.get('runtime');
  if (runtimeFlag !== undefined && !registeredRuntimes().some((r) => r.name === runtimeFlag)) {
    throw new UsageError(`--runtime ${runtimeFlag}: no such runtime; registered: ${registeredRuntimes().map((r) => r.name).join(', ')}`);
  }
  const stateDir = resolve(f.value.get('state-dir') ?? defaultStateDir());
  // Before the printer exists (discovery runs inside openCoreSession); progress text is redacted by the runtime.
  const early = (e: Record<string, unknown>): void => void cliIo().stdout.write(displayJson(e) + '\n');
  const awaitApproval = f.value.get('await-approval');
  const onPendingApproval = (id: string, r: { toolName: string }, where: string): void =>
    json
      ? early({ type: 'approval_pending', id, tool: r.toolName })
      : void cliIo().stderr.write(`waiting for approval of ${displayText(r.toolName)} (${id}): answer with  supervisor approvals approve ${id}${where}  or  deny ${id}${where}\n`);
  // Ctrl-C, and with a control plane a cancel from any member or the control plane lost: the run stops.
  const controller = new AbortController();
  const stopped: { by: ControlPlaneStop | null } = { by: null };
  const stopFromControlPlane = (stop: ControlPlaneStop): void => {
    if (stopped.by !== null) return;
    stopped.by = stop;
    cliIo().stderr.write(`supervisor run: ${stop.kind === 'cancelled' ? `cancelled from the control plane by ${displayText(stop.why)}` : `this run lost the control plane (${displayText(stop.why)}); stopping it`}\n`);
    controller.abort();
  };
  // With a control plane, the run is a member and any member's operator answers its prompts.
  const storeUrl = storeUrlOf(f.value.get('store'));
  const membership = storeUrl
    ? await joinForRun(storeUrl, {
        waitMs: awaitApproval !== undefined ? parseDuration('--await-approval', awaitApproval) : DEFAULT_STORE_APPROVAL_WAIT_MS,
        coreDir: resolve(coreDir),
        stateDir,
        onPending: (id, r) => onPendingApproval(id, r, ' --store …'),
        onStop: stopFromControlPlane,
      })
    : null;
  const sessionOptions: CoreSessionOptions = {
    coreDir,
    stateDir,
    ...(runtimeFlag !== undefined ? { runtime: runtimeFlag } : {}),
    approve: f.multi.get('approve') ?? [],
    deny: f.multi.get('deny') ?? [],
    interactive: !json,
    ...(f.value.get('resume') !== undefined ? { resume: f.value.get('resume')! } : {}),
    ...(membership
      ? {
          approver: membership.approver,
          otherMachines: membership.otherMachines,
          resumeElsewhere: membership.resumeElsewhere,
          // A delegated child is listed there too; one that cannot be shown is said, and the run goes on.
          onChildSession: (c: { sessionId: string; taskId: string }) =>
            void membership.attachChild(c.sessionId, s.principal, s.core.agent.name, c.taskId).catch((err: Error) => cliIo().stderr.write(`supervisor run: note: child session ${c.sessionId} is not shown on the control plane: ${displayText(err.message)}\n`)),
        }
      : {}),
    ...(awaitApproval !== undefined ? { awaitApprovalMs: parseDuration('--await-approval', awaitApproval) } : {}),
    onPendingApproval: (id, r) => onPendingApproval(id, r, ''),
    // Progress is for the operator only; the model sees the final result.
    onProgress: (p) =>
      json ? early({ type: 'progress', ...p }) : void cliIo().stdout.write(displayText(`  … ${p.tool} ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`) + '\n'),
    onNotice: (text) => (json ? early({ type: 'notice', message: text }) : void cliIo().stderr.write(`notice: ${displayText(text)}\n`)),
  };
  let s: CoreSession;
  try {
    s = await openCoreSession(sessionOptions, 'run');
  } catch (err) {
    await membership?.leave('the session did not open');
    throw err;
  }
  try {
    // Listed on the control plane from the start, and cancellable from any member.
    await membership?.attach(s.id, s.principal, s.core.agent.name);
  } catch (err) {
    await s.close('failed');
    await membership?.leave('failed');
    throw err;
  }
  const target = runtimeFor(runtimeFlag ?? s.core.agent.runtime);
  // The session's one secret store: the provider key's value (once read) is removed from everything
  // this command prints and, through the runtime that shares the store, from every effect's views.
  const secrets = s.secrets;
  let prepared: PreparedRun;
  try {
    prepared = await s.prepareRun({ runtime: target, passThrough: f.multi.get('runtime-arg') ?? [] });
  } catch (err) {
    await s.close('failed');
    await membership?.leave('failed');
    if (err instanceof RuntimeSetupError) {
      cliIo().stderr.write(`supervisor run: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  // Every secret the session resolves (the provider key, each binding's value once resolved) is
  // removed from what this command prints, as from the store; the set is re-read as it grows.
  const out = viewPrinter(secrets);
  const shutdown = installShutdown(s.supervisor, () => controller.abort());
  const line = (e: Record<string, unknown>): void => out.json(e);
  // Streamed text is shown as it arrives; the model turn's event then only ends the line.
  let streaming = 0;
  const readable = (e: RuntimeEvent): string => {
    if (e.type === 'assistant') streaming = 0;
    if (e.type !== 'text_delta') return describe(e);
    const head = streaming === e.iteration ? '' : '\nassistant: ';
    streaming = e.iteration;
    return head + e.text;
  };
  const onEvent = (e: RuntimeEvent): void => void (json ? line(jsonEvent(e)) : out.text(readable(e)));
  if (json) line({ type: 'session', session: s.id, core: s.core.dir, revision: s.core.revision, catalog: s.catalog.id, runtime: target.name });
  else out.text(`session ${s.id} · core ${s.core.agent.name} (${s.core.revision.slice(0, 12)}) · ${s.catalog.entries.length} tools · runtime ${target.name}\n`);
  // What MCP discovery did before the model runs: each declared server, connected or why not.
  for (const m of s.mcp?.servers ?? []) {
    if (json) line({ type: 'mcp_server', server: m.server, state: m.state, code: m.code, tools: m.tools, approval: m.approval, connection: m.connection, ...(m.message ? { message: m.message } : {}) });
    else out.text(`mcp ${m.server}: ${m.state === 'connected' ? `connected (${m.connection} connection), ${m.tools} tool(s)${m.approval ? ` (connect ${m.approval})` : ''}` : `${m.state} (${m.code}): ${m.message}`}\n`);
  }
  for (const d of s.droppedTools) {
    if (json) line({ type: 'mcp_tool_dropped', server: d.server, tool: d.tool, reason: d.reason });
    else out.text(`mcp ${d.server}: tool ${JSON.stringify(d.tool)} dropped: ${d.reason}\n`);
  }
  let status: 'completed' | 'failed' | 'cancelled' = 'failed';
  try {
    const result: RuntimeRunResult = await prepared.run({
      prompt: f.value.get('prompt') ?? null,
      signal: controller.signal,
      ...(deadlineMs !== undefined ? { deadlineMs } : {}),
      onEvent,
    });
    const outcome = result.outcome;
    const lost = stopped.by?.kind === 'lost';
    status = lost ? 'failed' : outcome === 'completed' ? 'completed' : outcome === 'cancelled' ? 'cancelled' : 'failed';
    const effects = result.effects;
    if (json) {
      line({
        type: 'end',
        outcome,
        turns: result.turns,
        iterations: result.iterations,
        effects,
        session: s.id,
        runtime: target.name,
        ...(result.reason !== undefined ? { reason: result.reason } : {}),
        ...(result.costUsd !== undefined ? { cost_usd: result.costUsd } : {}),
      });
    } else {
      out.text(
        `\n${outcome}${result.reason && outcome !== 'completed' ? ` (${result.reason})` : ''} after ${result.turns} user turn(s), ${result.iterations} model turn(s): ${effects.ok} tool call(s) ran, ${effects.failed} refused or failed · audit: supervisor audit verify --session ${s.id}\n`,
      );
    }
    if (lost) return 3;
    if (outcome === 'cancelled') return 130;
    if (outcome === 'failed') {
      cliIo().stderr.write(`supervisor run: runtime ${target.name} failed: ${result.reason ?? 'unknown'}\n`);
      return 3;
    }
    return outcome === 'completed' ? 0 : 1;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (json) line({ type: 'error', error: err.toJSON() });
    out.end();
    cliIo().stderr.write(`supervisor run: ${err.message}\n`);
    return 3;
  } finally {
    out.end();
    // Signal hooks stay until the session is closed, so a SIGTERM while it closes cannot end the
    // process before the trees' ends are recorded (see serve).
    try {
      await prepared.close();
      await s.close(status);
      await membership?.leave(status);
    } finally {
      shutdown.dispose();
    }
  }
}

/** The JSON line for an event: results carry the operator view, never raw output. */
function jsonEvent(e: RuntimeEvent): Record<string, unknown> {
  if (e.type !== 'tool_result') return e as unknown as Record<string, unknown>;
  const o: EffectOutcome = e.outcome;
  return { type: 'tool_result', iteration: e.iteration, callId: o.callId, tool: o.tool, ok: o.ok, ...(o.ok ? { isError: o.isError } : { code: o.code, step: o.step }), view: o.views.operator };
}

function describe(e: RuntimeEvent): string {
  switch (e.type) {
    case 'user':
      return `\nuser: ${e.text}\n`;
    case 'runtime_started':
      return `runtime ${e.runtime}: started ${e.binary} (pid ${e.pid}) · budgets ${JSON.stringify(e.budgets)}\n`;
    case 'runtime_init':
      return `runtime ${e.runtime}${e.version ? ` ${e.version}` : ''}: offers ${e.tools.length} tool(s)${e.model ? ` · model ${e.model}` : ''}\n`;
    case 'builtin_attempt':
      return `  ✗ the CLI tried its built-in ${e.name}: not available (only the catalog's tools are)\n`;
    case 'runtime_result':
      return `runtime result: ${e.subtype}${e.costUsd !== null ? ` · cost ${e.costUsd} USD` : ''}${e.turns !== null ? ` · ${e.turns} turn(s)` : ''}\n`;
    case 'runtime_limit':
      return `\nlimit_hit (${e.limit}): ${e.detail}; the CLI's process tree is being killed\n`;
    case 'runtime_warning':
      return `runtime: ${e.message}\n`;
    case 'text_delta':
      return e.text;
    case 'assistant':
      if (e.streamed) return '\n';
      return e.text ? `\nassistant: ${e.text}\n` : '';
    case 'tool_call':
      return `→ ${e.name} ${JSON.stringify(e.arguments)}\n`;
    case 'unknown_tool':
      return `  ✗ no tool named ${e.name} in this catalog\n`;
    case 'tool_result': {
      const o = e.outcome;
      const approval = (o.views.durable.approval as { approved: boolean; source: string } | null) ?? null;
      const how = approval ? `${approval.approved ? 'approved' : 'denied'} by ${approval.source}` : 'not asked';
      if (!o.ok) return `  ✗ refused at step ${o.step} (${o.code}; ${how}): ${o.message}\n`;
      const body = o.views.model.content.replace(/\n$/, '').split('\n').map((l) => `    ${l}`).join('\n');
      return `  ${o.isError ? '!' : '✓'} ${how}\n${body}\n`;
    }
    case 'final':
      return '';
    case 'limit_hit':
      if (e.which === 'cost') return '\nlimit_hit: the session spent its limits.max_cost_usd on model requests\n';
      if (e.which === 'tool_calls') return `\nlimit_hit: the agent used all ${e.limit} tool calls\n`;
      return `\nlimit_hit: the model used all ${e.limit} iterations\n`;
  }
}
