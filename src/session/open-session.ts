// Assembling a session: load the core, resolve this principal's catalog, open the process layer and
// the store, start (or resume) a stored session, discover the approved MCP servers, and build the
// EffectRuntime every call goes through. `run`, `call`, `serve`, `catalog --discover` and the
// library (src/index.ts) all open their sessions here.
import { join, resolve } from 'node:path';
import { McpConnectionManager, mcpToolName, type DiscoveryResult } from '../adapters/mcp/index.js';
import { buildCatalog, identityInputFor, type ResolvedEffectCatalog } from '../catalog/index.js';
import type { CoreSnapshot } from '../core/index.js';
import { EffectRuntime, redactDeep, type EffectOutcome } from '../effects/index.js';
import { CleanupStack, ProcessSupervisor, type SpawnTreeOptions, type SupervisedTree } from '../process/index.js';
import { ApprovalBroker, ApprovalRules, checkDiscoveredToolRules, NonInteractiveApprover, ruleVocabulary, RuleApprover, StoreApprover, type Approver } from '../policy/index.js';
// The registry and the types, not the runtimes' barrel (it re-exports the MCP server, which loads
// only when an external runtime starts its CLI).
import { runtimeFor } from '../runtimes/registry.js';
import type { AgentRuntime, PreparedRun, RuntimeEvent, RuntimeRunResult, RuntimeSession } from '../runtimes/runtime-types.js';
import { SecretStore } from '../secrets/index.js';
import { appendEvent, appendEvents, openStore, SessionStore, type Database, type SessionOwner } from '../store/index.js';
import { RuntimeTaskWorker } from '../tasks/index.js';
import type { TurnResult } from '../turns/index.js';
import { SessionError } from './errors.js';
import { loadSessionCore } from './load.js';
import { rootDelegationContext, SessionDelegator, type DelegationBudget } from './delegation.js';
import { coreFingerprint } from './core-watch.js';
import { mcpSecretResolver } from './secret-policy.js';
import { defaultStateDir } from './state-dir.js';
import type { SessionHost } from './session-host.js';
import { sharedHistory, type OtherMachinesSearch } from './shared-history.js';
import { importElsewhere, type ResumeElsewhere } from './resume-elsewhere.js';

export interface OpenSessionOptions {
  /** The core directory (agent.yaml and the folders it names). */
  core: string;
  /** The SQLite store and artifacts (default: defaultStateDir()). */
  stateDir?: string;
  /** Who the session runs as (default: the local user, `local:<username>`). */
  principal?: string;
  /**
   * Who answers a `prompt` decision no rule settles. Default: nobody — every such call is refused
   * with a message saying how to allow it (what the CLI does without a terminal).
   */
  approver?: Approver;
  /** Approve/deny rules (`TOOL`, `TOOL:GLOB`, `capability:PATTERN`), checked before the approver; a deny always wins. */
  rules?: { approve?: readonly string[]; deny?: readonly string[] };
  /** Without an approver: how long a prompt waits for `supervisor approvals` from another terminal (default 0: refuse at once). */
  awaitApprovalMs?: number;
  /** Told when a prompt starts waiting for another terminal's answer. */
  onPendingApproval?: (id: string, request: { toolName: string; actionSummary: string }) => void;
  /** Progress of running effects (MCP notifications/progress), for the operator's display. */
  onProgress?: (p: { callId: string; tool: string; progress: number; total?: number; message?: string }) => void;
  /** Once-per-session notices of the effect runtime (e.g. auto-approval by class is off: no sandbox here). */
  onNotice?: (text: string) => void;
  /** The runtime name recorded with the session (default: agent.yaml runtime:). */
  runtime?: string;
  /** Continue this ended session of the same principal and core instead of starting one. */
  resume?: string;
  /**
   * Share MCP servers with the other sessions of this host (openSessionHost): the session joins
   * the host's manager instead of making its own, and lets go of what it held when it closes.
   */
  host?: SessionHost;
  /**
   * With a control plane: session_search over every session of the principal reaches the other
   * machines' runs too, through their copies there (decision 127).
   */
  otherMachines?: OtherMachinesSearch;
  /**
   * With a control plane: `resume` names a session this store does not hold, which another
   * machine ran; it is taken over from its copy there (decision 129).
   */
  resumeElsewhere?: ResumeElsewhere;
  /** Told of each delegated child session as it is made, with the task that runs it (decision 127). */
  onChildSession?: (child: { sessionId: string; taskId: string }) => void;
}

