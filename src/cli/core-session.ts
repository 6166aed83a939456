// What `run` and `call` share: load the core, resolve this turn's catalog, open the process layer
// and the store, start a session, and pick the approver (rules first, then a terminal or nobody).
import { join, resolve } from 'node:path';
import { McpConnectionManager, mcpToolName, type DiscoveryResult, type McpEnvResolver } from '../adapters/mcp/index.js';
import { buildCatalog, CatalogBuildError, identityInputFor, type ResolvedEffectCatalog } from '../catalog/index.js';
import { CoreLoadError, loadCore, type CoreSnapshot } from '../core/index.js';
import { EffectRuntime, redactDeep } from '../effects/index.js';
import { ProcessSupervisor } from '../process/index.js';
import { ApprovalBroker, ApprovalRules, checkDiscoveredToolRules, NonInteractiveApprover, ruleVocabulary, type RuleVocabulary, RuleApprover, StoreApprover, TerminalApprover, type Approver, type CapabilitySnapshot } from '../policy/index.js';
import { exactSecretGrants, SecretStore } from '../secrets/index.js';
import { appendEvents, openStore, SessionStore, type Database } from '../store/index.js';
import { RuntimeTaskWorker } from '../tasks/index.js';
import { UsageError } from './usage.js';

export interface CoreSessionOptions {
  coreDir: string;
  stateDir: string;
  approve: string[];
  deny: string[];
  /** Ask on the terminal for `prompt` decisions no rule settles (only when stdin is a TTY). */
  interactive: boolean;
  runtime?: string;
  /** Continue this ended session of the same principal and core instead of starting one. */
  resume?: string;
  /** Without a terminal: how long a prompt waits for `supervisor approvals` from another terminal (0: deny at once). */
  awaitApprovalMs?: number;
  /** Told when a prompt starts waiting for another terminal's answer. */
  onPendingApproval?: (id: string, request: { toolName: string; actionSummary: string }) => void;
  /** Progress of running effects (MCP notifications/progress), for the operator's display. */
  onProgress?: (p: { callId: string; tool: string; progress: number; total?: number; message?: string }) => void;
  /** Once-per-run notices of the runtime (auto-approval by class is off: no sandbox here). */
  onNotice?: (text: string) => void;
}

export interface DroppedTool {
  server: string;
  /** The name it would have had in the catalog (`<server>_<tool>`). */
  tool: string;
  reason: string;
}

export interface CoreSession {
  core: CoreSnapshot;
  catalog: ResolvedEffectCatalog;
  supervisor: ProcessSupervisor;
  db: Database;
  runtime: EffectRuntime;
  sessions: SessionStore;
  tasks: RuntimeTaskWorker;
  /** The conversation so far when resuming (model views, as stored); empty for a new session. */
  history: unknown[];
  /** The session's one secret store: the runtime redacts every value it has resolved. */
  secrets: SecretStore;
  sessionId: string;
  principal: string;
  /** What MCP discovery found for this session's catalog (per server: connected, denied, failed). */
  mcp: DiscoveryResult | null;
  /**
   * MCP tools left out of the catalog, each with its reason: a schema that cannot be compiled
   * (discovery) or a name another tool already has (the catalog). Each is a `catalog.tool_dropped`
   * event in the session's chain; the command shows them too.
   */
  droppedTools: readonly DroppedTool[];
  close(status: 'completed' | 'failed' | 'cancelled'): Promise<void>;
}

/**
 * Resolves an MCP declaration's { secret: NAME } env entries for the MCP host, after its connect
 * approval: the exact grant secret:NAME is required (no wildcard grants a secret), then the value
 * is read from the store (which remembers it, so every view of the session redacts it).
 */
export function mcpSecretResolver(store: SecretStore, capabilities: CapabilitySnapshot): McpEnvResolver {
  const granted = exactSecretGrants(capabilities.grants);
  return async (_server, secret) => {
    if (!granted(`secret:${secret}`)) throw new Error(`secret ${secret} is not granted; add the exact grant 'secret:${secret}' (wildcards never grant a secret)`);
    const value = await store.resolve(secret);
    const bytes = value.bytes();
    try {
      return bytes.toString('utf8');
    } finally {
      bytes.fill(0);
      value.wipe();
    }
  };
}

import { localPrincipal } from './principal.js';

export { localPrincipal };

/** Loads and resolves a core, turning a load error into a usage-style message naming the files. */
export async function loadCoreForCli(dir: string | undefined, command: string): Promise<{ core: CoreSnapshot; catalog: ResolvedEffectCatalog; principal: string }> {
  if (!dir) throw new UsageError(`${command} needs a core directory: supervisor ${command} <core>`);
  let core: CoreSnapshot;
  try {
    core = await loadCore(resolve(dir));
  } catch (err) {
    if (err instanceof CoreLoadError) throw new UsageError(err.message);
    throw err;
  }
  const principal = localPrincipal();
  try {
    return { core, catalog: buildCatalog({ core, principal }), principal };
  } catch (err) {
    // A collision, an override of no tool, an approval rule that can never apply: the core's error.
    if (err instanceof CatalogBuildError) throw new UsageError(`core ${core.dir}: ${err.message}`);
    throw err;
  }
}

/** The run's --approve/--deny rules; a usage error (exit 2) names the rule and the fix. */
function approvalRulesFor(o: Pick<CoreSessionOptions, 'approve' | 'deny'>, vocabulary: RuleVocabulary): ApprovalRules {
  try {
    return ApprovalRules.parse({ approve: o.approve, deny: o.deny }, vocabulary);
  } catch (err) {
    throw new UsageError(`--approve/--deny: ${(err as Error).message}`);
  }
}

