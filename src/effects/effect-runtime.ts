// EffectRuntime.execute(request, ctx): the one path for every effect, in eight steps, in order:
// 1 binding, 2 principal scope, 3 capability, 4 pure checks, 5 approval, 6 secrets,
// 7 adapter under deadline and cancel, 8 views. Nothing runs before its checks.
import { randomBytes } from 'node:crypto';
import type { ValidateFunction } from 'ajv';
import { compileInputSchema, DEFAULT_SESSION_CAPS } from '../core/index.js';
import type { CatalogEntry, ResolvedEffectCatalog } from '../catalog/index.js';
import { sandboxAvailability, type ProcessSupervisor, type SandboxAvailability } from '../process/index.js';
import { CapabilityDeniedError, refineByClass, type ApprovalBroker, type ApprovalDecision, type ApprovalKey } from '../policy/index.js';
import { appendEventsDeferred, appendEventsGrouped, flushDeferredWrites, SessionSearch, SessionStore, type Database } from '../store/index.js';
import { AdapterCheckError, AdapterUnavailableError, type AdapterEnv, type AdapterOutput, type Delegator, type Preflight, type SessionHistory } from '../adapters/adapter-types.js';
import { containmentFor, sandboxRequirement, type Containment, type ContainmentResult } from './containment.js';
import { adapterFor } from '../adapters/registry.js';
import type { RuntimeTaskWorker } from '../tasks/index.js';
import { bindSecrets, SecretError, SecretStore, type SecretBindingRequest, type SecretBindingSet } from '../secrets/index.js';
import type { EffectOutcome, EffectRequest, EffectViews, TurnExecutionContext } from './types.js';
import type { SpawnAnswer, SpawnRequest } from '../ipc/index.js';
import { admit } from './admission.js';
import { approvalKeyFor, approvalRequest, sandboxAudit } from './approval-request.js';
import { openTrace, REDACTION_REFUSAL, Refusal, type ApprovedCall, type CheckedCall, type EffectEvent, type EffectTrace } from './effect-trace.js';
import { errorViews, NO_REDACTION, REDACTION_FAILED_VIEWS, successViews, textRedactor, type TextRedactor } from './views.js';

const DEFAULT_DEADLINE_MS = 120_000;
/** The builtin ctx.agents.spawn runs as (its catalog entry, capability agent.spawn). */
const DELEGATE_TOOL = 'delegate_task';
/** The adapter enforces the deadline itself (a tree stopped at its timeout says "timeout"); this
 *  backstop aborts an adapter that did not, after the grace a tree needs to die. */
const BACKSTOP_MS = 5_000;

export interface EffectRuntimeOptions {
  catalog: ResolvedEffectCatalog;
  broker: ApprovalBroker;
  supervisor: ProcessSupervisor;
  db: Database;
  /** Operator hook for live display: called with the operator view of each finished effect. */
  onOperatorView?: (view: Readonly<Record<string, unknown>>) => void;
  /** Operator hook for progress an adapter reports while it runs (MCP notifications/progress). */
  onProgress?: (p: { callId: string; tool: string; progress: number; total?: number; message?: string }) => void;
  /** Where bound secrets come from; default: the catalog's core declarations. */
  secrets?: SecretStore;
  /** Runs background tasks (terminal background=true and the task tools); without it they are refused. */
  tasks?: RuntimeTaskWorker;
  /** Starts delegated children (delegate_task); without it delegate_task is refused at step 4. */
  delegation?: Delegator;
  /** With onProgress: a "still running" beat this often while an adapter runs (default 10 s). */
  heartbeatMs?: number;
  /** Said to the operator once per runtime (e.g. auto-approval by class is off: no sandbox here). */
  onNotice?: (text: string) => void;
  /** What session_search reads (default: this store's own history; with a control plane, every member's too). */
  history?: SessionHistory;
  /** Whether the OS sandbox works here; default the process layer's cached probe (a seam for tests). */
  sandboxAvailability?: () => SandboxAvailability;
}

/** This machine's store as session_search's history. */
function searchOf(local: SessionSearch): SessionHistory {
  return { search: async (scope, q) => local.search(scope, q) };
}

