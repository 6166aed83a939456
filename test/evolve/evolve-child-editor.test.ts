// evolve_core start with a child agent (issue 19): the edits come from a delegated child session
// whose only tool is the terminal, inside the OS sandbox with the run's worktree writable and
// nothing else (terminal.sandbox: workspace-write). One child edits honestly; another attacks the
// way an agent would (the live core by absolute path, the state dir, the host's /tmp, `..`, the
// worktree's .git pointer, links out of the worktree) and the test asserts what it got on the host,
// not what any gate printed. Real Git, real bubblewrap, real store and process trees.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSession } from '../../src/index.js';
import { sandboxAvailability } from '../../src/process/index.js';
import { tempDir } from '../helpers/procs.js';
import { AlwaysApprove } from '../helpers/approvers.js';
import { git, removeRepos, repoCore } from './git-fixture.js';
import { script } from '../helpers/model-script.js';

const NO_SANDBOX = !sandboxAvailability().usable && `the sandbox tier is not usable here: ${sandboxAvailability().reason}`;

const AGENT = 'name: self-editing\ntoolsets: [evolve, terminal, agents]\ngrants: [core.evolve, terminal.exec, agent.spawn, "tool.call:greet"]\napproval:\n  default: auto\n';
const TOOL = 'name: greet\ndescription: Says hello.\ninput_schema: { type: object, properties: { who: { type: string } } }\ncapability: tool.call:greet\napproval: auto\nrisk: low\nentry: index.mjs\n';
const CODE = 'export async function handler(input) { return `hello ${input?.who ?? "you"}`; }\n';


/** A core at the top of a Git repository with one child definition, `editor`, whose one call is `command`. */
function coreWithEditor(command: string): string {
  const core = repoCore(AGENT);
  mkdirSync(join(core, 'agent', 'agents'), { recursive: true });
  mkdirSync(join(core, 'scripts'));
  // The definition asks for more than an editor gets: agents and evolve are dropped (EDIT_TOOLSETS).
  writeFileSync(join(core, 'agent', 'agents', 'editor.yaml'), JSON.stringify({ description: 'edits the core', toolsets: ['terminal', 'agents', 'evolve'], grants: ['terminal.exec', 'agent.spawn', 'core.evolve'], model: { provider: 'scripted', script: 'scripts/editor.yaml' } }));
  writeFileSync(join(core, 'scripts', 'editor.yaml'), script({ tools: [{ name: 'terminal', arguments: { command } }] }, { text: 'edited' }));
  git(core, 'add', '-A');
  git(core, 'commit', '--quiet', '-m', 'the editor');
  return core;
}

/** Stands for the live core's path in an editor's command until the repository exists. */
const LIVE_PLACEHOLDER = '@LIVE_CORE@';

const heredoc = (file: string, text: string): string => `cat > ${file} <<'EOF_${file.length}'\n${text}EOF_${file.length}\n`;

