// The local runtime: the supervisor's own turn engine with the core's model provider. The
// reasoning runs in this process; every tool call goes through EffectRuntime.
import { redactDeep } from '../effects/index.js';
import type { HistoryItem, ModelProvider } from '../turns/model-provider.js';
import { ProviderError } from '../turns/providers/errors.js';
import { ScriptedProvider } from '../turns/scripted-provider.js';
import { runTurn, type TurnResult } from '../turns/turn-engine.js';
import { costMeter, costUnmetered, type CostMeter } from '../turns/cost-meter.js';
import type { ResolvedEffectCatalog } from '../catalog/index.js';
import { boundOf } from './effect-bound.js';
import { RuntimeSetupError, type AgentRuntime, type EffectBound, type PreparedRun, type RuntimeRunOptions, type RuntimeRunResult, type RuntimeSession } from './runtime-types.js';

export const DEFAULT_MAX_ITERATIONS = 8;

export const localRuntime: AgentRuntime = {
  name: 'local',
  substrate: 'in-process',
  effectBound(catalog: ResolvedEffectCatalog): EffectBound {
    // Exactly what the engine hands the provider each turn.
    return boundOf(catalog, catalog.providerDefinitions().map((d) => ({ name: d.name, schema: d.input_schema })), []);
  },
  async prepare(s: RuntimeSession, o: { passThrough?: readonly string[] }): Promise<PreparedRun> {
    if ((o.passThrough ?? []).length > 0) throw new RuntimeSetupError('RUNTIME_ARGS_UNSUPPORTED', '--runtime-arg is for external runtimes; the local runtime takes none');
    const model = s.core.agent.model;
    refuseUnmeteredCost(s);
    let provider: ModelProvider;
    try {
      if (model?.provider === 'scripted' && s.core.modelScript) provider = new ScriptedProvider(s.core.modelScript as never);
      else if (model?.provider === 'openai-compatible' || model?.provider === 'anthropic') {
        // The HTTP providers (undici, their settings' schemas) load when a core names one, not for
        // a scripted model (issue 17).
        const { createRemoteProvider } = await import('../turns/providers/create-provider.js');
        provider = await createRemoteProvider(model, { secrets: s.secrets });
      }
      else throw new RuntimeSetupError('MODEL_MISSING', `the core ${s.core.dir} has no model: section; add one to agent.yaml (see docs/core-format.md, Model)`);
    } catch (err) {
      if (err instanceof ProviderError) throw new RuntimeSetupError(err.code ?? 'PROVIDER', err.message);
      throw err;
    }
    const cost = meterFor(s);
    const turns = localTurns(s, provider, cost);
    return {
      run: (r) => runLocal(turns, r),
      turn: (prompt, r) => {
        turns.scriptedUser?.nextUserMessage();
        return turns.turn(prompt, r);
      },
      close: async () => provider.close?.(),
    };
  },
};

/**
 * A cost limit the supervisor cannot meter is refused before anything runs: a remote model without
 * model.pricing reports tokens, not dollars. (An offline script spends nothing.)
 */
function refuseUnmeteredCost(s: RuntimeSession): void {
  const model = s.core.agent.model;
  if (!model || !costUnmetered(s.core.agent.limits.max_cost_usd, model.provider === 'scripted', model.pricing)) return;
  throw new RuntimeSetupError(
    'COST_UNMETERED',
    `agent.yaml limits.max_cost_usd is set, but model.pricing is not: the supervisor meters cost from the tokens the ${model.provider} provider reports and needs their prices. Add model.pricing: { input_usd_per_mtok: N, output_usd_per_mtok: N } (US dollars per million tokens) or remove the limit`,
  );
}

/** The session's cost pool at the model's prices (none: the turn engine meters nothing). */
function meterFor(s: RuntimeSession): CostMeter | null {
  return s.costPool ? costMeter(s.core.agent.model?.pricing, s.costPool) : null;
}

/** The session's user turns on one provider: each is a stored turn of the session's conversation. */
function localTurns(s: RuntimeSession, provider: ModelProvider, cost: CostMeter | null) {
  // The scripted provider also plays the user: its `user:` items are the session's later turns.
  const scriptedUser = provider instanceof ScriptedProvider ? provider : null;
  const history = s.history as HistoryItem[];
  let turns = 0;
  const turn = async (prompt: string, o: Omit<RuntimeRunOptions, 'prompt' | 'passThrough'>): Promise<TurnResult> => {
    // The catalog is per turn: a core changed since the last one (a promotion) is resolved anew.
    await s.beforeTurn?.();
    turns++;
    o.onEvent({ type: 'user', turn: turns, text: prompt });
    const turnId = s.sessions.addTurn({ principal: s.principal }, s.sessionId).id;
    let result: TurnResult;
    try {
      result = await runTurn(prompt, {
        runtime: s.runtime,
        provider,
        principal: s.principal,
        sessionId: s.sessionId,
        maxIterations: s.core.agent.limits.max_iterations ?? DEFAULT_MAX_ITERATIONS,
        ...(cost ? { cost } : {}),
        signal: o.signal,
        history,
        ...(o.deadlineMs !== undefined ? { deadlineMs: o.deadlineMs } : {}),
        onEvent: o.onEvent,
        // History is stored with every known secret removed, the model's own words included.
        onHistory: (item) => s.sessions.addMessageDeferred({ principal: s.principal }, s.sessionId, { turnId, role: item.role, content: redactDeep(item, s.runtime.redactor()) }),
      });
    } catch (err) {
      s.sessions.endTurn({ principal: s.principal }, turnId, 'failed');
      throw err;
    }
    s.sessions.endTurn({ principal: s.principal }, turnId, result.outcome === 'completed' ? 'completed' : result.outcome === 'cancelled' ? 'cancelled' : 'failed');
    return result;
  };
  return { scriptedUser, turn, turnsSoFar: () => turns };
}

async function runLocal(t: ReturnType<typeof localTurns>, o: RuntimeRunOptions): Promise<RuntimeRunResult> {
  const firstScripted = t.scriptedUser?.nextUserMessage() ?? null;
  let prompt: string | null = o.prompt ?? firstScripted ?? 'Run your task.';
  const start = t.turnsSoFar();
  const total = { iterations: 0, ok: 0, failed: 0 };
  let outcome: RuntimeRunResult['outcome'] = 'completed';
  while (prompt !== null) {
    const result = await t.turn(prompt, o);
    total.iterations += result.iterations;
    total.ok += result.effects.ok;
    total.failed += result.effects.failed;
    outcome = result.outcome;
    if (outcome !== 'completed') break;
    prompt = t.scriptedUser?.nextUserMessage() ?? null;
  }
  return { outcome, turns: t.turnsSoFar() - start, iterations: total.iterations, effects: { ok: total.ok, failed: total.failed } };
}
