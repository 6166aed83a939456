// The authored-tests gate of an evolve run (issue 19): each authored tool's `*.test.mjs` runs with
// `node --test` in the sandbox tier, and a failure blocks promotion with the failing test named.
// The candidate's tests are the agent's code: one of them tries what an attacker would (write the
// live core and the state dir, read the home, call a server on 127.0.0.1) and the test asserts what
// it got, not what the gate printed. Real Git, real bubblewrap, real processes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { loadCore } from '../../src/core/index.js';
import { startRun, type EvolveRun } from '../../src/evolve/evolver.js';
import { ProcessSupervisor, sandboxAvailability } from '../../src/process/index.js';
import { git, removeRepos, scratchDir } from './git-fixture.js';

const AGENT = 'name: evolving\ngrants: ["tool.call:greet"]\n';
const TOOL = 'name: greet\ndescription: Says hello.\ninput_schema: { type: object, properties: { who: { type: string } } }\ncapability: tool.call:greet\napproval: auto\nrisk: low\nentry: index.mjs\n';
const CODE = 'export async function handler(input) { return `hello ${input?.who ?? "you"}`; }\n';
const PASSING = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { handler } from './index.mjs';\ntest('greets', async () => assert.equal(await handler({ who: 'ada' }), 'hello ada'));\n";
const FAILING = "import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { handler } from './index.mjs';\ntest('greets politely', async () => assert.equal(await handler({ who: 'ada' }), 'good day, ada'));\n";

const NO_SANDBOX = !sandboxAvailability().usable && `the sandbox tier is not usable here: ${sandboxAvailability().reason}`;

function repoWithCore(): { repo: string; core: string } {
  const repo = scratchDir('evolve-tests-repo-');
  git(repo, 'init', '--quiet');
  const core = join(repo, 'core');
  mkdirSync(core, { recursive: true });
  writeFileSync(join(core, 'agent.yaml'), AGENT);
  git(repo, 'add', '-A');
  git(repo, 'commit', '--quiet', '-m', 'init');
  return { repo, core };
}

const toolFiles = (test: string) => [
  { path: 'agent/tools/greet/tool.yaml', content: TOOL },
  { path: 'agent/tools/greet/index.mjs', content: CODE },
  { path: 'agent/tools/greet/greet.test.mjs', content: test },
];

describe('evolve gate: authored tools\' tests in the sandbox tier', { skip: process.platform !== 'linux' ? 'bubblewrap is the Linux sandbox' : NO_SANDBOX }, () => {
  let stateDir: string;
  let supervisor: ProcessSupervisor;
  let runs = 0;
  before(() => {
    stateDir = scratchDir('evolve-tests-state-');
    supervisor = ProcessSupervisor.open({ stateDir });
  });
  after(async () => {
    await supervisor.close();
    removeRepos();
  });
  const start = async (core: string, edits: { path: string; content: string }[]): Promise<EvolveRun> =>
    startRun({ live: await loadCore(core), runId: `t${++runs}`, stateDir, principal: 'p', edits, supervisor });
  const gate = (run: EvolveRun) => run.gates.find((g) => g.gate === 'authored_tests')!;

  test('passing tests: the gate passes in the sandbox tier and the run is ready', async () => {
    const { core } = repoWithCore();
    const run = await start(core, toolFiles(PASSING));
    assert.equal(gate(run).ok, true, gate(run).detail);
    assert.match(gate(run).detail, /passed in the sandbox tier: greet \(1 file\(s\)\)/);
    assert.equal(run.status, 'ready');
  });

  test('a failing test blocks the run (gates_failed) and the gate names it', async () => {
    const { core } = repoWithCore();
    const run = await start(core, toolFiles(FAILING));
    assert.equal(run.status, 'gates_failed');
    assert.equal(gate(run).ok, false);
    assert.match(gate(run).detail, /^greet: exit 1\n/);
    assert.match(gate(run).detail, /not ok \d+ - greets politely/);
  });

  test('a test that attacks: no write to the live core or the state dir, no home, no network; its tree is gone', async () => {
    const { core } = repoWithCore();
    const hits: string[] = [];
    const server: Server = createServer((s) => {
      hits.push('connected');
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const liveSentinel = join(core, 'pwned-by-test');
    const stateSentinel = join(stateDir, 'pwned-by-test');
    const home = homedir();
    // Every attempt is caught, so the test "passes": what matters is what it managed to do.
    const attack = `import { test } from 'node:test';
import { writeFileSync, readdirSync, appendFileSync } from 'node:fs';
import { connect } from 'node:net';
const tried = [];
const attempt = (what, f) => { try { f(); tried.push(what + ': done'); } catch (e) { tried.push(what + ': ' + e.code); } };
test('attacks', async () => {
  attempt('live core', () => writeFileSync(${JSON.stringify(liveSentinel)}, 'x'));
  attempt('state dir', () => writeFileSync(${JSON.stringify(stateSentinel)}, 'x'));
  attempt('home', () => readdirSync(${JSON.stringify(home)}));
  attempt('own folder', () => appendFileSync('index.mjs', '// pwned'));
  await new Promise((r) => { const s = connect(${port}, '127.0.0.1'); s.on('connect', () => { tried.push('network: done'); s.destroy(); r(); }); s.on('error', (e) => { tried.push('network: ' + e.code); r(); }); });
  console.log('TRIED ' + JSON.stringify(tried));
});
`;
    try {
      const run = await start(core, toolFiles(attack));
      assert.equal(gate(run).ok, true, gate(run).detail);
      assert.equal(existsSync(liveSentinel), false, 'the test wrote into the live core');
      assert.equal(existsSync(stateSentinel), false, 'the test wrote into the state dir');
      assert.deepEqual(hits, [], 'the test reached a server on the host loopback');
      // The candidate's own code is read-only to its tests: what was reviewed is what is promoted.
      const candidateCode = join(run.worktree, 'core', 'agent', 'tools', 'greet', 'index.mjs');
      assert.equal(readFileSync(candidateCode, 'utf8'), CODE);
      assert.equal(git(run.worktree, 'status', '--porcelain'), '', 'the worktree is as committed');
      assert.deepEqual(supervisor.liveTrees().map((t) => t.spawnId), [], 'the test trees ended with the gate');
    } finally {
      server.close();
    }
  });
});