/** Effects running against each store, across runtimes: more than one means commits can be shared. */
const running = new WeakMap<Database, number>();
/** Calls in flight per session of each store, across runtimes (what limits.max_concurrent_calls counts). */
const inFlight = new WeakMap<Database, Map<string, number>>();

/** The session's limits.max_concurrent_calls was reached: the call is refused before step 1. */
function sessionCapReached(cap: number): Refusal {
  return new Refusal(
    'LIMIT_REACHED',
    1,
    `this session already has ${cap} calls in flight, its limit (limits.max_concurrent_calls in agent.yaml); ` +
      'the call did not run: call it again after one of them has returned, or raise limits.max_concurrent_calls',
  );
}

/** The adapter's signal: aborted by the caller's cancel, or by the backstop (then `overran`). */
function adapterSignal(cancel: AbortSignal | undefined, backstopMs: number): { signal: AbortSignal; readonly overran: boolean; release(): void } {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  cancel?.addEventListener('abort', onAbort, { once: true });
  let overran = false;
  const timer = setTimeout(() => {
    overran = true;
    controller.abort();
  }, backstopMs);
  return {
    signal: controller.signal,
    get overran() {
      return overran;
    },
    release() {
      clearTimeout(timer);
      cancel?.removeEventListener('abort', onAbort);
    },
  };
}

/** A deferred audit commit failed: the effect ran, its record is not in the store. */
export class AuditCommitError extends Error {
  readonly code = 'AUDIT_COMMIT_FAILED';
  constructor(cause: unknown) {
    super(`an effect's audit events could not be committed (${(cause as Error)?.message ?? String(cause)}); nothing more runs in this session until the store is fixed (supervisor audit verify)`, { cause });
    this.name = 'AuditCommitError';
  }
}

export class EffectRuntime {
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly sessions: SessionStore;
  private history: SessionHistory | null = null;
  private readonly issued = new WeakSet<EffectRequest>();
  /** The catalog never changes under a runtime: build the model-facing listing once. */
  private readonly listing: AdapterEnv['listing'];
  private readonly callPrefix = `call_${randomBytes(4).toString('hex')}_`;
  private calls = 0;
  private readonly secretStore: SecretStore;
  private readonly network: AdapterEnv['network'];
  /** Deferred audit commits not settled yet, and the first that failed (final: see execute). */
  private readonly pendingCommits = new Set<Promise<void>>();
  private commitFailure: AuditCommitError | null = null;
  /** The machine-wide "auto-approval by class is off" notice is given once per runtime (one run). */
  private sandboxNoticeGiven = false;

  constructor(private readonly o: EffectRuntimeOptions) {
    this.secretStore = o.secrets ?? SecretStore.fromCore(o.catalog.core);
    const net = o.catalog.core.agent.network;
    this.network = Object.freeze({ hosts: [...(net?.allow_hosts ?? [])], cidrs: [...(net?.allow_cidrs ?? [])] });
    this.sessions = new SessionStore(o.db);
    this.listing = Object.freeze(
      o.catalog.entries.map((e) => Object.freeze({ name: e.name, description: e.description, capability: e.capability, approval: e.approval, risk: e.risk, source: e.source })),
    );
  }

  get catalog(): ResolvedEffectCatalog {
    return this.o.catalog;
  }

  /** Turns a model's call into a request bound to this runtime's catalog (the one name lookup). */
  request(name: string, args: unknown, callId = `${this.callPrefix}${++this.calls}`): EffectRequest | null {
    const entry = this.o.catalog.entryForCall(name);
    if (!entry) return null;
    const req: EffectRequest = Object.freeze({ catalogId: this.o.catalog.id, entry, args, callId });
    this.issued.add(req);
    return req;
  }