export async function openCoreSession(o: CoreSessionOptions, command: string): Promise<CoreSession> {
  // Each rule is checked against what this core's catalog holds: a rule that can never match is a
  // typo, and in --deny a typo fails open.
  const loaded = await loadCoreForCli(o.coreDir, command);
  const { core, principal } = loaded;
  let catalog = loaded.catalog;
  const mcpServers = core.mcp.map((d) => d.name);
  const rules = approvalRulesFor(o, ruleVocabulary(catalog.entries, mcpServers));
  const supervisor = ProcessSupervisor.open({ stateDir: o.stateDir });
  const db = openStore(join(o.stateDir, 'supervisor.db'));
  // Who answers a prompt no rule settles: the terminal inline; without one, an operator in another
  // terminal (`supervisor approvals`) when the run may wait for it; otherwise a clear denial.
  const fallback: Approver =
    o.interactive && process.stdin.isTTY
      ? new TerminalApprover({ input: process.stdin, output: process.stderr })
      : (o.awaitApprovalMs ?? 0) > 0
        ? new StoreApprover({ db, waitMs: o.awaitApprovalMs!, ...(o.onPendingApproval ? { onPending: o.onPendingApproval } : {}) })
        : new NonInteractiveApprover();
  const sessions = new SessionStore(db);
  const tasks = new RuntimeTaskWorker({ supervisor, db });
  let session: { id: string };
  let history: unknown[] = [];
  if (o.resume !== undefined) {
    // Resume: the same principal's ended session of this core; its history (model views, stored
    // redacted) continues the conversation. Another principal's session reads as missing.
    const prior = sessions.getSession({ principal }, o.resume);
    const refuse = async (why: string): Promise<never> => {
      await tasks.close();
      db.close();
      await supervisor.close();
      throw new UsageError(why);
    };
    if (!prior) await refuse(`--resume: no session ${o.resume} of yours in ${o.stateDir} (supervisor sessions lists them)`);
    if (prior!.coreDir !== core.dir) await refuse(`--resume: session ${o.resume} ran the core ${prior!.coreDir}, not ${core.dir}; resume it with that core`);
    if (prior!.status === 'running') await refuse(`--resume: session ${o.resume} is running already (another run holds it; if that run died, its session is marked interrupted at the next start or by supervisor reconcile)`);
    session = sessions.resumeSession({ principal }, o.resume, { coreRevision: core.revision, owner: supervisor.owner });
    history = sessions.listMessages({ principal }, session.id, { limit: 10_000 }).map((m) => m.content);
  } else {
    session = sessions.createSession({ principal }, { coreDir: core.dir, coreRevision: core.revision, runtime: o.runtime ?? core.agent.runtime, owner: supervisor.owner });
  }
  const broker = new ApprovalBroker({ approver: new RuleApprover(rules, fallback) });
  // One store for the session: MCP env secrets it resolves are redacted from every effect's views.
  const secrets = SecretStore.fromCore(core);
  const mcpHost = new McpConnectionManager({ supervisor });
  let mcp: DiscoveryResult | null = null;
  try {
    if (core.mcp.length > 0) {
      // Discovery before the model runs: gated per server by mcp.connect:<server> and its approval.
      const capabilities = identityInputFor({ core, principal }).capabilities;
      mcp = await mcpHost.discover({ sessionId: session.id, principal, core, capabilities, broker, resolveEnv: mcpSecretResolver(secrets, capabilities) });
      catalog = buildCatalog({ core, principal, mcpTools: mcp.tools, connectPolicy: mcp.connectPolicy });
      // Rules naming a discovered server's tools are checked now that its tools are known.
      const connected = mcp.servers.filter((m) => m.state === 'connected').map((m) => m.server);
      try {
        checkDiscoveredToolRules(rules.all, ruleVocabulary(catalog.entries, mcpServers), connected);
      } catch (err) {
        throw new UsageError(`--approve/--deny: ${(err as Error).message}`);
      }
    }
  } catch (err) {
    await mcpHost.close();
    await tasks.close();
    sessions.endSession({ principal }, session.id, 'failed');
    db.close();
    await supervisor.close();
    throw err;
  }
  const runtime = new EffectRuntime({ catalog, broker, supervisor, db, secrets, tasks, ...(o.onProgress ? { onProgress: o.onProgress } : {}), ...(o.onNotice ? { onNotice: o.onNotice } : {}) });
  // What a server offered and the catalog left out is part of the session's record, whatever the
  // command (run, serve): the names and reasons come from the server, so they are bounded and redacted.
  const droppedTools: DroppedTool[] = [
    ...(mcp?.servers ?? []).flatMap((m) => m.dropped.map((d) => ({ server: m.server, tool: mcpToolName(m.server, d.tool), reason: d.reason }))),
    ...catalog.droppedMcpTools.map((d) => ({ server: d.server, tool: d.name, reason: d.reason })),
  ].map((d) => ({ server: d.server.slice(0, 200), tool: d.tool.slice(0, 200), reason: d.reason.slice(0, 2000) }));
  if (droppedTools.length > 0) {
    const redact = runtime.redactor();
    appendEvents(db, session.id, droppedTools.map((d) => ({ kind: 'catalog.tool_dropped', payload: redactDeep({ ...d }, redact) })));
  }
  return {
    core,
    catalog,
    supervisor,
    db,
    runtime,
    sessions,
    tasks,
    secrets,
    history,
    sessionId: session.id,
    principal,
    mcp,
    droppedTools,
    async close(status) {
      try {
        // Background tasks end with the run that owns them: killed and marked interrupted.
        await tasks.close();
        sessions.endSession({ principal }, session.id, status);
      } finally {
        db.close();
        // The session's MCP servers first (whole trees), then the tool hosts (a close hook) and whatever else is still running.
        await mcpHost.close();
        await supervisor.close();
      }
    },
  };
}
