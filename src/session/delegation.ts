// Delegation (issue 18): delegate_task starts a child agent as the supervisor's own session on
// the local runtime, inside an agent.spawn task. The supervisor computes everything that bounds
// the child; the call can only narrow it:
//   grants   = the parent's effective grants ∩ the definition's ∩ the call's
//   toolsets = the parent's ∩ the definition's ∩ the call's; `agents` only while depth allows
//   rules    = the parent's agent.yaml approval section and its --deny rules, as real rules
//   approvals: its own broker, cache and session key (nothing the parent approved carries over)
//   budget   = iterations, wall time, tool calls and cost reserved from the parent's remainder
// The child's final answer (bounded; redacted by the parent's views) is the tool result; its
// events are a chain of their own, linked both ways with the parent's by session id and hash.
import { buildCatalog, type ResolvedEffectCatalog } from '../catalog/index.js';
import { DEFAULT_MAX_DELEGATION_DEPTH, type AgentDefinition, type BuiltinToolset, type CoreSnapshot } from '../core/index.js';
import { AdapterCheckError, type DelegationRequest, type DelegationResult, type Delegator } from '../adapters/adapter-types.js';
import type { McpConnectionManager } from '../adapters/mcp/index.js';
import { EffectRuntime, redactDeep } from '../effects/index.js';
import { CleanupStack, type ProcessSupervisor } from '../process/index.js';
import { ApprovalBroker, ApprovalRules, CapabilitySnapshot, intersectGrants, parseCapability, RuleApprover, type ApprovalRequest, type Approver } from '../policy/index.js';
import type { SecretStore } from '../secrets/index.js';
import { appendEvent, chainHead, type Database, type SessionStore, type TaskRecord } from '../store/index.js';
import { RuntimeTaskWorker, type InProcessTaskEnd } from '../tasks/index.js';
import { createRemoteProvider, runTurn, ScriptedProvider, type ModelProvider, type TurnEvent } from '../turns/index.js';
import { costMeter, costUnmetered } from '../turns/cost-meter.js';
import { mcpSecretResolver } from './secret-policy.js';

/** What a child gets when neither its definition nor its parent's remainder says less. */
export const CHILD_DEFAULTS = Object.freeze({ iterations: 8, toolCalls: 32, wallMs: 300_000 });
/** The most of a child's answer (characters) that becomes the parent's tool result. */
export const MAX_ANSWER_CHARS = 8_000;

/** A budget's dimensions; null: no limit from this level. */
export interface BudgetLimits {
  iterations: number | null;
  toolCalls: number | null;
  wallMs: number | null;
  costUsd: number | null;
}

/**
 * One session's budget. A child's share is reserved from the remainder before it starts and
 * settled (what it used stays spent, the rest returns) when it ends. Wall time is a deadline, not
 * a pool: a child's never ends after its parent's.
 */
export class DelegationBudget {
  readonly used = { iterations: 0, toolCalls: 0, costUsd: 0 };
  private readonly reserved = { iterations: 0, toolCalls: 0, costUsd: 0 };
  private readonly deadline: number | null;

  constructor(readonly limits: BudgetLimits, now: number = Date.now()) {
    this.deadline = limits.wallMs === null ? null : now + limits.wallMs;
  }

  /** What is left for this session and its children. */
  remaining(now: number = Date.now()): BudgetLimits {
    const left = (k: 'iterations' | 'toolCalls' | 'costUsd'): number | null => {
      const limit = this.limits[k];
      return limit === null ? null : Math.max(0, limit - this.used[k] - this.reserved[k]);
    };
    return { iterations: left('iterations'), toolCalls: left('toolCalls'), costUsd: left('costUsd'), wallMs: this.deadline === null ? null : Math.max(0, this.deadline - now) };
  }

