// evolve_core (issue 19): one action on an evolve run, through the eight steps like any effect.
// The action and its target are the approval key's action (so approving promote of run A never
// approves discard of A or promote of B), and promote's target is the hash of what the review
// showed (candidate tree + security diff): a run changed after review cannot use that approval.
// Step 4 reads only the store; git runs at step 7.
import { createHash } from 'node:crypto';
import { discardRun, EvolveError, promoteRun, reviewRun, rollbackRun, startRun, type Edit, type Editor, type EvolveRun } from '../../evolve/evolver.js';
import { sandboxAvailability } from '../../process/index.js';
import { securitySummary } from '../../evolve/security-diff.js';
import type { TaskRecord } from '../../store/index.js';
import { AdapterCheckError, AdapterUnavailableError, type AdapterEnv, type EffectAdapter, type InvokeEnv, type Preflight } from '../adapter-types.js';

type Action = 'start' | 'review' | 'promote' | 'rollback' | 'discard';
interface Args {
  action: Action;
  run?: string;
  edits?: Edit[];
  /** start: a child agent makes the edits instead of an edit list. */
  agent?: string;
  task?: string;
}

function worker(env: AdapterEnv) {
  if (!env.tasks) throw new AdapterUnavailableError('evolve_core runs need a task worker, and this runtime has none');
  return env.tasks;
}

/** The caller's own evolve run (another principal's id reads as missing), as its task holds it. */
function runOf(env: AdapterEnv, id: string | undefined): { task: TaskRecord; run: EvolveRun } {
  if (!id) throw new AdapterCheckError('this action needs run: the task id evolve_core start returned');
  const task = worker(env).get(env.owner, id);
  const run = task?.kind === 'evolver.run' ? (task.metadata as unknown as EvolveRun | null) : null;
  if (!task || !run || typeof run.review_hash !== 'string') throw new AdapterCheckError(`no evolve run ${JSON.stringify(id)} of yours; evolve_core start returns one`);
  return { task, run };
}

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v), 'utf8').digest('hex');

