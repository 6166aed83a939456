// The evolution runtime (issue 19): a run edits a candidate of the core in its own `git worktree`
// on its own branch, never the live core; gates and the security diff are computed by the
// supervisor from the parsed candidate; promotion is a compare-and-swap of the core's branch from
// the reviewed base to the reviewed candidate, bound to the hash of what the review showed.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildCatalog } from '../catalog/index.js';
import { CoreLoadError, formatIssue, loadCore, type CoreSnapshot } from '../core/index.js';
import { homeRoots, sandboxAvailability, sandboxCommand, type ProcessSupervisor } from '../process/index.js';
import { git, GitError, gitSucceeds } from './git.js';
import { securityDiff, type SecurityDiff } from './security-diff.js';

export class EvolveError extends Error {
  constructor(
    readonly code: 'EVOLVE_NOT_GIT' | 'EVOLVE_DETACHED' | 'EVOLVE_EDIT_REFUSED' | 'EVOLVE_STATE' | 'EVOLVE_CHANGED' | 'EVOLVE_DIRTY' | 'EVOLVE_RACE' | 'EVOLVE_GATES' | 'EVOLVE_GIT',
    message: string,
  ) {
    super(message);
    this.name = 'EvolveError';
  }
}

/** Where the live core is in Git. */
export interface CoreRepo {
  /** The repository's top level (real path). */
  top: string;
  /** The core's folder inside it ('' when the core is the top level). */
  prefix: string;
  /** The branch the core is on (refs/heads/...): what promotion advances. */
  ref: string;
  /** Its commit now. */
  head: string;
}

export interface Edit {
  /** Relative to the core. */
  path: string;
  /** The new content; null deletes the file. */
  content: string | null;
}

/**
 * Who makes a run's edits when they are not an edit list: a child session working in the
 * candidate folder (evolve_core's `agent`), writable to it inside the OS sandbox only. Its report
 * becomes the run's `edited` gate: an editor that did not finish blocks promotion.
 */
export interface Editor {
  /** One line for the task's summary, e.g. "child agent editor". */
  readonly describe: string;
  edit(candidateDir: string): Promise<{ ok: boolean; detail: string; child_session: string | null }>;
}

export interface Gate {
  gate: 'edited' | 'plain_files' | 'core_loads' | 'catalog_resolves' | 'authored_tests';
  ok: boolean;
  detail: string;
}

export type RunStatus = 'ready' | 'gates_failed' | 'promoted' | 'rolled_back' | 'discarded';

/** An evolve run as its task's metadata holds it. */
export interface EvolveRun {
  id: string;
  status: RunStatus;
  core_dir: string;
  repo: string;
  prefix: string;
  ref: string;
  base: string;
  branch: string;
  worktree: string;
  candidate: string;
  /** `mode`: Git's file mode on the candidate side (100644, 100755; 120000 a link; 160000 a repository). */
  files: { path: string; change: 'added' | 'modified' | 'deleted'; mode: string }[];
  /** The child session that made the edits (evolve_core's `agent`), when one did. */
  editor?: { child_session: string | null; detail: string };
  gates: Gate[];
  security: SecurityDiff | null;
  /** sha256 of (candidate tree, security diff): what an approval of promote is bound to. */
  review_hash: string;
  promoted?: { old: string; new: string; at: number };
  rolled_back?: { old: string; new: string; at: number };
  archived?: string;
}

