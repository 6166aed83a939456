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

export class ScriptedProvider implements ModelProvider {
  readonly name = 'scripted';
  private at = 0;

  constructor(private readonly script: ScriptedModelScript) {}

  async next(_history: readonly HistoryItem[], _tools: readonly ToolDefinition[]): Promise<ModelTurn> {
    const turn = this.script.turns[this.at];
    if (!turn) throw new ScriptExhaustedError(this.at);
    const n = this.at++;
    return {
      text: turn.text ?? null,
      toolCalls: (turn.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${n + 1}_${i + 1}`, name: c.name, arguments: c.arguments })),
    };
  }
}