  /** A child's share: what it asks (or the defaults), never more than is left. Reserved at once. */
  reserve(wanted: Partial<BudgetLimits>): BudgetLimits {
    const left = this.remaining();
    const min = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));
    const granted: BudgetLimits = {
      iterations: min(wanted.iterations ?? CHILD_DEFAULTS.iterations, left.iterations),
      toolCalls: min(wanted.toolCalls ?? CHILD_DEFAULTS.toolCalls, left.toolCalls),
      wallMs: min(wanted.wallMs ?? CHILD_DEFAULTS.wallMs, left.wallMs),
      costUsd: min(wanted.costUsd ?? null, left.costUsd),
    };
    this.reserved.iterations += granted.iterations ?? 0;
    this.reserved.toolCalls += granted.toolCalls ?? 0;
    this.reserved.costUsd += granted.costUsd ?? 0;
    return granted;
  }

  /** A model request's cost, metered by the supervisor (turns/cost-meter.ts). */
  spendCost(usd: number): void {
    this.used.costUsd += usd;
  }

  /** The cost pool as a turn's CostMeter draws from it. */
  costPool(): { left(): number; spend(usd: number): void } {
    return { left: () => this.remaining().costUsd ?? Infinity, spend: (usd) => this.spendCost(usd) };
  }

  /** The child ended: its reservation is released and what it used is spent. */
  settle(granted: BudgetLimits, used: { iterations: number; toolCalls: number; costUsd: number }): void {
    this.reserved.iterations -= granted.iterations ?? 0;
    this.reserved.toolCalls -= granted.toolCalls ?? 0;
    this.reserved.costUsd -= granted.costUsd ?? 0;
    this.used.iterations += used.iterations;
    this.used.toolCalls += used.toolCalls;
    this.used.costUsd += used.costUsd;
  }
}

/** The root session's budget: agent.yaml limits. */
export function rootBudget(core: CoreSnapshot): DelegationBudget {
  const l = core.agent.limits;
  return new DelegationBudget({
    iterations: l.max_iterations ?? null,
    toolCalls: l.max_tool_calls ?? null,
    wallMs: l.timeout_seconds === undefined ? null : Math.round(l.timeout_seconds * 1000),
    costUsd: l.max_cost_usd ?? null,
  });
}

/** Everything a session's delegator needs; a child's is derived from its parent's. */
export interface DelegationContext {
  /** The loaded core: child definitions come from here, whatever the depth. */
  readonly core: CoreSnapshot;
  /** This session's core as its catalog was built (a child's is narrowed). */
  readonly sessionCore: CoreSnapshot;
  /** This session's catalog: its capability snapshot is the effective grant set. */
  readonly catalog: ResolvedEffectCatalog;
  readonly principal: string;
  readonly sessionId: string;
  /** Told of each child session as it is made, at any depth (a run on a control plane shows it there). */
  readonly onChildSession?: (child: { sessionId: string; taskId: string }) => void;
  readonly db: Database;
  readonly sessions: SessionStore;
  readonly supervisor: ProcessSupervisor;
  /** The root session's MCP connection manager: a child joins a live connection it may use instead of starting its own server. */
  readonly mcpHost: McpConnectionManager;
  readonly secrets: SecretStore;
  /** This session's task worker: the agent.spawn tasks are its own. */
  readonly tasks: RuntimeTaskWorker;
  /** Who answers a prompt no rule settles (the same operator surfaces at every depth). */
  readonly fallback: Approver;
  /** The run's --deny rules, copied into every child as rules. */
  readonly deny: readonly string[];
  /** 0 for a session the operator started. */
  readonly depth: number;
  readonly maxDepth: number;
  readonly budget: DelegationBudget;
  /** Agent names from the root to this session, for approval prompts ("demo → summarizer"). */
  readonly lineage: readonly string[];
  /** This session's redactor (its EffectRuntime's): what a task row or an answer stores passes it. */
  readonly redact: (text: string) => string;
}

/** The root session's context (openSession). */
/** The root session's context; `budget`: the one it already has, when its catalog is resolved again for a new turn. */
export function rootDelegationContext(c: Omit<DelegationContext, 'depth' | 'maxDepth' | 'budget' | 'lineage' | 'sessionCore'> & { budget?: DelegationBudget }): DelegationContext {
  return { ...c, sessionCore: c.core, depth: 0, maxDepth: c.core.agent.limits.max_delegation_depth ?? DEFAULT_MAX_DELEGATION_DEPTH, budget: c.budget ?? rootBudget(c.core), lineage: [c.core.agent.name] };
}

/** What a child is allowed, worked out before it starts (and recorded in its task's metadata). */
export interface ChildScope {
  readonly depth: number;
  readonly maxDepth: number;
  readonly grants: readonly string[];
  readonly toolsets: readonly BuiltinToolset[];
  /** Tool names the child may see (null: every tool its grants and toolsets give). */
  readonly tools: readonly string[] | null;
}

/** What a child that edits a folder (DelegationRequest.editScope) may use: the sandboxed terminal. */
export const EDIT_TOOLSETS: readonly BuiltinToolset[] = ['terminal'];