export interface DroppedTool {
  server: string;
  /** The name it would have had in the catalog (`<server>_<tool>`). */
  tool: string;
  reason: string;
}

export interface CallToolOptions {
  signal?: AbortSignal;
  /** The effect's deadline in milliseconds (default 120 s). */
  deadlineMs?: number;
}

export interface RunTurnOptions {
  signal?: AbortSignal;
  /** Each effect's deadline in milliseconds. */
  deadlineMs?: number;
  onEvent?: (e: RuntimeEvent) => void;
}

export interface RunSessionOptions extends RunTurnOptions {
  /** The user's first message (default: the script's first user: item, or "Run your task."). */
  prompt?: string | null;
  /** A registered runtime's name (default: agent.yaml runtime:, else local). */
  runtime?: string | AgentRuntime;
  /** Extra arguments for an external CLI runtime (checked before anything runs). */
  passThrough?: readonly string[];
}

export type SessionStatus = 'completed' | 'failed' | 'cancelled';

/** An open session: one stored session of a core's agent, its catalog, its process trees and its audit chain. */
export interface Session {
  /** The stored session's id (`supervisor audit verify --session ID`). */
  readonly id: string;
  readonly principal: string;
  readonly stateDir: string;
  readonly core: CoreSnapshot;
  /** The resolved catalog, MCP tools discovered at open included. */
  readonly catalog: ResolvedEffectCatalog;
  /** What MCP discovery found (per server: connected, denied, failed); null when the core declares none. */
  readonly mcp: DiscoveryResult | null;
  /** MCP tools left out of the catalog, each with its reason (also `catalog.tool_dropped` events in the chain). */
  readonly droppedTools: readonly DroppedTool[];
  /** The session's one secret store: every value it resolved is redacted from every view; redact what you print with it too. */
  readonly secrets: SecretStore;
  /** The session's process supervisor: every tree it starts is stopped by close(). */
  readonly supervisor: ProcessSupervisor;
  /** The EffectRuntime every call of this session goes through (the eight steps). */
  readonly effects: EffectRuntime;
  /**
   * One tool call through the same eight steps a model's call takes (schema, principal,
   * capability, checks, approval, secrets, the adapter under a deadline, redacted views and one
   * audit transaction); a refusal is an outcome with ok: false, never an exception. A name the
   * catalog does not hold is a SessionError UNKNOWN_TOOL and runs nothing.
   */
  callTool(name: string, args?: unknown, o?: CallToolOptions): Promise<EffectOutcome>;
  /** One user turn of the local runtime with the core's model; later turns continue the conversation. */
  runTurn(prompt: string, o?: RunTurnOptions): Promise<TurnResult>;
  /** A whole run on a runtime (what `supervisor run` does): prepared, run, its runtime closed; the session stays open. */
  runSession(o?: RunSessionOptions): Promise<RuntimeRunResult>;
  /** A runtime's setup, which runs nothing of the agent and may refuse (RuntimeSetupError); run it, then close it. */
  prepareRun(o?: Pick<RunSessionOptions, 'runtime' | 'passThrough'>): Promise<PreparedRun>;
  /** A supervised process tree owned by this session (killed whole, at the latest by close()). */
  spawnTree(o: SpawnTreeOptions): SupervisedTree;
  /**
   * Ends the session: background tasks, MCP servers and every tree stopped, the session marked
   * `status` (default completed), the store closed. Later calls return the same promise.
   */
  close(status?: SessionStatus): Promise<void>;
}

/** The run's approve/deny rules, checked against what this catalog holds. */
function approvalRulesFor(rules: OpenSessionOptions['rules'], vocabulary: Parameters<typeof ApprovalRules.parse>[1]): ApprovalRules {
  try {
    return ApprovalRules.parse({ approve: [...(rules?.approve ?? [])], deny: [...(rules?.deny ?? [])] }, vocabulary);
  } catch (err) {
    throw new SessionError('RULE_INVALID', (err as Error).message);
  }
}

/**
 * Opens a session of the core at `o.core`: nothing of the agent runs, but approved MCP servers are
 * started and discovered (each gated by its grant and connect approval). Throws SessionError for a
 * core, rule or resume that cannot be used, having closed whatever it opened.
 */
export async function openSession(o: OpenSessionOptions): Promise<Session> {
  // Everything the session opens registers its close here as it is opened: a failed open and
  // close() unwind the same stack, newest first.
  const opened = new CleanupStack();
  try {
    return await assembleSession(o, opened);
  } catch (err) {
    await opened.unwind().catch(() => undefined);
    throw err;
  }
}