/** The core's repository, branch and commit; refuses a core outside Git or on a detached HEAD. */
export async function coreRepo(coreDir: string): Promise<CoreRepo> {
  let top: string;
  try {
    top = (await git(coreDir, ['rev-parse', '--show-toplevel'])).trim();
  } catch {
    throw new EvolveError('EVOLVE_NOT_GIT', `${coreDir} is not in a Git repository: evolve_core works on a core under version control (git init && git add -A && git commit in the core, or put it in a repository)`);
  }
  const realTop = fs.realpathSync(top);
  const prefix = path.relative(realTop, fs.realpathSync(coreDir)).split(path.sep).join('/');
  let ref: string;
  try {
    ref = (await git(realTop, ['symbolic-ref', '-q', 'HEAD'])).trim();
  } catch {
    throw new EvolveError('EVOLVE_DETACHED', `${realTop} has a detached HEAD: promotion advances a branch; check one out (git switch <branch>)`);
  }
  const head = (await git(realTop, ['rev-parse', 'HEAD'])).trim();
  return { top: realTop, prefix, ref, head };
}

/** An edit's path as a path inside the core: relative, no '..', nothing under .git. */
function checkedEditPath(p: string): string {
  const norm = path.posix.normalize(p.replace(/\\/g, '/'));
  if (p === '' || path.posix.isAbsolute(norm) || norm === '.' || norm.startsWith('../') || norm === '..' || norm.split('/').some((s) => s === '.git' || s === '')) {
    throw new EvolveError('EVOLVE_EDIT_REFUSED', `edit path ${JSON.stringify(p.slice(0, 200))} is not a plain path inside the core (relative, no '..', nothing under .git)`);
  }
  return norm;
}

/**
 * Writes one edit under `root` without following a symbolic link anywhere on the way: every
 * existing component is lstat'ed, so a link the candidate holds cannot carry a write out of the
 * worktree. (The kernel-enforced write scope for an agent's own edits is the sandbox tier's.)
 */
function applyEdit(root: string, rel: string, content: string | null): void {
  const parts = rel.split('/');
  let at = root;
  for (const part of parts.slice(0, -1)) {
    at = path.join(at, part);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!st) fs.mkdirSync(at);
    else if (!st.isDirectory()) throw new EvolveError('EVOLVE_EDIT_REFUSED', `edit path ${rel}: ${path.relative(root, at)} is not a folder (a link or a file); the edit was refused`);
  }
  const file = path.join(root, rel);
  const st = fs.lstatSync(file, { throwIfNoEntry: false });
  if (st && !st.isFile()) throw new EvolveError('EVOLVE_EDIT_REFUSED', `edit path ${rel} is not a regular file (a link or a folder); the edit was refused`);
  if (content === null) {
    if (st) fs.unlinkSync(file);
    return;
  }
  // O_NOFOLLOW: a link swapped in after the check is not followed either.
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_NOFOLLOW, 0o644);
  try {
    fs.writeSync(fd, content);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * The gates, under the current policy: the candidate core loads and validates, its catalog
 * resolves, and every authored tool's tests pass in the sandbox tier.
 */
async function runGates(candidateDir: string, principal: string, supervisor: ProcessSupervisor | null): Promise<{ gates: Gate[]; core: CoreSnapshot | null }> {
  let core: CoreSnapshot;
  try {
    core = await loadCore(candidateDir);
  } catch (err) {
    const detail = err instanceof CoreLoadError ? err.issues.slice(0, 20).map(formatIssue).join('\n') : (err as Error).message;
    return { gates: [{ gate: 'core_loads', ok: false, detail }], core: null };
  }
  const gates: Gate[] = [{ gate: 'core_loads', ok: true, detail: `revision ${core.revision.slice(0, 16)}` }];
  try {
    const catalog = buildCatalog({ core, principal });
    gates.push({ gate: 'catalog_resolves', ok: true, detail: `${catalog.entries.length} tools` });
  } catch (err) {
    gates.push({ gate: 'catalog_resolves', ok: false, detail: (err as Error).message });
  }
  gates.push(await authoredTestsGate(core, supervisor));
  return { gates, core };
}

/** How long one tool's tests may run before they are stopped (and the gate fails). */
const TOOL_TESTS_TIMEOUT_MS = 60_000;
const TESTS_OUTPUT_CHARS = 4_000;

/** A tool's tests: `*.test.mjs` and `*.test.js` files directly in its folder (regular files, no links). */
function toolTestFiles(coreDir: string, toolDir: string): string[] {
  const dir = path.join(coreDir, toolDir);
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && /\.test\.(mjs|js)$/.test(e.name))
    .map((e) => e.name)
    .sort();
}