/** The child's scope: every part an intersection with the parent's; `agents` only below the depth limit. */
export function childScope(parent: Pick<DelegationContext, 'catalog' | 'sessionCore' | 'depth' | 'maxDepth'>, def: AgentDefinition, req: DelegationRequest): ChildScope {
  const depth = parent.depth + 1;
  let grants = intersectGrants(parent.catalog.capabilities.grants, def.grants);
  if (req.grants !== undefined) grants = intersectGrants(grants, req.grants);
  const parentToolsets = new Set<string>(parent.sessionCore.agent.toolsets);
  const asked = req.toolsets === undefined ? null : new Set(req.toolsets);
  const allowed = (t: BuiltinToolset): boolean => parentToolsets.has(t) && (asked === null || asked.has(t)) && (t !== 'agents' || depth < parent.maxDepth) && (req.editScope === undefined || EDIT_TOOLSETS.includes(t));
  const toolsets = def.toolsets.filter(allowed);
  let tools: string[] | null = def.tools === undefined ? null : [...def.tools];
  if (req.tools !== undefined) tools = tools === null ? [...req.tools] : tools.filter((t) => req.tools!.includes(t));
  // The parent's own selection bounds the child's: a tool the parent cannot see, the child cannot.
  const parentTools = parent.catalog.entries.map((e) => e.name);
  tools = (tools ?? parentTools).filter((t) => parentTools.includes(t));
  return { depth, maxDepth: parent.maxDepth, grants, toolsets, tools };
}

/**
 * The core a child's catalog is built from: the parent's, its authority narrowed to the scope. A
 * child that edits a folder works in it, and only through the sandboxed terminal: that folder is
 * its workspace, writable inside the sandbox alone; authored tools and MCP servers (which run
 * outside it) are not its to call.
 */
function childCore(parent: CoreSnapshot, def: AgentDefinition, scope: ChildScope, iterations: number, editScope: string | undefined): CoreSnapshot {
  const snapshot = CapabilitySnapshot.from(scope.grants);
  const child = {
    ...parent,
    agent: {
      ...parent.agent,
      toolsets: [...scope.toolsets],
      grants: [...scope.grants],
      limits: { ...parent.agent.limits, max_iterations: iterations },
    },
    modelScript: def.modelScript,
    // Only servers the child may connect to are discovered for it, on its own connections.
    mcp: parent.mcp.filter((d) => snapshot.allows(`mcp.connect:${d.name}`)),
  } as CoreSnapshot;
  if (editScope === undefined) return child;
  return { ...child, workspace: editScope, tools: [], mcp: [], agent: { ...child.agent, terminal: { ...child.agent.terminal, sandbox: 'workspace-write' } } } as CoreSnapshot;
}

type ChildStatus = DelegationResult['status'];

/** Tags a child's prompts with its lineage, so the operator sees which agent asks. */
function taggedApprover(fallback: Approver, lineage: readonly string[]): Approver {
  const tag = `[${lineage.join(' → ')}] `;
  return {
    decide: (r: ApprovalRequest, signal?: AbortSignal) => fallback.decide({ ...r, preview: r.preview, actionSummary: `${tag}${r.actionSummary}` }, signal),
    ...(fallback.veto ? { veto: (r: ApprovalRequest) => fallback.veto!(r) } : {}),
  };
}

/** The session layer's Delegator: one per session, at its depth, with its budget. */
export class SessionDelegator implements Delegator {
  constructor(private readonly ctx: DelegationContext) {}

  /** This session's budget: its own model requests draw their cost from it too. */
  get budget(): DelegationBudget {
    return this.ctx.budget;
  }

  check(agent: string): void {
    const defs = this.ctx.core.agents ?? [];
    if (this.ctx.depth >= this.ctx.maxDepth) {
      throw new AdapterCheckError(`delegation depth limit reached: this agent runs at depth ${this.ctx.depth} of at most ${this.ctx.maxDepth} (limits.max_delegation_depth in agent.yaml); do the task yourself`);
    }
    if (!defs.some((d) => d.name === agent)) {
      throw new AdapterCheckError(`no child agent ${JSON.stringify(agent.slice(0, 64))} in this core (agents: ${defs.map((d) => d.name).join(', ') || 'none; add agent/agents/<name>.yaml'})`);
    }
  }

