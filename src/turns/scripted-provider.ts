// Replays a core's script of model turns in order: the whole loop runs offline and the same way
// every time. A test double for real providers, never for the pipeline under it.
import type { ScriptedModelScript } from '../core/index.js';
import type { HistoryItem, ModelProvider, ModelTurn, ToolDefinition } from './model-provider.js';

export class ScriptExhaustedError extends Error {
  readonly code = 'SCRIPT_EXHAUSTED';
  constructor(turns: number) {
    super(`the scripted model has no turn left after ${turns}; end the script with a text-only turn`);
    this.name = 'ScriptExhaustedError';
  }
}

export class ScriptOutOfStepError extends Error {
  readonly code = 'SCRIPT_OUT_OF_STEP';
  constructor(index: number) {
    super(`the scripted model was asked for a turn, but turns[${index}] is a user message; the user turn before it did not end with a text-only model turn`);
    this.name = 'ScriptOutOfStepError';
  }
}

export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';
  private at = 0;

  constructor(private readonly script: ScriptedModelScript) {}

  /**
   * The script also plays the user: if the next item is a `user` message, consumes and returns it
   * (the next user turn of the session); otherwise null, and the conversation is over.
   */
  nextUserMessage(): string | null {
    const item = this.script.turns[this.at];
    if (item?.user === undefined) return null;
    this.at++;
    return item.user;
  }

  async next(history: readonly HistoryItem[], _tools: readonly ToolDefinition[]): Promise<ModelTurn> {
    const turn = this.script.turns[this.at];
    if (!turn) throw new ScriptExhaustedError(this.at);
    if (turn.user !== undefined) throw new ScriptOutOfStepError(this.at);
    const n = this.at++;
    return {
      text: turn.text ?? null,
      toolCalls: (turn.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${n + 1}_${i + 1}`, name: c.name, arguments: withResults(c.arguments, history) })),
      ...(turn.usage ? { usage: { inputTokens: turn.usage.input_tokens, outputTokens: turn.usage.output_tokens } } : {}),
    };
  }
}

/**
 * A real model reads its tool results; a script says which: an argument written
 * `{ from_result: CALL_ID, field: NAME }` is that field of the JSON result of the script's call
 * CALL_ID (e.g. the run id evolve_core start returned). Anything else is passed as written.
 */
function withResults(args: Readonly<Record<string, unknown>>, history: readonly HistoryItem[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) out[k] = resultReference(v, history);
  return out;
}

function resultReference(v: unknown, history: readonly HistoryItem[]): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const ref = v as { from_result?: unknown; field?: unknown };
  if (typeof ref.from_result !== 'string' || typeof ref.field !== 'string' || Object.keys(ref).length !== 2) return v;
  const item = history.find((h) => h.role === 'tool' && h.callId === ref.from_result);
  if (!item || item.role !== 'tool') throw new ScriptReferenceError(`no result of call ${ref.from_result} yet`);
  let value: unknown;
  try {
    value = (JSON.parse(item.content) as Record<string, unknown>)[ref.field];
  } catch {
    throw new ScriptReferenceError(`the result of call ${ref.from_result} is not JSON`);
  }
  if (value === undefined) throw new ScriptReferenceError(`the result of call ${ref.from_result} has no field ${ref.field}`);
  return value;
}

export class ScriptReferenceError extends Error {
  readonly code = 'SCRIPT_REFERENCE';
  constructor(why: string) {
    super(`the scripted model's from_result argument cannot be resolved: ${why}; give the call an id and reference it after its result`);
    this.name = 'ScriptReferenceError';
  }
}