export const evolveCoreAdapter: EffectAdapter = {
  preflight(_e, raw, env) {
    const args = raw as Args;
    switch (args.action) {
      case 'start': {
        if (args.agent !== undefined || args.task !== undefined) return startByChild(env, args);
        if (!args.edits || args.edits.length === 0) throw new AdapterCheckError('start needs edits: [{ path, content }] (content null deletes), or agent and task (a child agent edits)');
        worker(env);
        const paths = args.edits.map((e) => e.path);
        return {
          checks: [],
          action: { kind: 'evolve.start', target: { core: env.core.dir, edits: digest(args.edits) } },
          summary: `evolve ${env.core.dir}: edit ${paths.slice(0, 10).join(', ')}${paths.length > 10 ? ` and ${paths.length - 10} more` : ''} in a new worktree`,
          audit: { action: 'start', paths },
          background: true,
        };
      }
      case 'review': {
        const { run } = runOf(env, args.run);
        return { checks: [], action: { kind: 'evolve.review', target: { run: run.id } }, summary: `review evolve run ${run.id}`, audit: { action: 'review', run: run.id } };
      }
      case 'promote': {
        const { run } = runOf(env, args.run);
        if (run.status !== 'ready') throw new AdapterCheckError(`run ${run.id} is ${run.status}; only a ready run (gates passed) can be promoted`);
        const security = run.security ? securitySummary(run.security) : 'none';
        return {
          // Promotion changes the live core: the operator confirms it, security diff in view.
          checks: [{ check: 'evolve.promote', classification: run.security?.empty ? 'core-change' : 'authority-change', minimum: 'prompt', reason: 'promotion changes the live core' }],
          action: { kind: 'evolve.promote', target: { run: run.id, review_hash: run.review_hash } },
          summary: `promote evolve run ${run.id} into ${run.ref} (${run.files.length} file(s): ${run.files.slice(0, 10).map((f) => `${f.change} ${f.path}`).join(', ')}); security diff: ${security}`,
          audit: { action: 'promote', run: run.id, review_hash: run.review_hash, base: run.base, candidate: run.candidate },
        };
      }
      case 'rollback': {
        const { run } = runOf(env, args.run);
        if (run.status !== 'promoted') throw new AdapterCheckError(`run ${run.id} is ${run.status}; only a promoted run can be rolled back`);
        return {
          checks: [{ check: 'evolve.rollback', classification: 'core-change', minimum: 'prompt', reason: 'a rollback changes the live core' }],
          action: { kind: 'evolve.rollback', target: { run: run.id, from: run.candidate, to: run.base } },
          summary: `roll back evolve run ${run.id}: ${run.ref} ${run.candidate.slice(0, 12)} → ${run.base.slice(0, 12)}`,
          audit: { action: 'rollback', run: run.id, from: run.candidate, to: run.base },
        };
      }
      case 'discard': {
        const { run } = runOf(env, args.run);
        return {
          checks: [{ check: 'evolve.discard', classification: 'core-run', minimum: 'prompt', reason: 'discarding removes the run\'s worktree' }],
          action: { kind: 'evolve.discard', target: { run: run.id } },
          summary: `discard evolve run ${run.id} (its branch is kept under refs/evolve-archive/${run.id})`,
          audit: { action: 'discard', run: run.id },
        };
      }
      default:
        throw new AdapterCheckError(`unknown action ${JSON.stringify(args.action)}; use start, review, promote, rollback or discard`);
    }
  },

  async invoke(_e, raw, env) {
    const args = raw as Args;
    try {
      switch (args.action) {
        case 'start':
          return await start(env, args.agent !== undefined ? { editor: childEditor(env, args.agent, args.task ?? '') } : { edits: args.edits ?? [] });
        case 'review': {
          const { run } = runOf(env, args.run);
          const r = await reviewRun(run);
          const view = { run: run.id, status: run.status, files: run.files, gates: run.gates, security: run.security, review_hash: run.review_hash, changed_since_start: r.changed_since_start, patch: r.patch, patch_truncated: r.truncated };
          return { text: JSON.stringify(view, null, 2), isError: false, detail: { run: run.id, review_hash: run.review_hash, changed_since_start: r.changed_since_start } };
        }
        case 'promote': {
          const { task, run } = runOf(env, args.run);
          const moved = await promoteRun(run, run.review_hash);
          worker(env).store.setMetadata(task.id, { ...run, status: 'promoted', promoted: { ...moved, at: Date.now() } });
          // Authority granted for the old revision of this core is gone with it.
          const dropped = env.authority?.coreChanged() ?? 0;
          return { text: JSON.stringify({ run: run.id, promoted: true, ref: run.ref, old: moved.old, new: moved.new }), isError: false, detail: { run: run.id, ref: run.ref, old: moved.old, new: moved.new, approvals_dropped: dropped } };
        }
        case 'rollback': {
          const { task, run } = runOf(env, args.run);
          const moved = await rollbackRun(run);
          worker(env).store.setMetadata(task.id, { ...run, status: 'rolled_back', rolled_back: { ...moved, at: Date.now() } });
          const dropped = env.authority?.coreChanged() ?? 0;
          return { text: JSON.stringify({ run: run.id, rolled_back: true, ref: run.ref, old: moved.old, new: moved.new }), isError: false, detail: { run: run.id, ref: run.ref, old: moved.old, new: moved.new, approvals_dropped: dropped } };
        }
        case 'discard': {
          const { task, run } = runOf(env, args.run);
          const { archived } = await discardRun(run);
          worker(env).store.setMetadata(task.id, { ...run, status: 'discarded', archived });
          return { text: JSON.stringify({ run: run.id, discarded: true, archived }), isError: false, detail: { run: run.id, archived } };
        }
      }
    } catch (err) {
      if (err instanceof EvolveError) return { text: `[${err.code}] ${err.message}`, isError: true, detail: { code: err.code } };
      throw err;
    }
    throw new AdapterCheckError('unknown action');
  },
};