  async run(req: DelegationRequest, callSignal: AbortSignal, deadlineMs: number = Number.POSITIVE_INFINITY): Promise<DelegationResult> {
    // Checked again here: every path that creates a child passes the depth and definition checks.
    this.check(req.agent);
    const def = (this.ctx.core.agents ?? []).find((d) => d.name === req.agent)!;
    for (const g of req.grants ?? []) {
      try {
        parseCapability(g, 'grant');
      } catch (err) {
        throw new AdapterCheckError(`grants: ${(err as Error).message}`);
      }
    }
    const scope = childScope(this.ctx, def, req);
    // The child's wall time also ends a second before the delegate_task call's own deadline, so it
    // stops as budget_exhausted with its evidence rather than being cut off by the call's timeout.
    const defWall = def.limits.timeout_seconds === undefined ? CHILD_DEFAULTS.wallMs : Math.round(def.limits.timeout_seconds * 1000);
    const granted = this.ctx.budget.reserve({
      iterations: def.limits.max_iterations ?? null,
      toolCalls: def.limits.max_tool_calls ?? null,
      wallMs: Math.max(0, Math.min(defWall, deadlineMs - 1000)),
      costUsd: def.limits.max_cost_usd ?? null,
    });
    const requested = { toolsets: req.toolsets ?? null, tools: req.tools ?? null, grants: req.grants ?? null };
    const metadata: Record<string, unknown> = {
      agent: def.name,
      definition: def.source,
      parent_session: this.ctx.sessionId,
      depth: scope.depth,
      max_depth: scope.maxDepth,
      requested,
      resolved: { toolsets: scope.toolsets, tools: scope.tools, grants: scope.grants },
      budget: { reserved: granted },
      input: { task_chars: req.task.length },
    };
    let result: DelegationResult | null = null;
    let started: { task: TaskRecord; ended: Promise<TaskRecord> };
    try {
      started = this.ctx.tasks.startInProcess(
        { principal: this.ctx.principal },
        { sessionId: this.ctx.sessionId, sourceTool: 'delegate_task', summary: this.redacted(`${def.name}: ${req.task}`), metadata, maxRunningInSession: this.ctx.core.agent.limits.max_background_tasks },
        async (task, taskSignal) => {
          const signal = AbortSignal.any([taskSignal, callSignal]);
          try {
            const { end, outcome } = await this.runChild(task, def, req, scope, granted, metadata, signal);
            result = outcome;
            return end;
          } finally {
            // A child that failed before it settled gives its whole reservation back.
            if (result === null) this.ctx.budget.settle(granted, { iterations: 0, toolCalls: 0, costUsd: 0 });
          }
        },
      );
    } catch (err) {
      this.ctx.budget.settle(granted, { iterations: 0, toolCalls: 0, costUsd: 0 });
      throw err;
    }
    const done = await started.ended;
    return result ?? { status: done.status === 'cancelled' || done.status === 'interrupted' ? 'cancelled' : 'failed', answer: done.reason ?? 'the child did not run', detail: { task_id: done.id } };
  }

  /** `text` through the session's redactor; withheld when it cannot be redacted safely. */
  private redacted(text: string): string {
    try {
      return this.ctx.redact(text);
    } catch {
      return '[withheld: it could not be safely redacted]';
    }
  }

