// `supervisor evolve`: the operator's side of evolve runs (issue 19). The operator reviews a run
// and promotes it bound to the hash the review showed (--expect), as the tool's approval is; the
// promotion or discard is recorded in the run's session chain. Principal-scoped: another
// principal's run id reads as missing.
import { discardRun, EvolveError, promoteRun, reviewRun, rollbackRun, type EvolveRun } from '../evolve/evolver.js';
import { securitySummary } from '../evolve/security-diff.js';
import { displayJson, displayText } from '../redaction/index.js';
import { appendEvent, TaskStore, type TaskRecord } from '../store/index.js';
import { parseFlags } from './flags.js';
import { cliIo } from './io.js';
import { openForOperator } from './operator.js';
import { UsageError } from './usage.js';

export const EVOLVE_HELP = `Usage: supervisor evolve list [--json] [--state-dir DIR]
       supervisor evolve review <run> [--json] [--state-dir DIR]
       supervisor evolve promote <run> --expect HASH [--json] [--state-dir DIR]
       supervisor evolve rollback <run> [--json] [--state-dir DIR]
       supervisor evolve discard <run> [--json] [--state-dir DIR]

The evolve runs your agents started with evolve_core (docs/evolve.md): each edits a candidate of
its core in its own Git worktree. review shows the files, the gates, the security diff and the
patch, and the review hash; promote moves the core's branch to the candidate only if it is still
what that review showed (--expect the hash), the gates passed and nothing moved the branch since
(a compare-and-swap); rollback moves it back to the run's base the same way, only if nothing
moved it since; discard keeps the run's branch under refs/evolve-archive/<run> and removes its
worktree. Each is recorded in the run's session chain.

Exit status: 0 done, 1 refused (the reason says why; nothing changed), 2 usage error.
`;

interface Found {
  task: TaskRecord;
  run: EvolveRun;
}

function runsOf(store: TaskStore, principal: string): Found[] {
  return store
    .list({ principal }, { limit: 1000 })
    .filter((t) => t.kind === 'evolver.run' && typeof (t.metadata as { review_hash?: unknown } | null)?.review_hash === 'string')
    .map((task) => ({ task, run: task.metadata as unknown as EvolveRun }));
}

function findRun(store: TaskStore, principal: string, id: string | undefined, verb: string): Found {
  if (!id) throw new UsageError(`evolve ${verb} needs a run id; supervisor evolve list shows them`);
  const found = runsOf(store, principal).find((f) => f.run.id === id);
  if (!found) throw new UsageError(`no evolve run ${displayText(JSON.stringify(id))} of yours; supervisor evolve list shows them`);
  return found;
}

const gatesLine = (r: EvolveRun): string => r.gates.map((g) => `${g.gate} ${g.ok ? 'ok' : 'FAILED'}`).join(', ');

