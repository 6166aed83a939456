// `supervisor run <core>`: one session of the core's agent through the turn loop, every tool call
// through EffectRuntime, offline and deterministic with the scripted provider.
import { resolve } from 'node:path';
import type { EffectOutcome } from '../effects/index.js';
import { runTurn, ScriptedProvider, type HistoryItem, type ModelProvider, type TurnEvent } from '../turns/index.js';
import { openCoreSession } from './core-session.js';
import { parseFlags } from './flags.js';
import { installShutdown } from './shutdown.js';
import { defaultStateDir } from './state-dir.js';
import { parseDuration, UsageError } from './usage.js';

export const RUN_HELP = `Usage: supervisor run <core> [--prompt TEXT] [--json] [--approve RULE]... [--deny RULE]...
                      [--timeout S] [--state-dir DIR]

Runs a session of the core's agent with the core's model provider. Each tool call the model makes
goes through the supervisor's pipeline (capability, checks, approval, the adapter in a supervised
process tree, redacted views) and is recorded in the session's hash-linked audit log
(check it with: supervisor audit verify --session ID).

Options:
  --prompt TEXT     the user's first message (default: the script's first user: item, or
                    "Run your task.")
  --approve RULE    approve matching prompts without asking: TOOL, TOOL:GLOB or capability:PATTERN
  --deny RULE       deny matching calls, whatever else says yes
  --timeout S       each effect's deadline (default 120 s)
  --json            one JSON event per line instead of the readable log
  --state-dir DIR   store and artifacts (default $SUPERVISOR_STATE_DIR or ~/.local/state/isolation-supervisor)

Providers: "scripted" replays the core's script file; its user: items are the session's later
user turns, each run in the same session with the conversation so far. The OpenAI-compatible and Anthropic
providers are not implemented yet and say so.
Exit status: 0 the session completed (refused tool calls are reported to the model and in the
log, not as a failure of the session); 1 it hit its iteration limit (limit_hit); 2 usage or core
errors; 3 the core's provider is not implemented; 130 cancelled.
`;

export async function runRun(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['prompt', 'timeout', 'state-dir'], multi: ['approve', 'deny'] }, 'run');
  if (f.help) {
    process.stdout.write(RUN_HELP);
    return 0;
  }
  const [coreDir, ...extra] = f.positionals;
  if (!coreDir || extra.length > 0) throw new UsageError('run needs one core directory: supervisor run <core>');
  const timeout = f.value.get('timeout');
  const deadlineMs = timeout === undefined ? undefined : parseDuration('--timeout', timeout);
  const json = f.bool.has('json');
  const line = (e: Record<string, unknown>): void => void process.stdout.write(JSON.stringify(e) + '\n');
  const s = await openCoreSession(
    {
      coreDir,
      stateDir: resolve(f.value.get('state-dir') ?? defaultStateDir()),
      approve: f.multi.get('approve') ?? [],
      deny: f.multi.get('deny') ?? [],
      interactive: !json,
      // Progress is for the operator only; the model sees the final result.
      onProgress: (p) =>
        json ? line({ type: 'progress', ...p }) : void process.stdout.write(`  … ${p.tool} ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}\n`),
    },
    'run',
  );
  const model = s.core.agent.model;
  let provider: ModelProvider;
  if (model?.provider === 'scripted' && s.core.modelScript) {
    provider = new ScriptedProvider(s.core.modelScript as never);
  } else {
    await s.close('failed');
    process.stderr.write(
      `supervisor run: the core's model provider "${model?.provider ?? '(none)'}" is not implemented yet; use provider: scripted with a script file (see docs/core-format.md)\n`,
    );
    return 3;
  }
  const controller = new AbortController();
  const shutdown = installShutdown(s.supervisor, () => controller.abort());
  const onEvent = (e: TurnEvent): void => void (json ? line(jsonEvent(e)) : process.stdout.write(describe(e)));
  if (json) line({ type: 'session', session: s.sessionId, core: s.core.dir, revision: s.core.revision, catalog: s.catalog.id });
  else process.stdout.write(`session ${s.sessionId} · core ${s.core.agent.name} (${s.core.revision.slice(0, 12)}) · ${s.catalog.entries.length} tools\n`);
  // What MCP discovery did before the model runs: each declared server, connected or why not.
  for (const m of s.mcp?.servers ?? []) {
    if (json) line({ type: 'mcp_server', server: m.server, state: m.state, code: m.code, tools: m.tools, approval: m.approval, ...(m.message ? { message: m.message } : {}) });
    else process.stdout.write(`mcp ${m.server}: ${m.state === 'connected' ? `connected, ${m.tools} tool(s)${m.approval ? ` (connect ${m.approval})` : ''}` : `${m.state} (${m.code}): ${m.message}`}\n`);
  }
  let status: 'completed' | 'failed' | 'cancelled' = 'failed';
  // The scripted provider also plays the user: its `user:` items are the session's later turns.
  const scriptedUser = provider instanceof ScriptedProvider ? provider : null;
  const firstScripted = scriptedUser?.nextUserMessage() ?? null;
  let prompt: string | null = f.value.get('prompt') ?? firstScripted ?? 'Run your task.';
  const history: HistoryItem[] = [];
  const total = { turns: 0, iterations: 0, ok: 0, failed: 0 };
  let outcome: 'completed' | 'limit_hit' | 'cancelled' = 'completed';
  try {
    while (prompt !== null) {
      total.turns++;
      if (json) line({ type: 'user', turn: total.turns, text: prompt });
      else process.stdout.write(`\nuser: ${prompt}\n`);
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
          onHistory: (item) => s.sessions.addMessage({ principal: s.principal }, s.sessionId, { turnId, role: item.role, content: item }),
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
      process.stdout.write(
        `\n${outcome} after ${total.turns} user turn(s), ${total.iterations} model turn(s): ${total.ok} tool call(s) ran, ${total.failed} refused or failed · audit: supervisor audit verify --session ${s.sessionId}\n`,
      );
    }
    if (outcome === 'cancelled') return 130;
    return outcome === 'completed' ? 0 : 1;
  } finally {
    shutdown.dispose();
    await s.close(status);
  }
}

/** The JSON line for an event: results carry the operator view, never raw output. */
function jsonEvent(e: TurnEvent): Record<string, unknown> {
  if (e.type !== 'tool_result') return e as unknown as Record<string, unknown>;
  const o: EffectOutcome = e.outcome;
  return { type: 'tool_result', iteration: e.iteration, callId: o.callId, tool: o.tool, ok: o.ok, ...(o.ok ? { isError: o.isError } : { code: o.code, step: o.step }), view: o.views.operator };
}

function describe(e: TurnEvent): string {
  switch (e.type) {
    case 'assistant':
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
