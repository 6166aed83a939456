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

  async next(_history: readonly HistoryItem[], _tools: readonly ToolDefinition[]): Promise<ModelTurn> {
    const turn = this.script.turns[this.at];
    if (!turn) throw new ScriptExhaustedError(this.at);
    if (turn.user !== undefined) throw new ScriptOutOfStepError(this.at);
    const n = this.at++;
    return {
      text: turn.text ?? null,
      toolCalls: (turn.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${n + 1}_${i + 1}`, name: c.name, arguments: c.arguments })),
      ...(turn.usage ? { usage: { inputTokens: turn.usage.input_tokens, outputTokens: turn.usage.output_tokens } } : {}),
    };
  }
}
