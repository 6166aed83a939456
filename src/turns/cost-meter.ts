// What a model's turns cost, metered by the supervisor from the usage the provider reports and the
// prices the core declares (model.pricing): the local runtime's side of limits.max_cost_usd, and of
// a delegated child's reserved cost. The model never reports a price of its own.
import type { ModelUsage } from './model-provider.js';

export interface ModelPricing {
  readonly input_usd_per_mtok: number;
  readonly output_usd_per_mtok: number;
}

export interface CostMeter {
  /** US dollars one model request cost; null when the model has no pricing (an offline script). */
  price(usage: ModelUsage): number | null;
  /** What is left of the budget's cost pool (Infinity without a cost limit). */
  left(): number;
  /** Draws a request's cost from the pool. */
  spend(usd: number): void;
}

export function priceOf(pricing: ModelPricing | undefined, usage: ModelUsage): number | null {
  if (!pricing) return null;
  return (usage.inputTokens * pricing.input_usd_per_mtok + usage.outputTokens * pricing.output_usd_per_mtok) / 1_000_000;
}

/** A meter over a cost pool (`left`, `spend`) at the given prices. */
export function costMeter(pricing: ModelPricing | undefined, pool: { left(): number; spend(usd: number): void }): CostMeter {
  return { price: (u) => priceOf(pricing, u), left: () => pool.left(), spend: (usd) => pool.spend(usd) };
}

/**
 * Whether a cost limit cannot be kept: there is one, the model is remote (an offline script spends
 * nothing), and nobody gave its prices (providers report tokens, not dollars). Such a limit is
 * refused before any request, for the root session and for a child's share alike.
 */
export function costUnmetered(limitUsd: number | null | undefined, offline: boolean, pricing: ModelPricing | undefined): boolean {
  return limitUsd !== null && limitUsd !== undefined && !offline && !pricing;
}
