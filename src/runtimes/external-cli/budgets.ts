// A core's limits as an external run's budgets, clamped by the supervisor's own ceilings. The
// CLI gets them as flags (a belt); the supervisor counts for itself and stops the tree on a breach.
import type { CoreSnapshot } from '../../core/index.js';

/** The supervisor's ceilings: a core may ask for less, never for more. */
export const EXTERNAL_CEILINGS = Object.freeze({ maxTurns: 32, wallClockMs: 3600_000, maxCostUsd: 5 });
export const EXTERNAL_DEFAULTS = Object.freeze({ maxTurns: 8, wallClockMs: 600_000, maxCostUsd: 1 });
/**
 * What one run may store of the CLI's assistant turns (their content as messages, bytes of
 * canonical JSON). Not a core setting: the supervisor's own bound on what a CLI can make it write
 * (32 turns of a 1 MiB line each would otherwise be 33 MB).
 */
export const EXTERNAL_MAX_STORED_OUTPUT_BYTES = 8 * 1024 * 1024;

export interface ExternalBudgets {
  /** Model turns the CLI may take (its own flag). */
  maxTurns: number;
  /** Tool calls through the supervisor's MCP server: one per iteration, counted by the supervisor. */
  maxToolCalls: number;
  /** The whole run, spawn to exit; the tree is killed at this deadline. */
  wallClockMs: number;
  /** Reported cost in USD; a result over it ends the run with limit_hit. */
  maxCostUsd: number;
  /** Bytes of assistant turns the run may store; the turn that would pass it ends the run. */
  maxStoredOutputBytes: number;
  /** What was clamped and why (shown by plan and at start). */
  clamped: string[];
}

export function externalBudgets(core: CoreSnapshot): ExternalBudgets {
  const l = core.agent.limits;
  const clamped: string[] = [];
  const clamp = (what: string, asked: number | undefined, dflt: number, ceiling: number): number => {
    if (asked === undefined) return Math.min(dflt, ceiling);
    if (asked > ceiling) {
      clamped.push(`${what} ${asked} clamped to the supervisor's ceiling ${ceiling}`);
      return ceiling;
    }
    return asked;
  };
  const maxTurns = clamp('limits.max_iterations', l.max_iterations, EXTERNAL_DEFAULTS.maxTurns, EXTERNAL_CEILINGS.maxTurns);
  const wallClockMs = clamp('limits.timeout_seconds (ms)', l.timeout_seconds === undefined ? undefined : Math.round(l.timeout_seconds * 1000), EXTERNAL_DEFAULTS.wallClockMs, EXTERNAL_CEILINGS.wallClockMs);
  const maxCostUsd = clamp('limits.max_cost_usd', l.max_cost_usd, EXTERNAL_DEFAULTS.maxCostUsd, EXTERNAL_CEILINGS.maxCostUsd);
  return { maxTurns, maxToolCalls: maxTurns, wallClockMs, maxCostUsd, maxStoredOutputBytes: EXTERNAL_MAX_STORED_OUTPUT_BYTES, clamped };
}
