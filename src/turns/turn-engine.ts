// The turn loop: ask the model, turn each of its tool calls into a request of this turn's
// catalog, execute it through EffectRuntime, give the model the model view, until it answers
// with text alone or the iteration limit is reached.
import type { EffectOutcome, EffectRuntime } from '../effects/index.js';
import type { HistoryItem, ModelProvider, ModelToolCall } from './model-provider.js';
import type { CostMeter } from './cost-meter.js';

export type TurnEvent =
  | { type: 'text_delta'; iteration: number; text: string }
  | { type: 'assistant'; iteration: number; text: string | null; toolCalls: number; streamed: boolean; costUsd?: number }
  | { type: 'tool_call'; iteration: number; callId: string; name: string; arguments: unknown }
  | { type: 'tool_result'; iteration: number; outcome: EffectOutcome }
  | { type: 'unknown_tool'; iteration: number; callId: string; name: string }
  | { type: 'final'; iteration: number; text: string }
  /** `limit`: the count reached (iterations, or tool calls); `which`: the limit that stopped the turn. */
  | { type: 'limit_hit'; iteration: number; limit: number; which: 'iterations' | 'tool_calls' | 'cost' };

export interface TurnEngineOptions {
  runtime: EffectRuntime;
  provider: ModelProvider;
  principal: string;
  sessionId: string;
  maxIterations: number;
  /**
   * A delegated child's budget, asked before each model request and each tool call (its own use
   * and what its children reserved both count); at zero the turn stops with limit_hit.
   */
  budget?: { iterationsLeft(): number; toolCallsLeft(): number };
  /**
   * The session's cost pool (limits.max_cost_usd, or a child's reserved share) and the model's
   * prices: each request's usage is drawn from it, and at zero the turn stops with limit_hit.
   */
  cost?: CostMeter;
  deadlineMs?: number;
  signal?: AbortSignal;
  onEvent?: (e: TurnEvent) => void;
  /**
   * Persists each history item (model views only). It may return the promise of a deferred write
   * (SessionStore.addMessageDeferred): the turn awaits those with the effects' records before the
   * model sees anything (see durable below).
   */
  onHistory?: (item: HistoryItem) => void | Promise<unknown>;
  /** The session's history so far; extended in place by this turn. */
  history?: HistoryItem[];
}

export interface TurnResult {
  outcome: 'completed' | 'limit_hit' | 'cancelled';
  /** With limit_hit: which limit (iterations unless tool calls or cost ran out). */
  limit?: 'iterations' | 'tool_calls' | 'cost';
  finalText: string | null;
  iterations: number;
  effects: { ok: number; failed: number };
}

/**
 * One user turn. `o.history` holds the session's earlier turns (model views only) and is extended
 * in place, so the next user turn of the session continues the same conversation.
 */