/**
 * Runs each authored tool's tests with `node --test` in the sandbox tier: the tool's folder
 * read-only, no network, a private /tmp, nothing of the state dir, the home or the live core. The
 * candidate's code is the agent's, so it never runs outside the sandbox: where the tier is not
 * usable, or no supervisor owns the tree, the gate fails closed and says why.
 */
async function authoredTestsGate(core: CoreSnapshot, supervisor: ProcessSupervisor | null): Promise<Gate> {
  const suites = core.tools.map((t) => ({ tool: t.name, dir: t.source.dir, files: toolTestFiles(core.dir, t.source.dir) })).filter((s) => s.files.length > 0);
  if (suites.length === 0) return { gate: 'authored_tests', ok: true, detail: 'no authored tool has tests (*.test.mjs beside its tool.yaml)' };
  const tier = sandboxAvailability();
  if (!tier.usable) return { gate: 'authored_tests', ok: false, detail: `the tests of ${suites.map((s) => s.tool).join(', ')} run only in the sandbox tier, which is not usable here: ${tier.reason}` };
  if (!supervisor) return { gate: 'authored_tests', ok: false, detail: 'no process supervisor was given to own the test processes; they were not run' };
  const failed: string[] = [];
  const passed: string[] = [];
  for (const s of suites) {
    const dir = path.join(core.dir, s.dir);
    const cmd = sandboxCommand({
      command: process.execPath,
      args: ['--test', '--test-reporter=tap', ...s.files],
      readOnlyPaths: [dir],
      writablePaths: [],
      cwd: dir,
      network: false,
      env: { PATH: '/usr/bin:/bin', NODE_OPTIONS: '' },
      hiddenRoots: homeRoots(),
    });
    const tree = supervisor.spawnTree({ ...cmd, artifacts: false, tailChars: TESTS_OUTPUT_CHARS, timeoutMs: TOOL_TESTS_TIMEOUT_MS });
    const out = await tree.done;
    if (out.reason === 'exited' && out.exitCode === 0) passed.push(`${s.tool} (${s.files.length} file(s))`);
    else {
      const how = out.reason === 'timeout' ? `stopped after ${TOOL_TESTS_TIMEOUT_MS / 1000} s` : out.signal ? `killed by ${out.signal}` : `exit ${out.exitCode}`;
      failed.push(`${s.tool}: ${how}\n${notOk(out.stdout.tail + out.stderr.tail)}`);
    }
  }
  if (failed.length > 0) return { gate: 'authored_tests', ok: false, detail: failed.join('\n') };
  return { gate: 'authored_tests', ok: true, detail: `passed in the sandbox tier: ${passed.join(', ')}` };
}

/** The failing tests of a TAP report (its `not ok` lines and what follows them), else its tail. */
function notOk(tap: string): string {
  const lines = tap.split('\n');
  const at = lines.findIndex((l) => /^\s*not ok /.test(l));
  return (at >= 0 ? lines.slice(at, at + 12) : lines.slice(-12)).join('\n').trim();
}

async function reviewHash(repo: string, commit: string, security: SecurityDiff | null): Promise<string> {
  const tree = (await git(repo, ['rev-parse', `${commit}^{tree}`])).trim();
  return createHash('sha256').update(JSON.stringify(['supervisor-evolve-review/1', tree, security]), 'utf8').digest('hex');
}

/**
 * Starts a run: a worktree of the core's repository at the core's commit, on branch
 * `evolve/<id>`, the edits applied and committed there, the gates and the security diff worked
 * out. The live core and its branch are not touched.
 */
