// The effect pipeline for a benchmark: a temporary core, a supervisor and store of its own, the
// catalog, an EffectRuntime and one session, closed and removed by close().
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCatalog } from '../src/catalog/index.js';
import { loadCore, type CoreSnapshot } from '../src/core/index.js';
import { EffectRuntime } from '../src/effects/index.js';
import { ProcessSupervisor } from '../src/process/index.js';
import { ApprovalBroker, ApprovalRules, NonInteractiveApprover, RuleApprover } from '../src/policy/index.js';
import { openStore, SessionStore, type Database } from '../src/store/index.js';
import { RuntimeTaskWorker } from '../src/tasks/index.js';

export interface BenchPipeline {
  core: CoreSnapshot;
  coreDir: string;
  sup: ProcessSupervisor;
  db: Database;
  runtime: EffectRuntime;
  worker: RuntimeTaskWorker | null;
  /** The effect context of the session opened for the run. */
  ectx: { principal: string; sessionId: string };
  /** Another session of the same principal and core. */
  newSession(): string;
  close(): Promise<void>;
}

export async function openBenchPipeline(name: string, agentYaml: string, o: { approve?: string[]; tasks?: boolean } = {}): Promise<BenchPipeline> {
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const coreDir = join(dir, 'core');
  mkdirSync(coreDir);
  writeFileSync(join(coreDir, 'agent.yaml'), agentYaml);
  const state = join(dir, 'state');
  const sup = ProcessSupervisor.open({ stateDir: state });
  const db = openStore(join(state, 'supervisor.db'));
  const worker = o.tasks ? new RuntimeTaskWorker({ supervisor: sup, db }) : null;
  const close = async (): Promise<void> => {
    await worker?.close();
    db.close();
    await sup.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const core = await loadCore(coreDir);
    const catalog = buildCatalog({ core, principal: 'bench' });
    const approver = o.approve ? new RuleApprover(ApprovalRules.parse({ approve: o.approve }), new NonInteractiveApprover()) : new NonInteractiveApprover();
    const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver }), supervisor: sup, db, ...(worker ? { tasks: worker } : {}) });
    const newSession = (): string => new SessionStore(db).createSession({ principal: 'bench' }, { coreDir, coreRevision: core.revision, runtime: 'local' }).id;
    return { core, coreDir, sup, db, runtime, worker, ectx: { principal: 'bench', sessionId: newSession() }, newSession, close };
  } catch (err) {
    await close();
    throw err;
  }
}