  async execute(req: EffectRequest, ctx: TurnExecutionContext): Promise<EffectOutcome> {
    // Fail closed: after a deferred audit commit failed, nothing more runs through this runtime.
    if (this.commitFailure) throw this.commitFailure;
    const db = this.o.db;
    // The session's cap on calls in flight: counted before anything runs, so a burst cannot race past it.
    let sessions = inFlight.get(db);
    if (!sessions) inFlight.set(db, (sessions = new Map()));
    const cap = this.o.catalog.core.agent.limits.max_concurrent_calls ?? DEFAULT_SESSION_CAPS.maxConcurrentCalls;
    const held = sessions.get(ctx.sessionId) ?? 0;
    if (held >= cap) return this.run(req, ctx, cap);
    sessions.set(ctx.sessionId, held + 1);
    running.set(db, (running.get(db) ?? 0) + 1);
    try {
      // Steps 1 to 7 up to the adapter's first await are synchronous: a burst is admitted under a per-tick budget.
      const turn = admit();
      if (turn) await turn;
      return await this.run(req, ctx);
    } finally {
      const n = (running.get(db) ?? 1) - 1;
      if (n === 0) running.delete(db);
      else running.set(db, n);
      const m = (sessions.get(ctx.sessionId) ?? 1) - 1;
      if (m <= 0) sessions.delete(ctx.sessionId);
      else sessions.set(ctx.sessionId, m);
    }
  }

  /**
   * The eight steps in the seed's order, each returning its result or the Refusal that ends the
   * effect. `overCap`: the session's limits.max_concurrent_calls, reached: the call is refused
   * (and audited) before step 1.
   */
  private async run(req: EffectRequest, ctx: TurnExecutionContext, overCap?: number): Promise<EffectOutcome> {
    const trace = openTrace(req, this.knownSecrets());
    const refuse = (r: Refusal): Promise<EffectOutcome> => this.refuse(ctx, trace, r);
    if (overCap !== undefined) return refuse(sessionCapReached(overCap));
    const entry = this.checkBinding(req);
    if (entry instanceof Refusal) return refuse(entry);
    const otherPrincipal = this.checkPrincipal(ctx);
    if (otherPrincipal) return refuse(otherPrincipal);
    const notGranted = this.requireCapability(entry.capability, 3);
    if (notGranted) return refuse(notGranted);
    const checked = this.runPureChecks(entry, req.args, ctx, trace);
    if (checked instanceof Refusal) return refuse(checked);
    const approved = await this.resolveApproval(checked, req.args, ctx, trace);
    if (approved instanceof Refusal) return refuse(approved);
    const bound = await this.bindApprovedSecrets(checked, trace);
    if (bound instanceof Refusal) return refuse(bound);
    const out = await this.invokeAdapter(checked, req.args, ctx, approved, bound, trace);
    if (out instanceof Refusal) return refuse(out);
    return this.produceViews(ctx, trace, out);
  }

