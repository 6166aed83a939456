// `supervisor plan <core>...`: for each core's session, the runtime target and the effect bound,
// with the bound computed by every registered runtime and compared: a runtime is where the
// reasoning runs, never what it may do.
import { cliIo } from './io.js';
import { boundDigest } from '../runtimes/effect-bound.js';
import { externalBudgets } from '../runtimes/external-cli/budgets.js';
import { registeredRuntimes } from '../runtimes/registry.js';
import type { EffectBound } from '../runtimes/runtime-types.js';
import { loadCoreForCli } from './core-session.js';
import { parseFlags } from './flags.js';
import { UsageError } from './usage.js';

export const PLAN_HELP = `Usage: supervisor plan <core>... [--runtime NAME] [--json]

For each core (one session each; nothing of it is executed): the runtime target (agent.yaml
runtime:, or --runtime for this plan as for run), where the reasoning runs, and the effect bound:
the operations the agent can call (name, capability, approval policy, granted, schema digest) and
the built-in tools of an external CLI (always none). The bound is computed by every registered
runtime (local: the turn engine's tool definitions; claude-code: the per-run MCP server's tool
list and the CLI argv) and compared; its SHA-256 digest is printed. A --runtime that differs from
agent.yaml shows as runtime_target_change: an execution-substrate change, never wider authority.
MCP servers' tools are discovered when a session runs; the bound here covers what the core
declares (see supervisor catalog).

Exit status: 0 the bound is identical across runtimes; 1 it is not (the plan names the runtime and
the difference; do not run it); 2 usage or core errors.
`;

interface SessionPlan {
  core: string;
  revision: string;
  catalog: string;
  runtime: { target: string; source: 'agent.yaml' | '--runtime'; substrate: string; binary?: string | null; budgets?: Record<string, unknown> };
  change: { kind: 'runtime_target_change'; from: string; to: string; effect: 'execution substrate only'; authority: 'unchanged' | 'DIFFERS' } | null;
  effect_bound: EffectBound;
  digest: string;
  runtimes: { name: string; substrate: string; digest: string; identical: boolean }[];
  identical: boolean;
}

export async function runPlan(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['runtime'], multi: [] }, 'plan');
  if (f.help) {
    cliIo().stdout.write(PLAN_HELP);
    return 0;
  }
  if (f.positionals.length === 0) throw new UsageError('plan needs at least one core directory: supervisor plan <core>...');
  const override = f.value.get('runtime');
  const runtimes = registeredRuntimes();
  if (override !== undefined && !runtimes.some((r) => r.name === override)) {
    throw new UsageError(`--runtime ${override}: no such runtime; registered: ${runtimes.map((r) => r.name).join(', ')}`);
  }
  const plans: SessionPlan[] = [];
  for (const dir of f.positionals) {
    const { core, catalog } = await loadCoreForCli(dir, 'plan');
    const target = override ?? core.agent.runtime;
    const rt = runtimes.find((r) => r.name === target)!;
    const bounds = runtimes.map((r) => {
      const bound = r.effectBound(catalog);
      return { r, bound, digest: boundDigest(bound) };
    });
    const mine = bounds.find((b) => b.r.name === target)!;
    const identical = bounds.every((b) => b.digest === mine.digest);
    const binary = rt.locate ? rt.locate() : undefined;
    const budgets = rt.substrate === 'external-cli' ? { ...externalBudgets(core) } : undefined;
    plans.push({
      core: core.dir,
      revision: core.revision,
      catalog: catalog.id,
      runtime: { target, source: override !== undefined ? '--runtime' : 'agent.yaml', substrate: rt.substrate, ...(binary !== undefined ? { binary } : {}), ...(budgets ? { budgets } : {}) },
      change:
        target !== core.agent.runtime
          ? { kind: 'runtime_target_change', from: core.agent.runtime, to: target, effect: 'execution substrate only', authority: identical ? 'unchanged' : 'DIFFERS' }
          : null,
      effect_bound: mine.bound,
      digest: mine.digest,
      runtimes: bounds.map((b) => ({ name: b.r.name, substrate: b.r.substrate, digest: b.digest, identical: b.digest === mine.digest })),
      identical,
    });
  }
  const ok = plans.every((p) => p.identical);
  if (f.bool.has('json')) {
    cliIo().stdout.write(`${JSON.stringify({ sessions: plans, identical: ok })}\n`);
    return ok ? 0 : 1;
  }
  for (const p of plans) {
    const w = (s: string, n: number): string => s.padEnd(n);
    cliIo().stdout.write(`core ${p.core}\nrevision ${p.revision}\ncatalog ${p.catalog}\n`);
    cliIo().stdout.write(`runtime target: ${p.runtime.target} (${p.runtime.source}; ${p.runtime.substrate === 'in-process' ? 'the supervisor\'s own turn engine' : 'an external CLI the supervisor spawns'})\n`);
    if (p.runtime.binary !== undefined) cliIo().stdout.write(`  binary: ${p.runtime.binary ?? `not found (see supervisor run --help, claude-code)`}\n`);
    if (p.runtime.budgets) {
      const b = p.runtime.budgets as { maxTurns: number; maxToolCalls: number; wallClockMs: number; maxCostUsd: number; clamped: string[] };
      cliIo().stdout.write(`  budgets: ${b.maxTurns} turn(s) (--max-turns), ${b.maxToolCalls} tool call(s) counted by the supervisor, ${b.wallClockMs / 1000} s wall clock, ${b.maxCostUsd} USD (--max-budget-usd)\n`);
      for (const c of b.clamped) cliIo().stdout.write(`  clamped: ${c}\n`);
    }
    if (p.change) {
      cliIo().stdout.write(`runtime_target_change: ${p.change.from} → ${p.change.to}: ${p.change.effect}; authority ${p.change.authority}\n`);
    }
    cliIo().stdout.write(`\neffect bound (${p.effect_bound.operations.length} operation(s); built-in tools: ${p.effect_bound.builtins.length === 0 ? 'none' : p.effect_bound.builtins.join(', ')}):\n`);
    const n = Math.max(4, ...p.effect_bound.operations.map((o) => o.name.length));
    const c = Math.max(10, ...p.effect_bound.operations.map((o) => o.capability.length));
    for (const o of p.effect_bound.operations) cliIo().stdout.write(`  ${w(o.name, n)}  ${w(o.capability, c)}  ${w(o.approval, 6)}  ${o.granted ? 'granted' : 'not granted (refused at step 3)'}\n`);
    cliIo().stdout.write(`\neffect bound digest ${p.digest}\n`);
    for (const r of p.runtimes) cliIo().stdout.write(`  ${w(r.name, 12)} ${w(r.substrate, 12)} ${r.digest}  ${r.identical ? 'identical' : 'DIFFERS'}\n`);
    cliIo().stdout.write(p.identical ? 'the bound is identical on every runtime\n\n' : 'the bound DIFFERS between runtimes: do not run this core until it is the same\n\n');
  }
  return ok ? 0 : 1;
}
