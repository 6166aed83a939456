// What `run` and `call` share: load the core, resolve this turn's catalog, open the process layer
// and the store, start a session, and pick the approver (rules first, then a terminal or nobody).
import { userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { attachAuthoredTools } from '../adapters/authored/index.js';
import { buildCatalog, type ResolvedEffectCatalog } from '../catalog/index.js';
import { CoreLoadError, loadCore, type CoreSnapshot } from '../core/index.js';
import { EffectRuntime } from '../effects/index.js';
import { ProcessSupervisor } from '../process/index.js';
import { ApprovalBroker, ApprovalRules, NonInteractiveApprover, RuleApprover, TerminalApprover, type Approver } from '../policy/index.js';
import { openStore, SessionStore, type Database } from '../store/index.js';
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
}

export interface CoreSession {
  core: CoreSnapshot;
  catalog: ResolvedEffectCatalog;
  supervisor: ProcessSupervisor;
  db: Database;
  runtime: EffectRuntime;
  sessions: SessionStore;
  tasks: RuntimeTaskWorker;
  sessionId: string;
  principal: string;
  close(status: 'completed' | 'failed' | 'cancelled'): Promise<void>;
}

export function localPrincipal(): string {
  return `local:${userInfo().username}`;
}

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
  return { core, catalog: buildCatalog({ core, principal }), principal };
}

export async function openCoreSession(o: CoreSessionOptions, command: string): Promise<CoreSession> {
  let rules: ApprovalRules;
  try {
    rules = ApprovalRules.parse({ approve: o.approve, deny: o.deny });
  } catch (err) {
    throw new UsageError(`--approve/--deny: ${(err as Error).message}`);
  }
  const { core, catalog, principal } = await loadCoreForCli(o.coreDir, command);
  const fallback: Approver =
    o.interactive && process.stdin.isTTY ? new TerminalApprover({ input: process.stdin, output: process.stderr }) : new NonInteractiveApprover();
  const supervisor = ProcessSupervisor.open({ stateDir: o.stateDir });
  // The authored adapter runs this core's tools on warm hosts owned by this supervisor.
  const authored = attachAuthoredTools(supervisor, core);
  const db = openStore(join(o.stateDir, 'supervisor.db'));
  const sessions = new SessionStore(db);
  // Tasks of a supervisor that died are interrupted (ProcessSupervisor.open killed their trees).
  RuntimeTaskWorker.recover(db);
  const tasks = new RuntimeTaskWorker({ supervisor, db });
  const session = sessions.createSession({ principal }, { coreDir: core.dir, coreRevision: core.revision, runtime: o.runtime ?? core.agent.runtime });
  const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: new RuleApprover(rules, fallback) }), supervisor, db, tasks });
  return {
    core,
    catalog,
    supervisor,
    db,
    runtime,
    sessions,
    tasks,
    sessionId: session.id,
    principal,
    async close(status) {
      try {
        // Background tasks end with the run that owns them: killed and marked interrupted.
        await tasks.close();
        sessions.endSession({ principal }, session.id, status);
      } finally {
        db.close();
        await authored.close();
        await supervisor.close();
      }
    },
  };
}