async function assembleSession(o: OpenSessionOptions, opened: CleanupStack): Promise<Session> {
  const stateDir = resolve(o.stateDir ?? o.host?.stateDir ?? defaultStateDir());
  if (o.host && o.host.stateDir !== stateDir) {
    throw new SessionError('HOST_STATE_DIR', `stateDir ${stateDir} is not the host's (${o.host.stateDir}): a session shares MCP servers only with sessions of the same store; leave stateDir out or open a host there`);
  }
  // Each rule is checked against what this core's catalog holds: a rule that can never match is a
  // typo, and in a deny rule a typo fails open.
  const loaded = await loadSessionCore(o.core, o.principal);
  const { principal } = loaded;
  let core = loaded.core;
  let catalog = loaded.catalog;
  const mcpServers = core.mcp.map((d) => d.name);
  const rules = approvalRulesFor(o.rules, ruleVocabulary(catalog.entries, mcpServers));
  // Whatever is still running when the session ends: the tool hosts (a close hook) and every tree.
  const supervisor = ProcessSupervisor.open({ stateDir, principal });
  opened.defer(() => supervisor.close());
  const db = openStore(join(stateDir, 'supervisor.db'));
  opened.defer(() => db.close());
  // Who answers a prompt no rule settles: the embedder's approver; without one, an operator in
  // another terminal (`supervisor approvals`) when the session may wait for it; otherwise a clear denial.
  const fallback: Approver =
    o.approver ??
    ((o.awaitApprovalMs ?? 0) > 0
      ? new StoreApprover({ db, waitMs: o.awaitApprovalMs!, ...(o.onPendingApproval ? { onPending: o.onPendingApproval } : {}) })
      : new NonInteractiveApprover());
  const sessions = new SessionStore(db);
  const localId = o.resume?.split('@')[0];
  const elsewhere = localId !== undefined && o.resumeElsewhere && !sessions.getSession({ principal }, localId) ? await o.resumeElsewhere(principal, o.resume!) : undefined;
  const session = elsewhere
    ? importElsewhere(elsewhere, { id: localId!, sessions, core, principal, runtime: o.runtime ?? core.agent.runtime, owner: supervisor.owner, ...(o.onNotice ? { onNotice: o.onNotice } : {}) })
    : startOrResume(o, { sessions, stateDir, core, principal, owner: supervisor.owner });
  // How the stored session ends: close(status), or failed when the open itself fails after this.
  let endStatus: SessionStatus = 'failed';
  opened.defer(() => sessions.endSession({ principal }, session.id, endStatus));
  // Background tasks end with the session that owns them: killed and marked interrupted.
  const tasks = new RuntimeTaskWorker({ supervisor, db });
  opened.defer(() => tasks.close());
  const broker = new ApprovalBroker({ approver: new RuleApprover(rules, fallback) });
  // One store for the session: MCP env secrets it resolves are redacted from every effect's views.
  const secrets = SecretStore.fromCore(core);
  // One manager for the session's whole life, shared with its delegated children: a turn whose
  // core changed discovers again through it, so servers whose declaration did not change keep
  // their connection, a changed one asks to connect again and replaces its server, and a removed
  // one closes. The session's MCP servers stop first at close (whole trees).
  const mcpHost = o.host?.mcp ?? new McpConnectionManager({ supervisor });
  opened.defer(() => (o.host ? mcpHost.releaseSession(session.id) : mcpHost.close()));
  /** Discovery before the model runs: gated per server by mcp.connect:<server> and its approval. */
  const discover = async (): Promise<DiscoveryResult | null> => {
    if (core.mcp.length === 0) {
      // None declared (any more): the session lets go of what it held; each closes unless shared.
      await mcpHost.releaseSession(session.id);
      return null;
    }
    const capabilities = identityInputFor({ core, principal }).capabilities;
    const found = await mcpHost.discover({ sessionId: session.id, principal, core, capabilities, broker, resolveEnv: mcpSecretResolver(secrets, capabilities) });
    catalog = buildCatalog({ core, principal, mcpTools: found.tools, connectPolicy: found.connectPolicy });
    // Rules naming a discovered server's tools are checked now that its tools are known.
    const connected = found.servers.filter((m) => m.state === 'connected').map((m) => m.server);
    try {
      checkDiscoveredToolRules(rules.all, ruleVocabulary(catalog.entries, mcpServers), connected);
    } catch (err) {
      throw new SessionError('RULE_INVALID', (err as Error).message);
    }
    return found;
  };
  let mcp = await discover();
  // delegate_task's children: scope, depth and budget worked out from this session's (issue 18).
  const deny = [...(o.rules?.deny ?? [])];
  const delegatorFor = (budget?: DelegationBudget): SessionDelegator =>
    new SessionDelegator(rootDelegationContext({ core, catalog, principal, sessionId: session.id, db, sessions, supervisor, mcpHost, secrets, tasks, fallback, deny, redact: (text: string): string => effects.redactor()(text), ...(budget ? { budget } : {}), ...(o.onChildSession ? { onChildSession: o.onChildSession } : {}) }));
  const history = o.otherMachines ? sharedHistory(db, o.otherMachines) : null;
  const effectsFor = (delegation: SessionDelegator): EffectRuntime =>
    new EffectRuntime({
      catalog,
      broker,
      supervisor,
      db,
      secrets,
      tasks,
      delegation,
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(o.onNotice ? { onNotice: o.onNotice } : {}),
      ...(history ? { history } : {}),
    });
  let delegation = delegatorFor();
  let effects: EffectRuntime = effectsFor(delegation);
  let droppedTools = droppedToolsOf(mcp, catalog);
  recordDroppedTools(db, session.id, effects, droppedTools);

  /**
   * The catalog is per turn (issue 19): before a local turn, a core changed on disk since it was
   * loaded (an evolve promotion or rollback, an operator's edit) is loaded again, and a new
   * catalog, EffectRuntime and delegator are resolved from it; approvals remembered for the old
   * revision are dropped, and MCP servers are discovered again (connect approval asked again)
   * only when a declaration changed. The budget carries over. A core that no longer loads fails
   * the turn with its issues (fail closed: nothing runs on a catalog nobody resolved).
   */
  let fingerprint = coreFingerprint(core);
  const refreshForTurn = async (): Promise<void> => {
    if (coreFingerprint(core) === fingerprint) return;
    const next = await loadSessionCore(o.core, principal);
    fingerprint = coreFingerprint(next.core);
    if (next.core.revision === core.revision) return;
    const before = { revision: core.revision, catalog: catalog.id };
    const mcpChanged = JSON.stringify(next.core.mcp) !== JSON.stringify(core.mcp);
    core = next.core;
    catalog = next.catalog;
    broker.cache.invalidate({ coreRevision: before.revision });
    if (mcpChanged) {
      mcp = await discover();
    } else if (mcp) {
      catalog = buildCatalog({ core, principal, mcpTools: mcp.tools, connectPolicy: mcp.connectPolicy });
    }
    await effects.durable();
    delegation = delegatorFor(delegation.budget);
    effects = effectsFor(delegation);
    droppedTools = droppedToolsOf(mcp, catalog);
    runtimeSession.core = core;
    runtimeSession.runtime = effects;
    appendEvent(db, session.id, 'catalog.resolved_again', { old_revision: before.revision, new_revision: core.revision, old_catalog: before.catalog, new_catalog: catalog.id, mcp_rediscovered: mcpChanged });
  };

  // What a runtime runs in.
  const runtimeSession: RuntimeSession = { core, runtime: effects, supervisor, db, sessions, secrets, sessionId: session.id, principal, stateDir, history: session.history, costPool: delegation.budget.costPool(), beforeTurn: refreshForTurn };
  let closing: Promise<void> | null = null;
  // runTurn's local runtime, prepared on first use; its provider (which may hold connections)
  // closes before everything the session owns.
  let local: Promise<PreparedRun> | null = null;
  const open = (what: string): void => {
    if (closing) throw new SessionError('SESSION_CLOSED', `session ${session.id} is closed; ${what} needs an open session`);
  };
  const prepareRun: Session['prepareRun'] = async (r = {}) => {
    open('prepareRun');
    const target = typeof r.runtime === 'object' ? r.runtime : runtimeFor(r.runtime ?? core.agent.runtime);
    return target.prepare(runtimeSession, { passThrough: r.passThrough ?? [] });
  };
  const noEvent = (): void => undefined;
  return {
    id: session.id,
    principal,
    stateDir,
    // The current turn's: a turn may resolve them again (refreshForTurn).
    get core() {
      return core;
    },
    get catalog() {
      return catalog;
    },
    get mcp() {
      return mcp;
    },
    get droppedTools() {
      return droppedTools;
    },
    secrets,
    supervisor,
    get effects() {
      return effects;
    },
    async callTool(name, args = {}, c = {}) {
      open('callTool');
      const req = effects.request(name, args);
      if (!req) throw new SessionError('UNKNOWN_TOOL', `no tool ${JSON.stringify(name)} in ${core.dir}'s catalog (tools: ${catalog.entries.map((e) => e.name).join(', ')})`);
      return effects.execute(req, {
        principal,
        sessionId: session.id,
        ...(c.signal ? { signal: c.signal } : {}),
        ...(c.deadlineMs !== undefined ? { deadlineMs: c.deadlineMs } : {}),
      });
    },
    async runTurn(prompt, t = {}) {
      open('runTurn');
      if (!local) {
        const preparing = prepareRun({ runtime: 'local' });
        local = preparing;
        opened.defer(async () => (await preparing.catch(() => null))?.close());
      }
      const prepared = await local;
      return prepared.turn!(prompt, {
        signal: t.signal ?? new AbortController().signal,
        onEvent: t.onEvent ?? noEvent,
        ...(t.deadlineMs !== undefined ? { deadlineMs: t.deadlineMs } : {}),
      });
    },
    async runSession(r = {}) {
      const prepared = await prepareRun(r);
      try {
        return await prepared.run({
          prompt: r.prompt ?? null,
          signal: r.signal ?? new AbortController().signal,
          onEvent: r.onEvent ?? noEvent,
          ...(r.deadlineMs !== undefined ? { deadlineMs: r.deadlineMs } : {}),
        });
      } finally {
        await prepared.close();
      }
    },
    prepareRun,
    spawnTree(s) {
      open('spawnTree');
      return supervisor.spawnTree(s);
    },
    close(status = 'completed') {
      if (!closing) {
        endStatus = status;
        closing = opened.unwind();
      }
      return closing;
    },
  };
}

