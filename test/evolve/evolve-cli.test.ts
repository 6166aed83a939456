// `supervisor evolve` (issue 19): the operator's list, review, promote (bound to the review hash
// with --expect) and discard of the runs an agent started, on a real repository and store. The CLI
// runs in-process through main(argv, io); the run itself is started through the real pipeline.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { git, removeRepos, repoCore } from './git-fixture.js';
import { openSession } from '../../src/index.js';
import { runMain } from '../helpers/cli.js';
import { tempDir } from '../helpers/procs.js';

const repo = (): string => repoCore('name: self-editing\ntoolsets: [evolve]\ngrants: [core.evolve]\n');

describe('supervisor evolve', () => {
  const state = tempDir('evolve-cli-state-');
  after(() => {
    state.remove();
    removeRepos();
  });

  async function startRun(core: string, edits: { path: string; content: string | null }[]): Promise<string> {
    // The core's default policy asks; the operator's rule answers start (as --approve does).
    const s = await openSession({ core, stateDir: state.path, rules: { approve: ['evolve_core'] } });
    try {
      const o = await s.callTool('evolve_core', { action: 'start', edits });
      assert.ok(o.ok && !o.isError, JSON.stringify(o));
      return JSON.parse(o.views.model.content).run as string;
    } finally {
      await s.close();
    }
  }

  test('list, review, promote bound to the review hash, and the chain records it', async () => {
    const core = repo();
    const run = await startRun(core, [{ path: 'agent/tools/hello/tool.yaml', content: 'name: hello\ndescription: Says hello.\ninput_schema: { type: object }\ncapability: tool.call:hello\nentry: index.mjs\n' }, { path: 'agent/tools/hello/index.mjs', content: 'export async function handler() { return "hello"; }\n' }]);
    const list = await runMain('evolve', 'list', '--json', '--state-dir', state.path);
    assert.equal(list.status, 0, list.stderr);
    const listed = JSON.parse(list.stdout).runs as { id: string; status: string }[];
    assert.ok(listed.some((r) => r.id === run && r.status === 'ready'), list.stdout);

    const review = await runMain('evolve', 'review', run, '--state-dir', state.path);
    assert.equal(review.status, 0, review.stderr);
    assert.match(review.stdout, /added agent\/tools\/hello\/tool\.yaml/);
    assert.match(review.stdout, /security diff: \+tool hello \(tool\.call:hello, process\)/);
    const hash = /review hash: ([0-9a-f]{64})/.exec(review.stdout)![1]!;

    const noExpect = await runMain('evolve', 'promote', run, '--state-dir', state.path);
    assert.equal(noExpect.status, 2);
    assert.match(noExpect.stderr, /--expect <review hash>/);
    const wrong = await runMain('evolve', 'promote', run, '--expect', '0'.repeat(64), '--state-dir', state.path);
    assert.equal(wrong.status, 1);
    assert.match(wrong.stderr, /changed after its review/);
    assert.ok(!existsSync(join(core, 'agent', 'tools', 'hello')), 'nothing was promoted');

    const ok = await runMain('evolve', 'promote', run, '--expect', hash, '--json', '--state-dir', state.path);
    assert.equal(ok.status, 0, ok.stderr);
    const moved = JSON.parse(ok.stdout) as { old: string; new: string };
    assert.equal(git(core, 'rev-parse', 'main'), moved.new);
    assert.ok(existsSync(join(core, 'agent', 'tools', 'hello', 'index.mjs')));
    const again = await runMain('evolve', 'promote', run, '--expect', hash, '--state-dir', state.path);
    assert.equal(again.status, 1, 'a promoted run is not promoted twice');
    // Rollback: the same compare-and-swap back; refused once something was committed after it.
    const back = await runMain('evolve', 'rollback', run, '--json', '--state-dir', state.path);
    assert.equal(back.status, 0, back.stderr);
    assert.deepEqual(JSON.parse(back.stdout).new, moved.old);
    assert.equal(git(core, 'rev-parse', 'main'), moved.old);
    assert.ok(!existsSync(join(core, 'agent', 'tools', 'hello')), 'the promoted files are gone from the live core');
    assert.equal(git(core, 'status', '--porcelain'), '');
    const twice = await runMain('evolve', 'rollback', run, '--state-dir', state.path);
    assert.equal(twice.status, 1, 'a rolled-back run is not rolled back twice');
    const verify = await runMain('audit', 'verify', '--state-dir', state.path);
    assert.equal(verify.status, 0, verify.stdout + verify.stderr);
  });

  test('discard keeps the branch as an archive ref; an unknown run id and a stray --expect are usage errors', async () => {
    const core = repo();
    const run = await startRun(core, [{ path: 'notes.md', content: 'n\n' }]);
    const d = await runMain('evolve', 'discard', run, '--json', '--state-dir', state.path);
    assert.equal(d.status, 0, d.stderr);
    assert.equal(JSON.parse(d.stdout).archived, `refs/evolve-archive/${run}`);
    assert.equal(git(core, 'show', `refs/evolve-archive/${run}:notes.md`), 'n');
    const missing = await runMain('evolve', 'review', 'tk_0000', '--state-dir', state.path);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /no evolve run/);
    const stray = await runMain('evolve', 'discard', run, '--expect', 'x', '--state-dir', state.path);
    assert.equal(stray.status, 2);
    const help = await runMain('evolve', '--help');
    assert.match(help.stdout, /Usage: supervisor evolve list/);
  });
});