describe('evolve_core start with a child agent: edits in the sandbox, the worktree writable and nothing else', { skip: process.platform !== 'linux' ? 'bubblewrap is the Linux sandbox' : NO_SANDBOX }, () => {
  const states: { remove(): void }[] = [];
  const state = (): string => {
    const t = tempDir('evolve-child-state-');
    states.push(t);
    return t.path;
  };
  after(() => {
    for (const s of states) s.remove();
    removeRepos();
  });

  test('an honest editor: its edits are the run, committed on the run\'s branch; the child had only the terminal; promotion brings the tool', async () => {
    const core = coreWithEditor(`mkdir -p agent/tools/greet\n${heredoc('agent/tools/greet/tool.yaml', TOOL)}${heredoc('agent/tools/greet/index.mjs', CODE)}`);
    const stateDir = state();
    const s = await openSession({ core, stateDir, approver: new AlwaysApprove() });
    let run: Record<string, any>;
    try {
      const started = await s.callTool('evolve_core', { action: 'start', agent: 'editor', task: 'add a greet tool' });
      assert.ok(started.ok, JSON.stringify(started));
      run = JSON.parse(started.views.model.content);
      assert.equal(run.status, 'ready', started.views.model.content);
      assert.deepEqual(run.files.map((f: { path: string }) => f.path).sort(), ['agent/tools/greet/index.mjs', 'agent/tools/greet/tool.yaml']);
      assert.ok(!existsSync(join(core, 'agent', 'tools')), 'the live core is untouched until promotion');
      const promoted = await s.callTool('evolve_core', { action: 'promote', run: run.run });
      assert.ok(promoted.ok && !promoted.isError, JSON.stringify(promoted));
      assert.equal(readFileSync(join(core, 'agent', 'tools', 'greet', 'tool.yaml'), 'utf8'), TOOL);
    } finally {
      await s.close();
    }
    const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
    try {
      const spawn = db.prepare("SELECT metadata FROM tasks WHERE kind = 'agent.spawn'").get() as { metadata: string };
      const resolved = JSON.parse(spawn.metadata).resolved as { toolsets: string[]; tools: string[] };
      assert.deepEqual(resolved.toolsets, ['terminal'], 'an editor gets the terminal toolset alone');
      assert.deepEqual(resolved.tools.sort(), ['terminal', 'tools_list']);
      const evolver = db.prepare("SELECT metadata FROM tasks WHERE kind = 'evolver.run'").get() as { metadata: string };
      const meta = JSON.parse(evolver.metadata);
      assert.match(meta.editor.child_session, /^se_[0-9a-f]+$/);
      assert.deepEqual(meta.gates.find((g: { gate: string }) => g.gate === 'edited').ok, true);
      // The child's terminal call ran sandboxed, because of the workspace-write mode.
      const effects = (db.prepare("SELECT payload FROM runtime_events WHERE session_id = ? AND kind = 'effect.completed'").all(meta.editor.child_session) as { payload: string }[]).map((e) => JSON.parse(e.payload));
      assert.equal(effects.length, 1);
      assert.equal(effects[0].tool, 'terminal');
      assert.equal(effects[0].detail.sandboxed, true, JSON.stringify(effects[0].detail));
    } finally {
      db.close();
    }
  });

  test('a hostile editor: the live core, the state dir, the host\'s /tmp, `..` and the .git pointer are out of its reach; the links it made fail the plain_files gate', async () => {
    const stateDir = state();
    const hostTmp = join(tmpdir(), `evolve-escape-${process.pid}-${Date.now()}`);
    const core = coreWithEditor(
      [
        `echo pwned > ${LIVE_PLACEHOLDER}/agent.yaml`,
        `echo owned > ${stateDir}/owned`,
        `echo out > ${hostTmp}`,
        'echo up > ../escaped',
        "echo 'gitdir: /tmp/elsewhere' > .git",
        'rm -f .git',
        'mv .git moved-git',
        `mkdir -p agent/tools && ln -s ${LIVE_PLACEHOLDER} agent/tools/live`,
        'ln -s /etc/passwd leak.txt',
        'echo inside > inside.txt',
        'true',
      ].join('; '),
    );
    // The command names the live core, which exists only once the repository is made: fill it in.
    const scriptFile = join(core, 'scripts', 'editor.yaml');
    writeFileSync(scriptFile, readFileSync(scriptFile, 'utf8').replaceAll(LIVE_PLACEHOLDER, core));
    git(core, 'commit', '--quiet', '-am', 'the live path');
    const liveAgent = readFileSync(join(core, 'agent.yaml'), 'utf8');
    const liveHead = git(core, 'rev-parse', 'main');

    const s = await openSession({ core, stateDir, approver: new AlwaysApprove() });
    let run: Record<string, any>;
    try {
      const started = await s.callTool('evolve_core', { action: 'start', agent: 'editor', task: 'break out' });
      assert.ok(started.ok, JSON.stringify(started));
      run = JSON.parse(started.views.model.content);
      const promote = await s.callTool('evolve_core', { action: 'promote', run: run.run });
      assert.ok(!promote.ok || promote.isError, 'a run whose gates failed is not promoted');
    } finally {
      await s.close();
    }
    // What the attacker got, on the host.
    assert.equal(readFileSync(join(core, 'agent.yaml'), 'utf8'), liveAgent, 'the live core is unchanged');
    assert.equal(git(core, 'rev-parse', 'main'), liveHead, 'the live branch did not move');
    assert.ok(!existsSync(join(stateDir, 'owned')), 'nothing written in the state dir');
    assert.ok(!existsSync(hostTmp), 'nothing written in the host\'s /tmp');
    assert.ok(!existsSync(join(stateDir, 'evolve', 'escaped')), 'nothing written beside the worktree');
    const worktree = join(stateDir, 'evolve', run.run);
    assert.match(readFileSync(join(worktree, '.git'), 'utf8'), /^gitdir: .*\/\.git\/worktrees\//, 'the worktree still points at its repository');
    assert.ok(!existsSync(join(worktree, 'moved-git')));
    // The control: writing inside the worktree worked, so the refusals above were the sandbox's.
    assert.equal(readFileSync(join(worktree, 'inside.txt'), 'utf8'), 'inside\n');
    assert.ok(lstatSync(join(worktree, 'leak.txt')).isSymbolicLink());
    // The links were committed on the run's branch, and the gate refuses them.
    assert.equal(run.status, 'gates_failed');
    const gate = run.gates.find((g: { gate: string }) => g.gate === 'plain_files');
    assert.equal(gate.ok, false);
    assert.match(gate.detail, /agent\/tools\/live \(a symbolic link\)/);
    assert.match(gate.detail, /leak\.txt \(a symbolic link\)/);
  });

  test('start with agent needs agent.spawn, a known definition, and both agent and task', async () => {
    const core = coreWithEditor('true');
    writeFileSync(join(core, 'agent.yaml'), AGENT.replace(', agent.spawn', ''));
    git(core, 'commit', '--quiet', '-am', 'no agent.spawn');
    const s = await openSession({ core, stateDir: state(), approver: new AlwaysApprove() });
    try {
      const noGrant = await s.callTool('evolve_core', { action: 'start', agent: 'editor', task: 't' });
      assert.equal(noGrant.ok, false);
      assert.match(JSON.stringify(noGrant), /CAPABILITY_DENIED|agent\.spawn/);
      const both = await s.callTool('evolve_core', { action: 'start', agent: 'editor', task: 't', edits: [{ path: 'a.md', content: 'a' }] });
      assert.equal(both.ok, false);
      assert.match(JSON.stringify(both), /edits or agent and task, not both/);
      const noTask = await s.callTool('evolve_core', { action: 'start', agent: 'editor' });
      assert.equal(noTask.ok, false);
      assert.match(JSON.stringify(noTask), /needs both agent .* and task/);
    } finally {
      await s.close();
    }
    assert.equal(git(core, 'branch', '--list', 'evolve/*'), '', 'no run was started');
  });

  test('delegate_task cannot ask for an edit scope: the argument is refused by its schema', async () => {
    const core = coreWithEditor('true');
    const s = await openSession({ core, stateDir: state(), approver: new AlwaysApprove() });
    try {
      const o = await s.callTool('delegate_task', { agent: 'editor', task: 't', editScope: '/' });
      assert.ok(!o.ok);
      assert.equal(o.code, 'ARGS_INVALID', 'refused at step 1, before any check or child');
    } finally {
      await s.close();
    }
  });
});
