// examples/evolve end to end (issue 19, "done when"): the real CLI, offline, on a copy of the core in
// a fresh Git repository: start, review with the security diff, promote, and the next turn calling
// the promoted tool; the chain verifies and the core's branch holds the run's commit.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runMain } from '../helpers/cli.js';
import { tempDir } from '../helpers/procs.js';
import { git } from './git-fixture.js';

const TRY = fileURLToPath(new URL('../../../examples/evolve/try.sh', import.meta.url));

describe('examples/evolve', { skip: process.platform === 'win32' && 'a bash script' }, () => {
  const dirs = [tempDir('evolve-example-'), tempDir('evolve-example-state-')];
  after(() => {
    for (const d of dirs) d.remove();
  });

  test('try.sh: the agent adds a tool, the review shows it, the promotion lands, the next turn uses it', () => {
    const work = join(dirs[0]!.path, 'core');
    const r = spawnSync('bash', [TRY, dirs[1]!.path], { encoding: 'utf8', timeout: 180_000, env: { ...process.env, EVOLVE_DEMO_DIR: work } });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /"added": \[\s*\{\s*"name": "greet"/, 'the review shows the new tool in the security diff');
    assert.match(r.stdout, /→ evolve_core \{"action":"promote".*\n {2}✓ approved by rule/);
    assert.match(r.stdout, /Hello, operator! \(from a tool this agent gave itself\)/);
    assert.match(r.stdout, /completed after 2 user turn\(s\).*4 tool call\(s\) ran, 0 refused or failed/);
    assert.match(git(work, 'log', '--format=%s'), /^evolve tk_[0-9a-f]+: 2 edit\(s\)\nthe core before it evolves$/);
    assert.match(r.stdout, /tk_[0-9a-f]+ {2}promoted/);
  });

  test('the chain of that session verifies', async () => {
    const v = await runMain('audit', 'verify', '--state-dir', dirs[1]!.path);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });
});