/**
 * The stored session this open continues: with `o.resume`, the same principal's ended session of
 * this core and its history (model views, stored redacted); otherwise a new one. Another
 * principal's session reads as missing.
 */
function startOrResume(
  o: OpenSessionOptions,
  c: { sessions: SessionStore; stateDir: string; core: CoreSnapshot; principal: string; owner: SessionOwner },
): { id: string; history: unknown[] } {
  const { sessions, core, principal } = c;
  if (o.resume === undefined) {
    const created = sessions.createSession({ principal }, { coreDir: core.dir, coreRevision: core.revision, runtime: o.runtime ?? core.agent.runtime, owner: c.owner });
    return { id: created.id, history: [] };
  }
  // A copy's control-plane id (`local@member`) names the local session it copies.
  const id = o.resume.split('@')[0]!;
  const prior = sessions.getSession({ principal }, id);
  if (!prior) {
    throw new SessionError(
      'RESUME_REFUSED',
      o.resumeElsewhere
        ? `no session ${o.resume} of yours in ${c.stateDir} or on the control plane (supervisor sessions --store lists them)`
        : `no session ${o.resume} of yours in ${c.stateDir} (supervisor sessions lists them)`,
    );
  }
  if (prior.coreDir !== core.dir) throw new SessionError('RESUME_REFUSED', `session ${id} ran the core ${prior.coreDir}, not ${core.dir}; resume it with that core`);
  if (prior.status === 'running') {
    throw new SessionError('RESUME_REFUSED', `session ${id} is running already (another run holds it; if that run died, its session is marked interrupted at the next start or by supervisor reconcile)`);
  }
  const resumed = sessions.resumeSession({ principal }, id, { coreRevision: core.revision, owner: c.owner });
  return { id: resumed.id, history: sessions.listMessages({ principal }, resumed.id, { limit: 10_000 }).map((m) => m.content) };
}

/** MCP tools a server offered and the catalog left out, with their reasons (from the server: bounded). */
function droppedToolsOf(mcp: DiscoveryResult | null, catalog: ResolvedEffectCatalog): DroppedTool[] {
  return [
    ...(mcp?.servers ?? []).flatMap((m) => m.dropped.map((d) => ({ server: m.server, tool: mcpToolName(m.server, d.tool), reason: d.reason }))),
    ...catalog.droppedMcpTools.map((d) => ({ server: d.server, tool: d.name, reason: d.reason })),
  ].map((d) => ({ server: d.server.slice(0, 200), tool: d.tool.slice(0, 200), reason: d.reason.slice(0, 2000) }));
}

/** What was left out is part of the session's record, whatever the command (run, serve), redacted. */
function recordDroppedTools(db: Database, sessionId: string, effects: EffectRuntime, dropped: readonly DroppedTool[]): void {
  if (dropped.length === 0) return;
  const redact = effects.redactor();
  appendEvents(db, sessionId, dropped.map((d) => ({ kind: 'catalog.tool_dropped', payload: redactDeep({ ...d }, redact) })));
}