export async function startRun(o: { live: CoreSnapshot; runId: string; stateDir: string; principal: string; edits?: readonly Edit[]; editor?: Editor; supervisor?: ProcessSupervisor }): Promise<EvolveRun> {
  const repo = await coreRepo(o.live.dir);
  const edits = (o.edits ?? []).map((e) => ({ path: checkedEditPath(e.path), content: e.content }));
  const worktree = path.join(o.stateDir, 'evolve', o.runId);
  const branch = `evolve/${o.runId}`;
  fs.mkdirSync(path.dirname(worktree), { recursive: true, mode: 0o700 });
  await git(repo.top, ['worktree', 'add', '--quiet', '-b', branch, worktree, repo.head]);
  const candidateDir = path.join(worktree, repo.prefix);
  const edited = o.editor ? await editInWorktree(worktree, candidateDir, o.editor) : applyEdits(candidateDir, edits);
  await git(worktree, ['add', '-A', '--', repo.prefix || '.']);
  const changed = await gitSucceeds(worktree, ['diff', '--cached', '--quiet']).then((same) => !same);
  if (changed) await git(worktree, ['commit', '--quiet', '--no-verify', '-m', `evolve ${o.runId}: ${o.editor ? o.editor.describe : `${edits.length} edit(s)`}`]);
  const candidate = (await git(worktree, ['rev-parse', 'HEAD'])).trim();
  const files = await changedFiles(repo.top, repo.head, candidate);
  const checked = await runGates(candidateDir, o.principal, o.supervisor ?? null);
  const gates = [edited.gate, plainFilesGate(files), ...checked.gates];
  const core = checked.core;
  const security = core ? securityDiff(o.live, core) : null;
  return {
    id: o.runId,
    status: gates.every((g) => g.ok) ? 'ready' : 'gates_failed',
    core_dir: o.live.dir,
    repo: repo.top,
    prefix: repo.prefix,
    ref: repo.ref,
    base: repo.head,
    branch,
    worktree,
    candidate,
    files,
    gates,
    security,
    review_hash: await reviewHash(repo.top, candidate, security),
    ...(edited.editor ? { editor: edited.editor } : {}),
  };
}

type Edited = { gate: Gate; editor?: EvolveRun['editor'] };

/** The edit list, written by the supervisor itself (path checks, no link followed). */
function applyEdits(candidateDir: string, edits: readonly Edit[]): Edited {
  for (const e of edits) applyEdit(candidateDir, e.path, e.content);
  return { gate: { gate: 'edited', ok: true, detail: `${edits.length} edit(s) written by the supervisor` } };
}

/**
 * The editor's edits. The worktree's `.git` pointer is read-only to the editor (the sandbox binds
 * it so), and checked here too: the supervisor runs git in this worktree next, and a pointer moved
 * to another repository would make it commit there.
 */
async function editInWorktree(worktree: string, candidateDir: string, editor: Editor): Promise<Edited> {
  const pointer = path.join(worktree, '.git');
  const before = fs.readFileSync(pointer, 'utf8');
  const report = await editor.edit(candidateDir);
  const after = fs.lstatSync(pointer, { throwIfNoEntry: false })?.isFile() ? fs.readFileSync(pointer, 'utf8') : null;
  if (after !== before) throw new EvolveError('EVOLVE_EDIT_REFUSED', `the editor changed ${pointer}, the worktree's link to its repository; the run is refused (nothing was committed)`);
  return { gate: { gate: 'edited', ok: report.ok, detail: report.detail }, editor: { child_session: report.child_session, detail: report.detail } };
}