export async function runTurn(prompt: string, o: TurnEngineOptions): Promise<TurnResult> {
  const history: HistoryItem[] = o.history ?? [];
  const writes: Promise<unknown>[] = [];
  const push = (item: HistoryItem): void => {
    history.push(item);
    const w = o.onHistory?.(item);
    if (w) {
      w.catch(() => {}); // observed by durable()
      writes.push(w);
    }
  };
  // Output commit: effects run with their audit commit deferred (it overlaps the next effect's
  // wait); everything the model is about to see, and everything a finished turn reports, is in
  // the store first. A failed commit ends the turn with its error.
  const durable = async (): Promise<void> => {
    await o.runtime.durable();
    if (writes.length > 0) await Promise.all(writes.splice(0));
  };
  push({ role: 'user', content: prompt });
  const tools = o.runtime.catalog.providerDefinitions();
  const effects = { ok: 0, failed: 0 };
  for (let iteration = 1; iteration <= o.maxIterations; iteration++) {
    await durable();
    if (o.signal?.aborted) return { outcome: 'cancelled', finalText: null, iterations: iteration - 1, effects };
    if (o.budget && o.budget.iterationsLeft() <= 0) {
      o.onEvent?.({ type: 'limit_hit', iteration: iteration - 1, limit: iteration - 1, which: 'iterations' });
      return { outcome: 'limit_hit', limit: 'iterations', finalText: null, iterations: iteration - 1, effects };
    }
    // Money is spent by model requests: none is made once the pool is empty.
    if (o.cost && o.cost.left() <= 0) {
      o.onEvent?.({ type: 'limit_hit', iteration: iteration - 1, limit: iteration - 1, which: 'cost' });
      return { outcome: 'limit_hit', limit: 'cost', finalText: null, iterations: iteration - 1, effects };
    }
    let streamed = false;
    const stream = { onText: (text: string) => ((streamed = true), o.onEvent?.({ type: 'text_delta', iteration, text })) };
    let turn;
    try {
      turn = await o.provider.next(history, tools, o.signal, stream);
    } catch (err) {
      // A request the turn's own signal aborted is a cancelled turn, not a failed provider.
      if (o.signal?.aborted) return { outcome: 'cancelled', finalText: null, iterations: iteration, effects };
      throw err;
    }
    const costUsd = o.cost && turn.usage ? o.cost.price(turn.usage) : null;
    if (costUsd !== null) o.cost!.spend(costUsd);
    push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
    o.onEvent?.({ type: 'assistant', iteration, text: turn.text, toolCalls: turn.toolCalls.length, streamed, ...(costUsd !== null ? { costUsd } : {}) });
    if (turn.toolCalls.length === 0) {
      const text = turn.text ?? '';
      await durable();
      o.onEvent?.({ type: 'final', iteration, text });
      return { outcome: 'completed', finalText: text, iterations: iteration, effects };
    }
    let overBudget = false;
    for (const call of turn.toolCalls) {
      if (overBudget || (o.budget && o.budget.toolCallsLeft() <= 0)) {
        // Every call of the assistant message gets its result, so the history stays well formed.
        overBudget = true;
        push({ role: 'tool', callId: call.id, name: call.name, ok: false, content: "BUDGET_EXHAUSTED: this agent's tool calls are used up; the call did not run" });
        continue;
      }
      const item = await runCall(call, iteration, o);
      if (item.ok) effects.ok++;
      else effects.failed++;
      push(item);
    }
    if (overBudget) {
      await durable();
      o.onEvent?.({ type: 'limit_hit', iteration, limit: effects.ok + effects.failed, which: 'tool_calls' });
      return { outcome: 'limit_hit', limit: 'tool_calls', finalText: null, iterations: iteration, effects };
    }
  }
  await durable();
  o.onEvent?.({ type: 'limit_hit', iteration: o.maxIterations, limit: o.maxIterations, which: 'iterations' });
  return { outcome: 'limit_hit', limit: 'iterations', finalText: null, iterations: o.maxIterations, effects };
}

async function runCall(call: ModelToolCall, iteration: number, o: TurnEngineOptions): Promise<HistoryItem & { role: 'tool' }> {
  o.onEvent?.({ type: 'tool_call', iteration, callId: call.id, name: call.name, arguments: call.arguments });
  const req = o.runtime.request(call.name, call.arguments, call.id);
  if (!req) {
    o.onEvent?.({ type: 'unknown_tool', iteration, callId: call.id, name: call.name });
    return { role: 'tool', callId: call.id, name: call.name, ok: false, content: `UNKNOWN_TOOL: no tool named "${call.name}" in this turn; call tools_list to see the tools` };
  }
  const outcome = await o.runtime.execute(req, {
    principal: o.principal,
    sessionId: o.sessionId,
    commit: 'deferred',
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
  });
  o.onEvent?.({ type: 'tool_result', iteration, outcome });
  return { role: 'tool', callId: call.id, name: call.name, ok: outcome.ok && !outcome.isError, content: outcome.views.model.content };
}