  /** Step 1: the request was made by this runtime, from this catalog, for an entry it owns; valid arguments. */
  private checkBinding(req: EffectRequest): CatalogEntry | Refusal {
    const entry = req?.entry as CatalogEntry | undefined;
    if (!entry || !this.issued.has(req) || req.catalogId !== this.o.catalog.id || !this.o.catalog.owns(entry)) {
      return new Refusal('BINDING_INVALID', 1, 'the request was not made from this turn’s catalog (another or an older catalog, or a copy); resolve the call again');
    }
    const validate = this.validatorFor(entry);
    if (validate === null) {
      return new Refusal('ARGS_INVALID', 1, `${entry.name}'s input schema cannot be used; the call did not run (see supervisor catalog)`);
    }
    if (!validate(req.args)) {
      const why = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message}`).join('; ');
      return new Refusal('ARGS_INVALID', 1, `arguments do not match ${entry.name}'s input schema: ${why}`);
    }
    return entry;
  }

  /** Step 2: the catalog was resolved for one principal. */
  private checkPrincipal(ctx: TurnExecutionContext): Refusal | null {
    return ctx.principal === this.o.catalog.principal ? null : new Refusal('PRINCIPAL_DENIED', 2, `this catalog belongs to another principal`);
  }

  /** Step 3 (the entry's capability) and step 4 (what the exact action needs besides): the immutable snapshot. */
  private requireCapability(capability: string, step: 3 | 4): Refusal | null {
    try {
      this.o.catalog.capabilities.require(capability);
      return null;
    } catch (err) {
      if (err instanceof CapabilityDeniedError) return new Refusal('CAPABILITY_DENIED', step, err.message);
      throw err;
    }
  }

  /** Step 4: pure checks (workspace, command, env): no process, no network, no file mutation. */
  private runPureChecks(entry: CatalogEntry, args: unknown, ctx: TurnExecutionContext, trace: EffectTrace): CheckedCall | Refusal {
    const adapter = adapterFor(entry.adapterKey);
    if (!adapter) return new Refusal('BINDING_INVALID', 1, `no adapter for ${entry.adapterKey}`);
    const bindings = this.bindingsFor(entry);
    const env = this.adapterEnv(ctx, bindings);
    const adapterEntry = { name: entry.name, adapterKey: entry.adapterKey, capability: entry.capability };
    let pre: Preflight;
    try {
      pre = adapter.preflight(adapterEntry, args, env);
    } catch (err) {
      if (err instanceof AdapterCheckError) return new Refusal('CHECK_FAILED', 4, err.message);
      if (err instanceof AdapterUnavailableError) return new Refusal('NOT_IMPLEMENTED', 4, err.message);
      throw err;
    }
    trace.summary = pre.summary;
    trace.audit = pre.audit;
    // What this exact action needs beyond the entry's capability, checked like step 3.
    for (const required of pre.requires ?? []) {
      const denied = this.requireCapability(required, 4);
      if (denied) return denied;
    }
    return { entry, adapter, adapterEntry, env, bindings, pre };
  }

  /** What every adapter may see of this runtime, for this caller (only the names of secret targets). */
  private adapterEnv(ctx: TurnExecutionContext, bindings: readonly SecretBindingRequest[]): AdapterEnv {
    return {
      workspace: this.o.catalog.core.workspace,
      core: this.o.catalog.core,
      supervisor: this.o.supervisor,
      listing: this.listing,
      secretTargets: bindings.map((b) => b.env),
      network: this.network,
      owner: { principal: ctx.principal, sessionId: ctx.sessionId },
      ...(this.o.tasks ? { tasks: this.o.tasks } : {}),
      authority: { coreChanged: () => this.o.broker.cache.invalidate({ coreRevision: this.o.catalog.core.revision }) },
      ...(this.o.delegation ? { delegation: this.o.delegation, agents: { spawn: (req, signal, deadlineMs) => this.spawnForTool(req, ctx, signal, deadlineMs) } } : {}),
    };
  }

  /**
   * ctx.agents.spawn of an authored tool: delegate_task's own effect, for the same caller, through
   * the same eight steps (the catalog must hold delegate_task, the snapshot agent.spawn; approval
   * and audit as for a model's call). The tool learns the child's status and answer (model view).
   */
  private async spawnForTool(req: SpawnRequest, ctx: TurnExecutionContext, signal: AbortSignal, deadlineMs: number): Promise<SpawnAnswer> {
    const r = this.request(DELEGATE_TOOL, req);
    if (!r) {
      return { ok: false, status: 'CAPABILITY_DENIED', text: `${DELEGATE_TOOL} is not in this session's catalog: the core must list the agents toolset and grant agent.spawn` };
    }
    const out = await this.execute(r, { principal: ctx.principal, sessionId: ctx.sessionId, signal, deadlineMs });
    if (!out.ok) return { ok: false, status: out.code, text: out.message };
    const detail = out.views.durable.detail as { status?: unknown } | undefined;
    return { ok: true, status: typeof detail?.status === 'string' ? detail.status : out.isError ? 'failed' : 'completed', text: out.views.model.content };
  }

  /**
   * Step 5: the folded policy, refined by the checks; the key binds this exact action. A call
   * that binds a secret is never approved by a command class; a class approval must be contained.
   */
  private async resolveApproval(call: CheckedCall, args: unknown, ctx: TurnExecutionContext, trace: EffectTrace): Promise<ApprovedCall | Refusal> {
    const contained = this.containment(call);
    if (!contained.ok) return new Refusal('CHECK_FAILED', 4, contained.message);
    const containment = contained.containment;
    this.noticeWithheld(containment, trace.events);
    trace.policy = containment.policy;
    const key = approvalKeyFor(call, ctx, this.o.catalog.capabilities.digest, containment.policy);
    trace.approvalKey = key.id;
    const decision = await this.decide(call, args, ctx, key, containment);
    if (decision instanceof Refusal) return decision;
    trace.approval = { approved: decision.approved, source: decision.source, reason: decision.reason };
    // A decision someone made (operator, rule, cache of an operator's answer) is durable before
    // anything runs; a policy's own auto/deny travels in the effect's event batch instead.
    if (decision.source !== 'policy') this.recordApproval(ctx, key.id, call.entry, decision);
    // Whether it runs sandboxed, and why, is part of the effect's record.
    const sandbox = sandboxRequirement(containment, decision);
    if (call.pre.sandbox !== undefined || containment.withheld !== null) trace.audit = { ...trace.audit, sandbox: sandboxAudit(sandbox, containment, decision) };
    if (!decision.approved) return new Refusal('APPROVAL_DENIED', 5, decision.reason);
    return { sandbox };
  }

  /** The entry's policy refined by the checks, and whether a class approval can be held by the sandbox. */
  private containment(call: CheckedCall): ContainmentResult {
    const allowAutoFor = call.bindings.length > 0 ? [] : [...this.o.catalog.core.agent.approval.auto_approve];
    const refined = refineByClass(call.entry.approval, call.pre.checks, { allowAutoFor });
    return containmentFor(refined, call.pre, this.o.sandboxAvailability ?? (() => sandboxAvailability()));
  }

  /** The broker's decision on this exact call; a broker that fails denies it. */
  private async decide(call: CheckedCall, args: unknown, ctx: TurnExecutionContext, key: ApprovalKey, containment: Containment): Promise<ApprovalDecision | Refusal> {
    // What the operator is shown (and what a pending request stores) passes the redactor too: a
    // model can put a known secret's value into its arguments. The key binds the real action.
    let redact: TextRedactor;
    let summary: string;
    try {
      redact = this.redactor();
      summary = redact(call.pre.summary);
    } catch {
      return REDACTION_REFUSAL;
    }
    try {
      return await this.o.broker.decide(approvalRequest({ call, args, ctx, key, containment, redact, summary }), ctx.signal);
    } catch (err) {
      return new Refusal('APPROVAL_DENIED', 5, `approval failed: ${(err as Error).message}`);
    }
  }

  /**
   * Step 6: secrets resolved only now, after approval, for this effect; the earliest expiry
   * clamps it. Then one compiled redactor for this effect's views: a set that cannot be redacted
   * safely stops the effect here, before anything runs.
   */
  private async bindApprovedSecrets(call: CheckedCall, trace: EffectTrace): Promise<SecretBindingSet | null | Refusal> {
    let bound: SecretBindingSet | null = null;
    if (call.bindings.length > 0) {
      try {
        bound = await bindSecrets(this.secretStore, call.bindings, { grants: (capability: string) => this.o.catalog.capabilities.allows(capability), background: call.pre.background === true });
      } catch (err) {
        if (err instanceof SecretError) return new Refusal('SECRET_DENIED', 6, err.message);
        throw err;
      }
      trace.bindings = bound.metadata.map((m) => ({ ...m }));
      trace.secrets = this.knownSecrets();
    }
    try {
      trace.redact = this.redactor();
    } catch {
      bound?.overlay.wipe();
      return REDACTION_REFUSAL;
    }
    return bound;
  }

  /** Step 7: the adapter, under the deadline and the cancel signal; the bound secrets are wiped after. */
  private async invokeAdapter(
    call: CheckedCall,
    args: unknown,
    ctx: TurnExecutionContext,
    approved: ApprovedCall,
    bound: SecretBindingSet | null,
    trace: EffectTrace,
  ): Promise<AdapterOutput | Refusal> {
    let deadlineMs = ctx.deadlineMs ?? DEFAULT_DEADLINE_MS;
    if (bound?.deadline != null) deadlineMs = Math.max(1, Math.min(deadlineMs, bound.deadline - Date.now()));
    trace.deadlineMs = deadlineMs;
    const guard = adapterSignal(ctx.signal, deadlineMs + BACKSTOP_MS);
    const beat = this.heartbeat(trace);
    try {
      return await call.adapter.invoke(call.adapterEntry, args, {
        ...call.env,
        signal: guard.signal,
        deadlineMs,
        // Live: a stream this effect starts (a background task, a long tree) also redacts secrets
        // this session resolves after it started.
        redact: this.secretStore.redaction,
        // Stored history is reachable only from here on: after capability and approval.
        history: (this.history ??= this.o.history ?? searchOf(new SessionSearch(this.o.db))),
        ...(call.pre.prepared !== undefined ? { prepared: call.pre.prepared } : {}),
        ...(approved.sandbox ? { sandbox: approved.sandbox } : {}),
        ...(bound ? { secretEnv: (base: Record<string, string>) => bound.overlay.apply(base) } : {}),
        ...(this.o.onProgress ? { onProgress: (p: { progress: number; total?: number; message?: string }) => this.progress(trace, p) } : {}),
      });
    } catch (err) {
      if (ctx.signal?.aborted) return new Refusal('CANCELLED', 7, 'the call was cancelled');
      if (guard.overran) return new Refusal('TIMEOUT', 7, `the effect exceeded its deadline of ${deadlineMs} ms`);
      return new Refusal('ADAPTER_FAILED', 7, (err as Error).message);
    } finally {
      guard.release();
      clearInterval(beat);
      bound?.overlay.wipe();
    }
  }

  /** Long calls tell the operator they are still running (the model sees only the result). */
  private heartbeat(trace: EffectTrace): NodeJS.Timeout | undefined {
    if (!this.o.onProgress) return undefined;
    const started = Date.now();
    const beat = setInterval(() => this.progress(trace, { progress: Math.round((Date.now() - started) / 1000), message: 's, still running' }), this.o.heartbeatMs ?? 10_000);
    beat.unref();
    return beat;
  }

  /** Step 8: bounded, redacted, separate views, recorded with the effect's other events. */
  private async produceViews(ctx: TurnExecutionContext, trace: EffectTrace, out: AdapterOutput): Promise<EffectOutcome> {
    trace.durationMs = Date.now() - trace.startedAt;
    let views: EffectViews;
    try {
      views = successViews(trace, out);
    } catch {
      return this.redactionFailed(ctx, trace);
    }
    trace.events.push({ kind: 'effect.completed', payload: views.durable });
    await this.record(ctx, trace.events);
    this.o.onOperatorView?.(views.operator);
    return { ok: true, callId: trace.callId, tool: trace.tool, isError: out.isError, views };
  }

  /** A step refused: the effect ends with its error, recorded with the effect's other events. */
  private async refuse(ctx: TurnExecutionContext, trace: EffectTrace, r: Refusal): Promise<EffectOutcome> {
    if (r === REDACTION_REFUSAL) return this.redactionFailed(ctx, trace);
    trace.durationMs = Date.now() - trace.startedAt;
    let views: EffectViews;
    try {
      if (trace.redact === NO_REDACTION && trace.secrets.length > 0) trace.redact = this.redactor();
      views = errorViews(trace, r.code, r.step, r.message);
    } catch {
      views = REDACTION_FAILED_VIEWS;
    }
    trace.events.push({ kind: 'effect.failed', payload: views.durable });
    await this.record(ctx, trace.events);
    return { ok: false, callId: trace.callId, tool: trace.tool, code: r.code, step: r.step, message: r.message, views };
  }

  /** Says once per runtime that auto-approval by class is off on this machine (and records it). */
  private noticeWithheld(c: Containment, events: EffectEvent[]): void {
    if (!c.machineWide || c.withheld === null || this.sandboxNoticeGiven) return;
    this.sandboxNoticeGiven = true;
    events.push({ kind: 'runtime.notice', payload: { notice: 'auto_approval_unsandboxable', message: c.withheld } });
    this.o.onNotice?.(c.withheld);
  }

  /** Progress goes to the operator only, redacted like every view (a message may quote a secret). */
  private progress(trace: EffectTrace, p: { progress: number; total?: number; message?: string }): void {
    try {
      const message = p.message === undefined ? undefined : trace.redact(p.message.slice(0, 500));
      this.o.onProgress?.({ callId: trace.callId, tool: trace.tool, progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(message !== undefined ? { message } : {}) });
    } catch {
      // A progress line that cannot be redacted is dropped, never shown raw.
    }
  }

  /** The one fixed failed result: the durable record says that redaction failed, never what the output was. */
  private async redactionFailed(ctx: TurnExecutionContext, trace: EffectTrace): Promise<EffectOutcome> {
    const views = REDACTION_FAILED_VIEWS;
    trace.events.push({ kind: 'effect.failed', payload: { call_id: trace.callId, tool: trace.tool, ...views.durable } });
    await this.record(ctx, trace.events);
    return { ok: false, callId: trace.callId, tool: trace.tool, code: REDACTION_REFUSAL.code, step: REDACTION_REFUSAL.step, message: REDACTION_REFUSAL.message, views };
  }

  /** The bindings agent.yaml declares for this tool (terminal only, for now). */
  private bindingsFor(entry: CatalogEntry): readonly SecretBindingRequest[] {
    const tools = this.o.catalog.core.agent.tools as Readonly<Record<string, { secrets?: readonly SecretBindingRequest[] }>> | undefined;
    return tools?.[entry.name]?.secrets ?? [];
  }

  /** Known secret values as text, and their compiled redactor, for the store's current count. */
  private known: { count: number; values: string[]; redact: TextRedactor | null } = { count: 0, values: [], redact: NO_REDACTION };

  /**
   * Every secret value to redact, as text: all the store resolved so far (a binding resolves
   * through the store, so this effect's bound values are in it). Rebuilt only when it grew.
   */
  private knownSecrets(): string[] {
    const count = this.secretStore.knownCount;
    if (count !== this.known.count) {
      const values = new Set<string>();
      for (const b of this.secretStore.knownValues()) values.add(b.toString('utf8'));
      this.known = { count, values: [...values].filter((v) => v.length > 0), redact: null };
    }
    return this.known.values;
  }

  /**
   * One compiled redactor for every known secret, shared by effects until a new value is resolved
   * (compiling costs milliseconds with many secrets). Throws RedactionError if none is safe.
   */
  redactor(): TextRedactor {
    const values = this.knownSecrets();
    this.known.redact ??= textRedactor(values);
    return this.known.redact;
  }

  /**
   * The entry's validator (compiled at core load or MCP discovery; patterns on the linear-time
   * engine). Null when the schema does not compile: a catalog built around the loaders can hold one.
   */
  private validatorFor(entry: CatalogEntry): ValidateFunction | null {
    let v = this.validators.get(entry.ref);
    if (!v) {
      const compiled = compileInputSchema(entry.inputSchema);
      if (!compiled.ok) return null;
      v = compiled.validate;
      this.validators.set(entry.ref, v);
    }
    return v;
  }

  /**
   * An effect's events land together or not at all. By default they are committed before
   * execute() returns; while other effects run against the same store, their appends share one
   * commit (group commit). With `commit: 'deferred'` they join the store's next group commit and
   * durable() is the barrier.
   */
  private async record(ctx: TurnExecutionContext, events: EffectEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (ctx.commit === 'deferred') {
      const p = appendEventsDeferred(this.o.db, ctx.sessionId, events.splice(0)).then(
        () => undefined,
        (err: unknown) => {
          this.commitFailure ??= new AuditCommitError(err);
        },
      );
      this.pendingCommits.add(p);
      void p.finally(() => this.pendingCommits.delete(p));
      return;
    }
    await appendEventsGrouped(this.o.db, ctx.sessionId, events.splice(0), (running.get(this.o.db) ?? 0) > 1);
  }

  /**
   * The output-commit barrier for `commit: 'deferred'`: resolves once every effect this runtime
   * ran is in the store (committing what is queued now), rejects with AuditCommitError if any
   * deferred commit failed. Await it before a result leaves the process.
   */
  async durable(): Promise<void> {
    flushDeferredWrites(this.o.db);
    if (this.pendingCommits.size > 0) await Promise.all([...this.pendingCommits]);
    if (this.commitFailure) throw this.commitFailure;
  }

  private recordApproval(ctx: TurnExecutionContext, key: string, entry: CatalogEntry, d: ApprovalDecision): void {
    this.sessions.recordApproval({ principal: ctx.principal }, ctx.sessionId, {
      key,
      tool: entry.name,
      capability: entry.capability,
      decision: d.approved ? 'allow' : 'deny',
      source: d.source,
      reason: d.reason,
    });
  }
}