  private async runChild(
    task: TaskRecord,
    def: AgentDefinition,
    req: DelegationRequest,
    scope: ChildScope,
    granted: BudgetLimits,
    metadata: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ end: InProcessTaskEnd; outcome: DelegationResult }> {
    const { ctx } = this;
    const scoped = { principal: ctx.principal };
    const child = ctx.sessions.createSession(scoped, { coreDir: ctx.core.dir, coreRevision: ctx.core.revision, runtime: 'local', owner: ctx.supervisor.owner });
    const parentHead = chainHead(ctx.db, ctx.sessionId)?.hash ?? null;
    appendEvent(ctx.db, child.id, 'delegation.started', { parent_session: ctx.sessionId, parent_task: task.id, parent_chain_head: parentHead, agent: def.name, depth: scope.depth, resolved: metadata.resolved, budget: granted });
    ctx.tasks.store.setDelegation(task.id, child.id, { ...metadata, child_session: child.id });
    ctx.onChildSession?.({ sessionId: child.id, taskId: task.id });
    // The child's own use and its children's settled use (the budget's `used`).
    const childBudget = new DelegationBudget(granted);
    const used = childBudget.used;
    const evidence: { text: string | null; tools: string[] } = { text: null, tools: [] };
    let status: ChildStatus = 'failed';
    let answer = '';
    let why = '';
    const opened = new CleanupStack();
    let wallHit = false;
    const wallAbort = new AbortController();
    const wall = granted.wallMs === null ? null : setTimeout(() => ((wallHit = true), wallAbort.abort()), granted.wallMs);
    // Whatever leaves the child (answer, evidence) passes a redactor, as every view does: the
    // child's once it has one (the same secret store as the parent's), the parent's before.
    let redact = (text: string): string => ctx.redact(text);
    const runSignal = AbortSignal.any([signal, wallAbort.signal]);
    try {
      if (granted.iterations === 0 || granted.wallMs === 0) {
        status = 'budget_exhausted';
        why = 'nothing was left of the parent\'s budget for this child';
      } else {
        const core = childCore(ctx.sessionCore, def, scope, granted.iterations ?? CHILD_DEFAULTS.iterations, req.editScope);
        const childTasks = new RuntimeTaskWorker({ supervisor: ctx.supervisor, db: ctx.db });
        opened.defer(() => childTasks.close());
        const broker = new ApprovalBroker({ approver: new RuleApprover(ApprovalRules.parse({ deny: ctx.deny }), taggedApprover(ctx.fallback, [...ctx.lineage, def.name])) });
        let catalog = buildCatalog({ core, principal: ctx.principal, child: { tools: scope.tools } });
        if (core.mcp.length > 0) {
          // Through the session's manager: the child's own gate (its grant, its connect approval),
          // then the parent's live connection when there is one; let go of when the child ends
          // (before its task completes), so what only the child held stops with it.
          const mcpHost = ctx.mcpHost;
          opened.defer(() => mcpHost.releaseSession(child.id));
          const capabilities = catalog.capabilities;
          const mcp = await mcpHost.discover({ sessionId: child.id, principal: ctx.principal, core, capabilities, broker, resolveEnv: mcpSecretResolver(ctx.secrets, capabilities) });
          catalog = buildCatalog({ core, principal: ctx.principal, mcpTools: mcp.tools, connectPolicy: mcp.connectPolicy, child: { tools: scope.tools } });
        }
        // The tool selection as resolved: exactly what the child's catalog holds.
        metadata.resolved = { ...(metadata.resolved as object), tools: catalog.entries.map((e) => e.name) };
        ctx.tasks.store.setDelegation(task.id, child.id, { ...metadata, child_session: child.id });
        // The child's own delegator: its depth, its budget (what was reserved for it), its tasks.
        const childCtx: DelegationContext = { ...ctx, sessionCore: core, catalog, sessionId: child.id, tasks: childTasks, depth: scope.depth, budget: childBudget, lineage: [...ctx.lineage, def.name], redact: (text) => effects.redactor()(text) };
        const effects: EffectRuntime = new EffectRuntime({ catalog, broker, supervisor: ctx.supervisor, db: ctx.db, secrets: ctx.secrets, tasks: childTasks, delegation: new SessionDelegator(childCtx) });
        redact = (text) => effects.redactor()(text);
        const parentModel = ctx.core.agent.model;
        if (!def.modelScript && parentModel?.provider !== 'openai-compatible' && parentModel?.provider !== 'anthropic') {
          // A runtime that brings its own model (claude-code) leaves the child none to borrow.
          throw new Error(`the child has no model: add model: to ${def.source.file} (agent.yaml has no remote model it could use)`);
        }
        // The child's prices: its own script's, or the parent's model's it borrows. A reserved cost
        // that cannot be metered (a remote model without prices) is refused before any request.
        const pricing = def.modelScript ? def.model?.pricing : parentModel?.pricing;
        if (costUnmetered(granted.costUsd, Boolean(def.modelScript), pricing)) {
          throw new Error(`the child's cost share (${granted.costUsd} USD of limits.max_cost_usd) cannot be metered: agent.yaml's model has no pricing; add model.pricing to agent.yaml`);
        }
        const provider: ModelProvider = def.modelScript ? new ScriptedProvider(def.modelScript as never) : await createRemoteProvider(parentModel as never, { secrets: ctx.secrets });
        opened.defer(async () => provider.close?.());
        const turnId = ctx.sessions.addTurn(scoped, child.id).id;
        const prompt = def.instructions === '' ? req.task : `${def.instructions}\n\n${req.task}`;
        const onEvent = (e: TurnEvent): void => {
          if (e.type === 'assistant') {
            used.iterations++;
            if (e.text) evidence.text = e.text;
          } else if (e.type === 'tool_result') {
            used.toolCalls++;
            const o = e.outcome;
            evidence.tools.push(`${o.tool}: ${o.ok && !o.isError ? 'ok' : `failed (${o.ok ? 'error' : o.code})`}`);
          }
        };
        let turnStatus: 'completed' | 'failed' | 'cancelled' = 'failed';
        try {
          const r = await runTurn(prompt, {
            runtime: effects,
            provider,
            principal: ctx.principal,
            sessionId: child.id,
            maxIterations: granted.iterations ?? CHILD_DEFAULTS.iterations,
            budget: { iterationsLeft: () => childBudget.remaining().iterations ?? Infinity, toolCallsLeft: () => childBudget.remaining().toolCalls ?? Infinity },
            cost: costMeter(pricing, childBudget.costPool()),
            signal: runSignal,
            history: [],
            onEvent,
            onHistory: (item) => ctx.sessions.addMessageDeferred(scoped, child.id, { turnId, role: item.role, content: redactDeep(item, effects.redactor()) }),
          });
          await effects.durable();
          if (r.outcome === 'completed') {
            status = 'completed';
            answer = r.finalText ?? '';
            turnStatus = 'completed';
          } else if (r.outcome === 'limit_hit') {
            status = 'budget_exhausted';
            why =
              r.limit === 'tool_calls'
                ? `its ${granted.toolCalls} tool calls were used up (its own and its children's)`
                : r.limit === 'cost'
                  ? `its ${granted.costUsd} USD were used up (its own model requests and its children's)`
                  : `its ${granted.iterations} iterations were used up (its own and its children's)`;
          } else {
            status = wallHit ? 'budget_exhausted' : 'cancelled';
            why = wallHit ? `its ${granted.wallMs} ms of wall time ran out` : 'it was cancelled';
            turnStatus = 'cancelled';
          }
        } catch (err) {
          status = wallHit ? 'budget_exhausted' : signal.aborted ? 'cancelled' : 'failed';
          why = wallHit ? `its ${granted.wallMs} ms of wall time ran out` : signal.aborted ? 'it was cancelled' : `it failed: ${(err as Error).message}`;
        } finally {
          ctx.sessions.endTurn(scoped, turnId, turnStatus);
        }
      }
    } catch (err) {
      // The child could not be set up (its model, its MCP discovery): it ends failed, its session too.
      status = signal.aborted ? 'cancelled' : 'failed';
      why = signal.aborted ? 'it was cancelled' : `it could not start: ${(err as Error).message}`;
    } finally {
      if (wall) clearTimeout(wall);
      // Everything the child owns ends before its task does: its own children, trees and MCP servers.
      await opened.unwind().catch(() => undefined);
    }
    if (status !== 'completed') {
      const last = evidence.text === null ? '' : ` Its last words: ${evidence.text}`;
      const tools = evidence.tools.length === 0 ? '' : ` Tool results so far: ${evidence.tools.slice(-10).join('; ')}.`;
      answer = `The child agent ${def.name} stopped (${status}): ${why}.${last}${tools}`;
    }
    try {
      answer = redact(answer);
    } catch {
      answer = '[the child\'s answer is withheld: it could not be safely redacted]';
    }
    const truncated = answer.length > MAX_ANSWER_CHARS;
    if (truncated) answer = `${answer.slice(0, MAX_ANSWER_CHARS)}… [${answer.length - MAX_ANSWER_CHARS} more characters]`;
    ctx.sessions.endSession(scoped, child.id, status === 'completed' ? 'completed' : status === 'cancelled' ? 'cancelled' : 'failed');
    appendEvent(ctx.db, child.id, 'delegation.ended', { status, reason: why || null, used, answer_chars: answer.length });
    const childHead = chainHead(ctx.db, child.id)?.hash ?? null;
    ctx.budget.settle(granted, used);
    const endMeta = { ...metadata, child_session: child.id, child_chain_head: childHead, status, budget: { reserved: granted, used }, output: { answer_chars: answer.length, truncated }, evidence: { tools: evidence.tools.slice(-20) } };
    const detail = { task_id: task.id, child_session: child.id, child_chain_head: childHead, depth: scope.depth, budget_used: used, resolved: metadata.resolved };
    return {
      end: {
        status: status === 'completed' ? 'completed' : status === 'cancelled' ? 'cancelled' : 'failed',
        reason: status === 'completed' ? 'the child answered' : this.redacted(`${status}: ${why}`),
        logTail: answer,
        childSessionId: child.id,
        metadata: endMeta,
      },
      outcome: { status, answer, detail },
    };
  }
}