/**
 * start with a child agent: the same checks delegate_task makes (the definition exists, the depth
 * allows it, and the caller holds agent.spawn), and the sandbox the child's writes are held by:
 * without one, no child may edit (fail closed), and the run is not started.
 */
function startByChild(env: AdapterEnv, args: Args): Preflight {
  if (args.edits !== undefined) throw new AdapterCheckError('start takes edits or agent and task, not both');
  if (!args.agent || !args.task) throw new AdapterCheckError('start with a child agent needs both agent (a definition in agent/agents/) and task (what it should change)');
  worker(env);
  if (!env.delegation) throw new AdapterUnavailableError('a child agent needs the session layer (a session opened with openSession); this runtime has none');
  env.delegation.check(args.agent);
  const tier = sandboxAvailability();
  if (!tier.usable) throw new AdapterCheckError(`a child agent edits a run only inside the OS sandbox (the worktree writable, nothing else), and none works on this machine: ${tier.reason}; pass edits instead, or make the sandbox work (supervisor doctor)`);
  return {
    checks: [],
    action: { kind: 'evolve.start', target: { core: env.core.dir, agent: args.agent, task: digest(args.task) } },
    summary: `evolve ${env.core.dir}: child agent ${args.agent} edits a new worktree, sandboxed: ${args.task.length > 200 ? `${args.task.slice(0, 200)}…` : args.task}`,
    audit: { action: 'start', agent: args.agent, task_chars: args.task.length },
    // Starting a child is agent.spawn's authority, whatever tool asks for it.
    requires: ['agent.spawn'],
    background: true,
  };
}

/** The run's editor: a delegated child whose workspace is the candidate folder (DelegationRequest.editScope). */
function childEditor(env: InvokeEnv, agent: string, task: string): Editor {
  return {
    describe: `child agent ${agent}`,
    async edit(candidateDir) {
      if (!env.delegation) throw new AdapterCheckError('a child agent needs the session layer');
      const r = await env.delegation.run({ agent, task, editScope: candidateDir }, env.signal, env.deadlineMs);
      const child = typeof r.detail.child_session === 'string' ? r.detail.child_session : null;
      return { ok: r.status === 'completed', detail: `child agent ${agent} ${r.status}: ${r.answer.slice(0, 2_000)}`, child_session: child };
    },
  };
}

/** start: the run is an evolver.run task of this session; the call waits for its worktree, commit and gates. */
async function start(env: InvokeEnv, by: { edits: readonly Edit[] } | { editor: Editor }) {
  const tasks = worker(env);
  const what = 'editor' in by ? by.editor.describe : `${by.edits.length} edit(s)`;
  const { task, ended } = tasks.startInProcess(
    env.owner,
    { kind: 'evolver.run', sessionId: env.owner.sessionId, sourceTool: 'evolve_core', summary: `evolve ${env.core.dir}: ${what}`, metadata: 'editor' in by ? { editor: by.editor.describe } : { edits: by.edits.map((e) => e.path) } },
    async (t) => {
      const run = await startRun({ live: env.core as never, runId: t.id, stateDir: env.supervisor.stateDir, principal: env.owner.principal, ...by, supervisor: env.supervisor });
      return { status: 'completed', reason: `run ${run.status}`, logTail: '', childSessionId: null, metadata: run as unknown as Record<string, unknown> };
    },
  );
  const done = await ended;
  const run = done.metadata as unknown as EvolveRun | null;
  if (done.status !== 'completed' || !run || typeof run.review_hash !== 'string') {
    return { text: `[EVOLVE_FAILED] ${done.reason}`, isError: true, detail: { run: task.id, reason: done.reason } };
  }
  const view = { run: run.id, status: run.status, files: run.files, gates: run.gates, security: run.security ? securitySummary(run.security) : null, review_hash: run.review_hash };
  return { text: JSON.stringify(view, null, 2), isError: run.status !== 'ready', detail: { run: run.id, status: run.status, branch: run.branch, base: run.base, candidate: run.candidate } };
}