/** The files a run changed, with their candidate-side modes (`git diff --raw`: ":old new oldsha newsha S\0path\0"). */
async function changedFiles(repo: string, from: string, to: string): Promise<EvolveRun['files']> {
  const out = await git(repo, ['diff', '--raw', '--no-renames', '--no-abbrev', '-z', from, to]);
  const parts = out.split('\0').filter(Boolean);
  const files: EvolveRun['files'] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const [, mode = '', , , status = ''] = parts[i]!.slice(1).split(' ');
    files.push({ path: parts[i + 1]!, change: status === 'A' ? 'added' : status === 'D' ? 'deleted' : 'modified', mode: status === 'D' ? '000000' : mode });
  }
  return files;
}

/**
 * Only plain files may be promoted: a link (mode 120000) or an embedded repository (160000) that
 * an editor made in the candidate would carry the live core's reads somewhere else.
 */
function plainFilesGate(files: EvolveRun['files']): Gate {
  const odd = files.filter((f) => f.change !== 'deleted' && f.mode !== '100644' && f.mode !== '100755');
  if (odd.length === 0) return { gate: 'plain_files', ok: true, detail: `${files.length} changed file(s), all plain files` };
  const what = (mode: string): string => (mode === '120000' ? 'a symbolic link' : mode === '160000' ? 'an embedded repository' : `mode ${mode}`);
  return { gate: 'plain_files', ok: false, detail: `not plain files, which a run may not add: ${odd.slice(0, 10).map((f) => `${f.path} (${what(f.mode)})`).join(', ')}` };
}

/** The review: files, the patch (bounded), gates and security diff, and the hash an approval binds. */
export async function reviewRun(run: EvolveRun, maxPatchChars = 64_000): Promise<{ run: EvolveRun; patch: string; truncated: boolean; current_hash: string; changed_since_start: boolean }> {
  const head = (await git(run.repo, ['rev-parse', run.branch])).trim();
  const patch = await git(run.repo, ['diff', '--no-color', '--no-ext-diff', run.base, run.candidate]);
  const current = await reviewHash(run.repo, head, run.security);
  return { run, patch: patch.slice(0, maxPatchChars), truncated: patch.length > maxPatchChars, current_hash: current, changed_since_start: head !== run.candidate || current !== run.review_hash };
}

/**
 * Promotes a ready run: only if the candidate is still what the review showed (`expectedHash`),
 * the worktree holds no later edit, and the live core has no uncommitted change; then
 * `git update-ref <ref> <candidate> <base>` (a compare-and-swap: a branch that moved since the run
 * started loses cleanly), and the live core's files follow (a two-tree read of base → candidate).
 */
export async function promoteRun(run: EvolveRun, expectedHash: string): Promise<{ old: string; new: string }> {
  if (run.status !== 'ready') throw new EvolveError('EVOLVE_STATE', `run ${run.id} is ${run.status}; only a ready run (gates passed) can be promoted`);
  const head = (await git(run.repo, ['rev-parse', run.branch])).trim();
  const current = await reviewHash(run.repo, head, run.security);
  if (head !== run.candidate || current !== expectedHash || expectedHash !== run.review_hash) {
    throw new EvolveError('EVOLVE_CHANGED', `run ${run.id} changed after its review (its branch is at ${head.slice(0, 12)}, the review showed ${run.candidate.slice(0, 12)}); review it again`);
  }
  const worktreeDirty = (await git(run.worktree, ['status', '--porcelain', '--untracked-files=all'])).trim();
  if (worktreeDirty) throw new EvolveError('EVOLVE_CHANGED', `run ${run.id}'s worktree has edits after its review (${worktreeDirty.split('\n').slice(0, 5).join(', ')}); discard them or start a new run`);
  const liveDirty = (await git(run.repo, ['status', '--porcelain', '--untracked-files=no', '--', run.prefix || '.'])).trim();
  if (liveDirty) throw new EvolveError('EVOLVE_DIRTY', `the live core has uncommitted changes (${liveDirty.split('\n').slice(0, 5).join(', ')}); commit or stash them before promoting`);
  try {
    await git(run.repo, ['update-ref', '-m', `supervisor evolve promote ${run.id}`, run.ref, run.candidate, run.base]);
  } catch (err) {
    if (err instanceof GitError) throw new EvolveError('EVOLVE_RACE', `${run.ref} is no longer at ${run.base.slice(0, 12)} (another promotion or commit moved it); nothing was changed. Start a new run from the current core`);
    throw err;
  }
  try {
    await git(run.repo, ['read-tree', '-u', '-m', run.base, run.candidate]);
  } catch (err) {
    // The files could not follow: put the branch back, so the ref and the files agree again.
    await git(run.repo, ['update-ref', '-m', `supervisor evolve promote ${run.id}: undone`, run.ref, run.base, run.candidate]).catch(() => undefined);
    throw new EvolveError('EVOLVE_GIT', `the live core's files could not be updated (${(err as Error).message}); ${run.ref} was put back at ${run.base.slice(0, 12)}`);
  }
  return { old: run.base, new: run.candidate };
}

