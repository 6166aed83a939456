// `supervisor run <core>`: one session of the core's agent through the turn loop, every tool call
// through EffectRuntime; offline and deterministic with the scripted provider, or against a real
// model (OpenAI-compatible or Anthropic).
import { resolve } from 'node:path';
import { redactDeep, type EffectOutcome } from '../effects/index.js';
import { redactText, RedactionPatterns, StreamRedactor } from '../redaction/index.js';
import { createRemoteProvider, ProviderError, runTurn, ScriptedProvider, type HistoryItem, type ModelProvider, type TurnEvent } from '../turns/index.js';
import { openCoreSession } from './core-session.js';
import { parseFlags } from './flags.js';
import { installShutdown } from './shutdown.js';
import { defaultStateDir } from './state-dir.js';
import { parseDuration, UsageError } from './usage.js';

export const RUN_HELP = `Usage: supervisor run <core> [--prompt TEXT] [--json] [--approve RULE]... [--deny RULE]...
                      [--timeout S] [--resume ID] [--await-approval S] [--state-dir DIR]

Runs a session of the core's agent with the core's model provider. Each tool call the model makes
goes through the supervisor's pipeline (capability, checks, approval, the adapter in a supervised
process tree, redacted views) and is recorded in the session's hash-linked audit log
(check it with: supervisor audit verify --session ID).

Options:
  --prompt TEXT     the user's first message (default: the script's first user: item, or
                    "Run your task.")
  --approve RULE    approve matching prompts without asking: TOOL, TOOL:GLOB or capability:PATTERN
  --deny RULE       deny matching calls, whatever else says yes
  --resume ID       continue your ended session ID of this core (its conversation so far)
  --await-approval S  without a terminal, let a prompt wait up to S for an answer from another
                    terminal (supervisor approvals approve ID); default: deny at once
  --timeout S       each effect's deadline (default 120 s)
  --json            one JSON event per line instead of the readable log
  --state-dir DIR   store and artifacts (default $SUPERVISOR_STATE_DIR or ~/.local/state/isolation-supervisor)

Providers (agent.yaml model.provider): "scripted" replays the core's script file; its user: items
are the session's later user turns, each run in the same session with the conversation so far.
"openai-compatible" (OpenAI or a local server's /v1) and "anthropic" stream the model's text as it
arrives (text_delta events with --json); one --prompt turn per run. The API key comes from the
core's secrets (model.api_key: { secret: NAME }) and is removed from everything printed.
Exit status: 0 the session completed (refused tool calls are reported to the model and in the
log, not as a failure of the session); 1 it hit its iteration limit (limit_hit); 2 usage or core
errors, a model section the provider cannot use (options, key secret); 3 the model provider
failed (key refused, still unavailable after retries, broken or truncated stream: the message
names the provider, the host and the fix); 130 cancelled.
`;

