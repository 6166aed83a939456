// Shared by the EffectRuntime tests: one supervisor and one store per suite, and a runtime over a
// fresh temporary core with a session already started.
import { after, before } from 'node:test';
import { join } from 'node:path';
import { loadCore } from '../../src/core/index.js';
import { buildCatalog } from '../../src/catalog/index.js';
import { EffectRuntime, type EffectRuntimeOptions } from '../../src/effects/index.js';
import { ProcessSupervisor } from '../../src/process/index.js';
import { ApprovalBroker, type Approver } from '../../src/policy/index.js';
import { openStore, SessionStore, type Database } from '../../src/store/index.js';
import { RuntimeTaskWorker } from '../../src/tasks/index.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { tempDir } from '../helpers/procs.js';

/** Call inside a describe(): registers before/after hooks and returns a runtime factory. */
export function runtimeSuite() {
  const state = tempDir();
  let sup: ProcessSupervisor;
  let db: Database;
  const workers: RuntimeTaskWorker[] = [];
  before(() => {
    sup = ProcessSupervisor.open({ stateDir: state.path });
    db = openStore(join(state.path, 'supervisor.db'));
  });
  after(async () => {
    for (const w of workers.splice(0)) await w.close();
    db.close();
    await sup.close();
    state.remove();
    removeTempCores();
  });
  return {
    db: (): Database => db,
    supervisor: () => sup,
    /** A task worker on the suite's supervisor and store, closed after the suite. */
    taskWorker(): RuntimeTaskWorker {
      const w = new RuntimeTaskWorker({ supervisor: sup, db, pollMs: 50 });
      workers.push(w);
      return w;
    },
    /** `options`: further runtime options (onNotice, a sandboxAvailability seam). */
    async runtime(opts: { files: Record<string, string>; approver: Approver; principal: string; tasks?: RuntimeTaskWorker; options?: Partial<EffectRuntimeOptions>; workspace?: string }) {
      const dir = makeCore(opts.files);
      const core = await loadCore(dir, opts.workspace !== undefined ? { workspace: opts.workspace } : {});
      const catalog = buildCatalog({ core, principal: opts.principal });
      const runtime = new EffectRuntime({ catalog, broker: new ApprovalBroker({ approver: opts.approver }), supervisor: sup, db, ...(opts.tasks ? { tasks: opts.tasks } : {}), ...opts.options });
      const session = new SessionStore(db).createSession({ principal: opts.principal }, { coreDir: dir, coreRevision: core.revision, runtime: 'local' });
      return { dir, core, catalog, runtime, ctx: { principal: opts.principal, sessionId: session.id } };
    },
  };
}