/**
 * Rolls a promoted run back: the same compare-and-swap in reverse (`<ref>` from the candidate to
 * the base), refused if anything moved the branch since the promotion or the live core has
 * uncommitted changes; the live files follow.
 */
export async function rollbackRun(run: EvolveRun): Promise<{ old: string; new: string }> {
  if (run.status !== 'promoted') throw new EvolveError('EVOLVE_STATE', `run ${run.id} is ${run.status}; only a promoted run can be rolled back`);
  const liveDirty = (await git(run.repo, ['status', '--porcelain', '--untracked-files=no', '--', run.prefix || '.'])).trim();
  if (liveDirty) throw new EvolveError('EVOLVE_DIRTY', `the live core has uncommitted changes (${liveDirty.split('\n').slice(0, 5).join(', ')}); commit or stash them before rolling back`);
  try {
    await git(run.repo, ['update-ref', '-m', `supervisor evolve rollback ${run.id}`, run.ref, run.base, run.candidate]);
  } catch (err) {
    if (err instanceof GitError) throw new EvolveError('EVOLVE_RACE', `${run.ref} is no longer at the promoted ${run.candidate.slice(0, 12)} (something was committed or promoted after it); nothing was changed`);
    throw err;
  }
  try {
    await git(run.repo, ['read-tree', '-u', '-m', run.candidate, run.base]);
  } catch (err) {
    await git(run.repo, ['update-ref', '-m', `supervisor evolve rollback ${run.id}: undone`, run.ref, run.candidate, run.base]).catch(() => undefined);
    throw new EvolveError('EVOLVE_GIT', `the live core's files could not be rolled back (${(err as Error).message}); ${run.ref} was put back at ${run.candidate.slice(0, 12)}`);
  }
  return { old: run.candidate, new: run.base };
}

/** Discards a run: its branch is kept under refs/evolve-archive/<id>, its worktree and branch removed. */
export async function discardRun(run: EvolveRun): Promise<{ archived: string }> {
  if (run.status === 'promoted' || run.status === 'rolled_back' || run.status === 'discarded') throw new EvolveError('EVOLVE_STATE', `run ${run.id} is ${run.status}; only a run not promoted can be discarded`);
  // Edits left in the worktree are kept: committed on the run's branch before it is archived.
  if ((await git(run.worktree, ['status', '--porcelain', '--untracked-files=all'])).trim()) {
    await git(run.worktree, ['add', '-A']);
    await git(run.worktree, ['commit', '--quiet', '--no-verify', '-m', `evolve ${run.id}: uncommitted edits kept at discard`]);
  }
  const head = (await git(run.repo, ['rev-parse', run.branch])).trim();
  const archived = `refs/evolve-archive/${run.id}`;
  await git(run.repo, ['update-ref', archived, head]);
  await git(run.repo, ['worktree', 'remove', '--force', run.worktree]);
  await git(run.repo, ['branch', '--quiet', '-D', run.branch]);
  return { archived };
}