export async function runRun(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['prompt', 'timeout', 'state-dir', 'await-approval', 'resume'], multi: ['approve', 'deny'] }, 'run');
  if (f.help) {
    process.stdout.write(RUN_HELP);
    return 0;
  }
  const [coreDir, ...extra] = f.positionals;
  if (!coreDir || extra.length > 0) throw new UsageError('run needs one core directory: supervisor run <core>');
  const timeout = f.value.get('timeout');
  const deadlineMs = timeout === undefined ? undefined : parseDuration('--timeout', timeout);
  const json = f.bool.has('json');
  // Before the printer exists (discovery runs inside openCoreSession); progress text is redacted by the runtime.
  const early = (e: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(e) + '\n');
  const s = await openCoreSession(
    {
      coreDir,
      stateDir: resolve(f.value.get('state-dir') ?? defaultStateDir()),
      approve: f.multi.get('approve') ?? [],
      deny: f.multi.get('deny') ?? [],
      interactive: !json,
      ...(f.value.get('resume') !== undefined ? { resume: f.value.get('resume')! } : {}),
      ...(f.value.get('await-approval') !== undefined ? { awaitApprovalMs: parseDuration('--await-approval', f.value.get('await-approval')!) } : {}),
      onPendingApproval: (id, r) =>
        json
          ? early({ type: 'approval_pending', id, tool: r.toolName })
          : void process.stderr.write(`waiting for approval of ${r.toolName} (${id}): answer with  supervisor approvals approve ${id}  or  deny ${id}\n`),
      // Progress is for the operator only; the model sees the final result.
      onProgress: (p) =>
        json ? early({ type: 'progress', ...p }) : void process.stdout.write(`  … ${p.tool} ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}\n`),
    },
    'run',
  );
  const model = s.core.agent.model;
  let provider: ModelProvider;
  // The session's one secret store: the provider key's value (once read) is removed from everything
  // this command prints and, through the runtime that shares the store, from every effect's views.
  const secrets = s.secrets;
  try {
    if (model?.provider === 'scripted' && s.core.modelScript) provider = new ScriptedProvider(s.core.modelScript as never);
    else if (model?.provider === 'openai-compatible' || model?.provider === 'anthropic') provider = await createRemoteProvider(model, { secrets });
    else throw new UsageError(`the core ${s.core.dir} has no model: section; add one to agent.yaml (see docs/core-format.md, Model)`);
  } catch (err) {
    await s.close('failed');
    if (err instanceof ProviderError) {
      process.stderr.write(`supervisor run: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const out = printer(RedactionPatterns.compile(secrets.knownValues()));
  const controller = new AbortController();
  const shutdown = installShutdown(s.supervisor, () => controller.abort());
  const line = (e: Record<string, unknown>): void => out.line(JSON.stringify(e));
  // Streamed text is shown as it arrives; the model turn's event then only ends the line.
  let streaming = 0;
  const readable = (e: TurnEvent): string => {
    if (e.type === 'assistant') streaming = 0;
    if (e.type !== 'text_delta') return describe(e);
    const head = streaming === e.iteration ? '' : '\nassistant: ';
    streaming = e.iteration;
    return head + e.text;
  };
  const onEvent = (e: TurnEvent): void => void (json ? line(jsonEvent(e)) : out.text(readable(e)));
  if (json) line({ type: 'session', session: s.sessionId, core: s.core.dir, revision: s.core.revision, catalog: s.catalog.id });
  else out.text(`session ${s.sessionId} · core ${s.core.agent.name} (${s.core.revision.slice(0, 12)}) · ${s.catalog.entries.length} tools\n`);
  // What MCP discovery did before the model runs: each declared server, connected or why not.
  for (const m of s.mcp?.servers ?? []) {
    if (json) line({ type: 'mcp_server', server: m.server, state: m.state, code: m.code, tools: m.tools, approval: m.approval, ...(m.message ? { message: m.message } : {}) });
    else out.text(`mcp ${m.server}: ${m.state === 'connected' ? `connected, ${m.tools} tool(s)${m.approval ? ` (connect ${m.approval})` : ''}` : `${m.state} (${m.code}): ${m.message}`}\n`);
  }
  let status: 'completed' | 'failed' | 'cancelled' = 'failed';
  // The scripted provider also plays the user: its `user:` items are the session's later turns.
  const scriptedUser = provider instanceof ScriptedProvider ? provider : null;
  const firstScripted = scriptedUser?.nextUserMessage() ?? null;
  let prompt: string | null = f.value.get('prompt') ?? firstScripted ?? 'Run your task.';
  const history: HistoryItem[] = s.history as HistoryItem[];
  const total = { turns: 0, iterations: 0, ok: 0, failed: 0 };
  let outcome: 'completed' | 'limit_hit' | 'cancelled' = 'completed';
  try {
    while (prompt !== null) {
      total.turns++;
      if (json) line({ type: 'user', turn: total.turns, text: prompt });
      else out.text(`\nuser: ${prompt}\n`);
      const turnId = s.sessions.addTurn({ principal: s.principal }, s.sessionId).id;
      let result;
      try {
        result = await runTurn(prompt, {
          runtime: s.runtime,
          provider,
          principal: s.principal,
          sessionId: s.sessionId,
          maxIterations: s.core.agent.limits.max_iterations ?? 8,
          signal: controller.signal,
          history,
          ...(deadlineMs !== undefined ? { deadlineMs } : {}),
          onEvent,
          // History is stored with every known secret removed, the model's own words included.
          onHistory: (item) =>
            s.sessions.addMessage({ principal: s.principal }, s.sessionId, {
              turnId,
              role: item.role,
              content: redactDeep(item, s.runtime.redactor()),
            }),
        });
      } catch (err) {
        s.sessions.endTurn({ principal: s.principal }, turnId, 'failed');
        throw err;
      }
      const turnStatus = result.outcome === 'completed' ? 'completed' : result.outcome === 'cancelled' ? 'cancelled' : 'failed';
      s.sessions.endTurn({ principal: s.principal }, turnId, turnStatus);
      total.iterations += result.iterations;
      total.ok += result.effects.ok;
      total.failed += result.effects.failed;
      outcome = result.outcome;
      if (outcome !== 'completed') break;
      prompt = scriptedUser?.nextUserMessage() ?? null;
    }
    status = outcome === 'completed' ? 'completed' : outcome === 'cancelled' ? 'cancelled' : 'failed';
    const effects = { ok: total.ok, failed: total.failed };
    if (json) line({ type: 'end', outcome, turns: total.turns, iterations: total.iterations, effects, session: s.sessionId });
    else {
      out.text(
        `\n${outcome} after ${total.turns} user turn(s), ${total.iterations} model turn(s): ${total.ok} tool call(s) ran, ${total.failed} refused or failed · audit: supervisor audit verify --session ${s.sessionId}\n`,
      );
    }
    if (outcome === 'cancelled') return 130;
    return outcome === 'completed' ? 0 : 1;
  } catch (err) {
    if (!(err instanceof ProviderError)) throw err;
    if (json) line({ type: 'error', error: err.toJSON() });
    out.end();
    process.stderr.write(`supervisor run: ${err.message}\n`);
    return 3;
  } finally {
    out.end();
    shutdown.dispose();
    await provider.close?.();
    await s.close(status);
  }
}

/** stdout with the provider key removed: readable text through one stream redactor (a key split
 *  across two writes is still caught), JSON lines one by one. */
function printer(patterns: RedactionPatterns): { text(s: string): void; line(s: string): void; end(): void } {
  const stream = new StreamRedactor(patterns);
  let ended = false;
  return {
    text: (s) => void process.stdout.write(stream.push(Buffer.from(s, 'utf8'))),
    line: (s) => void process.stdout.write(`${redactText(s, patterns)}\n`),
    end() {
      if (ended) return;
      ended = true;
      const tail = stream.flush();
      if (tail.length > 0) process.stdout.write(tail);
    },
  };
}

/** The JSON line for an event: results carry the operator view, never raw output. */
function jsonEvent(e: TurnEvent): Record<string, unknown> {
  if (e.type !== 'tool_result') return e as unknown as Record<string, unknown>;
  const o: EffectOutcome = e.outcome;
  return { type: 'tool_result', iteration: e.iteration, callId: o.callId, tool: o.tool, ok: o.ok, ...(o.ok ? { isError: o.isError } : { code: o.code, step: o.step }), view: o.views.operator };
}

function describe(e: TurnEvent): string {
  switch (e.type) {
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
      return `\nlimit_hit: the model used all ${e.limit} iterations\n`;
  }
}