export async function runEvolve(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['state-dir', 'expect'], multi: [] }, 'evolve');
  if (f.help) return void cliIo().stdout.write(EVOLVE_HELP), 0;
  const [verb, id, ...extra] = f.positionals;
  if (extra.length > 0) throw new UsageError(`evolve ${verb}: one run id at most; see supervisor evolve --help`);
  if (verb !== 'promote' && f.value.has('expect')) throw new UsageError('--expect goes with promote: it binds the promotion to the review you read');
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  const store = new TaskStore(db);
  const out = cliIo().stdout;
  const json = f.bool.has('json');
  try {
    switch (verb) {
      case undefined:
      case 'list': {
        if (id !== undefined) throw new UsageError('evolve list takes no run id; supervisor evolve review <run> shows one');
        const runs = runsOf(store, principal).map((x) => x.run);
        if (json) out.write(`${displayJson({ runs: runs.map(({ security: _s, ...r }) => r) })}\n`);
        else if (runs.length === 0) out.write('no evolve runs\n');
        else for (const r of runs) out.write(`${r.id}  ${r.status}  ${displayText(r.core_dir)}  ${r.files.length} file(s)  ${gatesLine(r)}  review ${r.review_hash.slice(0, 16)}\n`);
        return 0;
      }
      case 'review': {
        const { run } = findRun(store, principal, id, 'review');
        const r = await reviewRun(run);
        if (json) {
          out.write(`${displayJson({ run, patch: r.patch, patch_truncated: r.truncated, changed_since_start: r.changed_since_start })}\n`);
          return 0;
        }
        out.write(`${run.id}  ${run.status}  ${displayText(run.core_dir)} (${run.ref} at ${run.base.slice(0, 12)} → ${run.candidate.slice(0, 12)})\n`);
        for (const file of run.files) out.write(`  ${file.change} ${displayText(file.path)}\n`);
        out.write(`gates: ${gatesLine(run)}\n`);
        for (const g of run.gates.filter((x) => !x.ok)) out.write(`  ${g.gate}: ${displayText(g.detail)}\n`);
        out.write(`security diff: ${displayText(run.security ? securitySummary(run.security, 20_000) : 'not computed (the candidate does not load)')}\n`);
        if (r.changed_since_start) out.write('CHANGED since the run started: promotion is refused; start a new run\n');
        out.write(`review hash: ${run.review_hash}\n\n${displayText(r.patch, { keep: 'log' })}${r.truncated ? '\n(patch cut; git diff shows all)\n' : ''}`);
        return 0;
      }
      case 'promote': {
        const { task, run } = findRun(store, principal, id, 'promote');
        const expect = f.value.get('expect');
        if (!expect) throw new UsageError(`evolve promote needs --expect <review hash>: read supervisor evolve review ${run.id} first`);
        const moved = await promoteRun(run, expect);
        store.setMetadata(task.id, { ...run, status: 'promoted', promoted: { ...moved, at: Date.now() } });
        appendEvent(db, task.sessionId, 'evolve.promoted', { run: run.id, ref: run.ref, old: moved.old, new: moved.new, review_hash: run.review_hash, by: 'operator', principal });
        out.write(json ? `${displayJson({ run: run.id, promoted: true, ref: run.ref, ...moved })}\n` : `promoted ${run.id}: ${run.ref} ${moved.old.slice(0, 12)} → ${moved.new.slice(0, 12)}\n`);
        return 0;
      }
      case 'rollback': {
        const { task, run } = findRun(store, principal, id, 'rollback');
        const moved = await rollbackRun(run);
        store.setMetadata(task.id, { ...run, status: 'rolled_back', rolled_back: { ...moved, at: Date.now() } });
        appendEvent(db, task.sessionId, 'evolve.rolled_back', { run: run.id, ref: run.ref, old: moved.old, new: moved.new, by: 'operator', principal });
        out.write(json ? `${displayJson({ run: run.id, rolled_back: true, ref: run.ref, ...moved })}\n` : `rolled back ${run.id}: ${run.ref} ${moved.old.slice(0, 12)} → ${moved.new.slice(0, 12)}\n`);
        return 0;
      }
      case 'discard': {
        const { task, run } = findRun(store, principal, id, 'discard');
        const { archived } = await discardRun(run);
        store.setMetadata(task.id, { ...run, status: 'discarded', archived });
        appendEvent(db, task.sessionId, 'evolve.discarded', { run: run.id, archived, by: 'operator', principal });
        out.write(json ? `${displayJson({ run: run.id, discarded: true, archived })}\n` : `discarded ${run.id}; its branch is kept as ${archived}\n`);
        return 0;
      }
      default:
        throw new UsageError(`evolve: unknown action ${displayText(JSON.stringify(verb))}; use list, review, promote, rollback or discard`);
    }
  } catch (err) {
    if (err instanceof EvolveError) {
      cliIo().stderr.write(`supervisor evolve: ${displayText(err.message)} (${err.code})\n`);
      return 1;
    }
    throw err;
  } finally {
    db.close();
  }
}
