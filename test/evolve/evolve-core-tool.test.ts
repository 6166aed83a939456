// evolve_core through the EffectRuntime (issue 19): a real session over a core in a real Git
// repository, the real store and approval broker. What the operator is asked, and what one answer
// authorizes: approving promote of run A (remembered) approves neither discard of A nor promote of
// B; the promote prompt carries the security diff; a promotion drops the remembered approvals of
// that core; each step is an audited effect with the old and new commit ids.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, removeRepos, repoCore, scratchDir } from './git-fixture.js';
import Database from 'better-sqlite3';
import { openSession } from '../../src/index.js';
import { tempDir } from '../helpers/procs.js';
import { AlwaysApprove } from '../helpers/approvers.js';

const repo = (): string => repoCore('name: self-editing\ntoolsets: [evolve, terminal]\ngrants: [core.evolve, terminal.exec]\napproval:\n  default: auto\n');

const MCP = 'name: helper\ntransport:\n  type: stdio\n  command: /usr/bin/env\n  args: [node, helper.mjs]\n  env:\n    - { name: API_TOKEN, value: { secret: HELPER_TOKEN } }\n';

describe('evolve_core through the pipeline', () => {
  const state = tempDir('evolve-tool-state-');
  after(() => {
    state.remove();
    removeRepos();
  });

  test('start, review, promote with the security diff in the prompt; one remembered approval authorizes exactly one action', async () => {
    const core = repo();
    const approver = new AlwaysApprove();
    const s = await openSession({ core, stateDir: state.path, approver });
    try {
      const call = async (args: Record<string, unknown>) => {
        const o = await s.callTool('evolve_core', args);
        assert.ok(o.ok, JSON.stringify(o));
        return { isError: o.isError, body: o.views.model.content };
      };
      const a = JSON.parse((await call({ action: 'start', edits: [{ path: 'agent/mcp/helper.yaml', content: MCP }] })).body);
      assert.equal(a.status, 'ready', JSON.stringify(a));
      assert.match(a.security, /\+mcp helper: stdio "\/usr\/bin\/env" "node" "helper.mjs" env API_TOKEN/);
      assert.ok(!existsSync(join(core, 'agent', 'mcp')), 'the live core is untouched by start');
      const b = JSON.parse((await call({ action: 'start', edits: [{ path: 'notes.md', content: 'b\n' }] })).body);
      assert.equal(approver.asked.length, 0, 'start and review ask nobody (declared auto; they touch only the run\'s worktree)');

      const review = JSON.parse((await call({ action: 'review', run: a.run })).body);
      assert.equal(review.security.mcp.added.helper.command, '/usr/bin/env');
      assert.ok(!JSON.stringify(review.security).includes('HELPER_TOKEN'), 'the security diff names the variable, not its secret reference or value');

      // Promote A: asked once, with the security diff in what the operator sees; remembered.
      const promoted = JSON.parse((await call({ action: 'promote', run: a.run })).body);
      assert.equal(promoted.promoted, true);
      assert.equal(approver.asked.length, 1);
      assert.match(approver.asked[0]!.actionSummary, /^promote evolve run tk_[0-9a-f]+ .*security diff: \+mcp helper: stdio/);
      assert.equal(git(core, 'rev-parse', 'main'), promoted.new);
      assert.ok(existsSync(join(core, 'agent', 'mcp', 'helper.yaml')), 'the live core has the promoted declaration');

      // The remembered "always" for promote of A authorizes neither promote of B nor discard of B.
      await call({ action: 'promote', run: b.run }); // B lost its base to A: it fails, but it was asked first
      assert.equal(approver.asked.length, 2, 'promote of B is asked on its own');
      await call({ action: 'discard', run: b.run });
      assert.equal(approver.asked.length, 3, 'discard is asked on its own');
      assert.equal(git(core, 'branch', '--list', `evolve/${b.run}`), '');
    } finally {
      await s.close();
    }
    // The chain: each action an effect; the promotion names the old and new commits and the approvals it dropped.
    const db = new Database(join(state.path, 'supervisor.db'), { readonly: true });
    try {
      const effects = (db.prepare("SELECT payload FROM runtime_events WHERE kind = 'effect.completed' ORDER BY seq").all() as { payload: string }[]).map((e) => JSON.parse(e.payload));
      const promote = effects.find((e) => e.tool === 'evolve_core' && e.detail?.old);
      assert.ok(promote, JSON.stringify(effects.map((e) => e.detail)));
      assert.match(promote.detail.old, /^[0-9a-f]{40}$/);
      assert.match(promote.detail.new, /^[0-9a-f]{40}$/);
      assert.ok(promote.detail.approvals_dropped >= 1, 'the remembered approval for this core revision was dropped');
    } finally {
      db.close();
    }
  });

  test('evolve_core needs the evolve toolset and core.evolve; a core outside Git gets the fix', async () => {
    const plain = scratchDir('evolve-plain-');
    mkdirSync(join(plain, 'x'));
    writeFileSync(join(plain, 'agent.yaml'), 'name: plain\ntoolsets: [evolve]\ngrants: [core.evolve]\n');
    const s = await openSession({ core: plain, stateDir: state.path, approver: new AlwaysApprove() });
    try {
      const o = await s.callTool('evolve_core', { action: 'start', edits: [{ path: 'a.md', content: 'a' }] });
      assert.ok(o.ok);
      assert.equal(o.isError, true);
      assert.match(o.views.model.content, /not in a Git repository.*git init/);
    } finally {
      await s.close();
    }
  });
});
