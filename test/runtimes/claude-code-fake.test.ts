// `supervisor run --runtime claude-code` against the fake CLI (test/fixtures/fake-claude): real
// supervisor processes, the real per-run MCP server over loopback HTTP, a real store; the fake is
// the only stand-in, for the external binary. Proves routing, denial of built-ins, budget
// enforcement (limit_hit, the whole tree killed), fail-closed flags and audit folding.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../src/store/index.js';
import { chainOf } from '../helpers/store-query.js';
import { CLI, fixture, markedPids, tempDir } from '../helpers/procs.js';
import { runMain, runMainWithEnv } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const DEMO = fileURLToPath(new URL('../../../examples/demo/', import.meta.url));
const FAKE = fixture('fake-claude/claude');
const dirs: { remove(): void }[] = [];
const state = (): string => {
  const d = tempDir('cc-');
  dirs.push(d);
  return d.path;
};
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, 'run', ...args], { encoding: 'utf8', timeout: 90_000, env: { ...process.env, SUPERVISOR_CLAUDE_BIN: FAKE, ...env } });
// The chain checks and the unknown --runtime (a usage error before anything opens) run in-process
// through `main(argv, io)`: the same code without a node start each (issue 17); every run is real.
const verify = (dir: string, session: string) => runMain('audit', 'verify', '--session', session, '--json', '--state-dir', dir);
const lines = (s: string): any[] => s.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const chain = chainOf;
const core = (limits: string) =>
  makeCore({
    'agent.yaml': `name: ext\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\nlimits:${limits ? `\n${limits}` : ' {}'}\n`,
  });

describe('run --runtime claude-code (fake CLI)', { skip: process.platform !== 'linux' && 'the fake CLI and the terminal run POSIX commands' }, () => {
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('examples/demo: the CLI calls only catalog tools through the supervisor, its built-in Bash does not exist, the run folds into a chain that verifies', async () => {
    const dir = state();
    const sentinel = join(dir, 'pwned');
    const prompt = [
      'Count the words, then look around.',
      `fake:builtin Bash {"command":"echo pwned > ${sentinel}"}`,
      'fake:call word_count {"text":"every effect goes through the supervisor"}',
      'fake:call terminal {"command":"echo via-the-supervisor"}',
      'fake:call memory_read_graph {}',
    ].join('\n');
    const r = run([DEMO, '--runtime', 'claude-code', '--json', '--prompt', prompt, '--state-dir', dir]);
    assert.equal(r.status, 0, r.stderr + r.stdout);
    const ev = lines(r.stdout);
    assert.equal(ev[0].runtime, 'claude-code');
    const init = ev.find((e) => e.type === 'runtime_init');
    assert.ok(init.tools.length > 0);
    assert.ok(init.tools.every((t: string) => t.startsWith('mcp__supervisor__')), `only catalog tools: ${init.tools}`);
    assert.ok(init.tools.includes('mcp__supervisor__word_count') && init.tools.includes('mcp__supervisor__memory_read_graph'));
    assert.deepEqual(ev.filter((e) => e.type === 'builtin_attempt').map((e) => e.name), ['Bash']);
    assert.equal(existsSync(sentinel), false, 'the built-in never ran');
    const results = ev.filter((e) => e.type === 'tool_result');
    assert.deepEqual(results.map((e) => [e.tool, e.ok]), [['word_count', true], ['terminal', true], ['memory_read_graph', true]]);
    assert.deepEqual(JSON.parse(results[0].view.output), { words: 6, lines: 1, characters: 40 });
    assert.match(results[1].view.output, /via-the-supervisor/);
    const end = ev.at(-1);
    assert.deepEqual([end.type, end.outcome, end.effects.ok, end.effects.failed], ['end', 'completed', 3, 0]);
    assert.equal(typeof end.cost_usd, 'number');
    const started = ev.find((e) => e.type === 'runtime_started');
    assert.deepEqual(markedPids(started.spawnId), [], 'the CLI tree is gone');
    const v = await verify(dir, end.session);
    assert.equal(v.status, 0, v.stdout + v.stderr);
    const kinds = chain(dir, end.session).map((e) => e.kind);
    for (const k of ['runtime.started', 'runtime.init', 'runtime.assistant', 'runtime.builtin_attempt', 'runtime.tool_result', 'runtime.result', 'runtime.exited', 'effect.completed']) {
      assert.ok(kinds.includes(k), `${k} in ${kinds.join(',')}`);
    }
    const argv: string[] = chain(dir, end.session).find((e) => e.kind === 'runtime.started')!.payload.argv;
    assert.ok(argv.join(' ').includes('--tools  --disallowedTools') && argv.includes('--strict-mcp-config'), argv.join(' '));
    assert.ok(!JSON.stringify(chain(dir, end.session)).includes('Bearer '), 'no bearer token in the chain');
    assert.equal(existsSync(argv[argv.indexOf('--mcp-config') + 1]!), false, 'the MCP config (it holds the token) is gone with the run');
  });

  test('a hook in the workspace\'s .claude/settings.json never runs (--setting-sources user, disableAllHooks)', () => {
    const dir = state();
    const sentinel = join(dir, 'hook-ran');
    const c = makeCore({
      'agent.yaml': 'name: ext\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\n',
      '.claude/settings.json': JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: `touch ${sentinel}` }] }] } }),
    });
    const r = run([c, '--runtime', 'claude-code', '--json', '--prompt', 'fake:call terminal {"command":"echo hi"}', '--state-dir', dir]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(existsSync(sentinel), false, 'the workspace hook ran');
  });

  test('a CLI that ignores its budget: the supervisor counts tool calls, kills the whole tree (grandchild included) and ends with limit_hit', async () => {
    const dir = state();
    const r = run([core('  max_iterations: 3\n'), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode runaway', '--state-dir', dir]);
    assert.equal(r.status, 1, r.stderr + r.stdout);
    const ev = lines(r.stdout);
    const end = ev.at(-1);
    assert.deepEqual([end.outcome, end.effects.ok], ['limit_hit', 3]);
    assert.match(end.reason, /^tool_calls/);
    assert.equal(ev.find((e) => e.type === 'runtime_limit').limit, 'tool_calls');
    const started = ev.find((e) => e.type === 'runtime_started');
    assert.deepEqual(markedPids(started.spawnId), [], 'no member of the tree survives');
    const exited = chain(dir, end.session).find((e) => e.kind === 'runtime.exited')!.payload;
    assert.equal(exited.outcome, 'limit_hit');
    assert.ok(exited.killed.descendants >= 1, `the grandchild was killed with the tree: ${JSON.stringify(exited.killed)}`);
    assert.equal(exited.killed.survivors, 0);
    assert.equal((await verify(dir, end.session)).status, 0);
  });

  test('a CLI that floods assistant turns past its budget: nothing after the limit is stored, the tree is killed, the store stays bounded', async () => {
    const dir = state();
    const r = run([core('  max_iterations: 2\n'), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode flood', '--state-dir', dir]);
    assert.equal(r.status, 1, r.stderr.slice(-2000));
    const ev = lines(r.stdout);
    const end = ev.at(-1);
    assert.equal(end.outcome, 'limit_hit');
    assert.match(end.reason, /^turns/);
    assert.deepEqual(markedPids(ev.find((e) => e.type === 'runtime_started').spawnId), [], 'no member of the tree survives');
    const events = chain(dir, end.session);
    // max_iterations 2: at most 3 turns (the answer after the last call) are within the budget.
    const assistant = events.filter((e) => e.kind === 'runtime.assistant');
    assert.ok(assistant.length <= 3, `${assistant.length} runtime.assistant events stored`);
    assert.ok(events.length < 20, `${events.length} events stored`);
    const exited = events.find((e) => e.kind === 'runtime.exited')!.payload;
    assert.equal(exited.outcome, 'limit_hit');
    assert.equal(exited.killed.survivors, 0);
    assert.ok(exited.lines.after_end >= 0, JSON.stringify(exited.lines));
    const db = openStore(join(dir, 'supervisor.db'));
    try {
      const m = db.prepare(`SELECT count(*) AS n, coalesce(sum(length(content)), 0) AS bytes FROM messages WHERE session_id = ? AND role = 'assistant'`).get(end.session) as { n: number; bytes: number };
      assert.ok(m.n <= 3, `${m.n} assistant messages stored`);
      assert.ok(m.bytes <= 3 * 700_000, `${m.bytes} bytes of assistant messages stored`);
    } finally {
      db.close();
    }
    assert.equal((await verify(dir, end.session)).status, 0);
  });

  test('a CLI that floods within its turn budget: the stored output has its own byte budget, then the run ends', async () => {
    const dir = state();
    const r = run([core('  max_iterations: 32\n'), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode flood', '--state-dir', dir]);
    assert.equal(r.status, 1, r.stderr.slice(-2000));
    const ev = lines(r.stdout);
    const end = ev.at(-1);
    assert.equal(end.outcome, 'limit_hit');
    assert.match(end.reason, /^output_bytes/);
    assert.deepEqual(markedPids(ev.find((e) => e.type === 'runtime_started').spawnId), []);
    const db = openStore(join(dir, 'supervisor.db'));
    try {
      const m = db.prepare(`SELECT count(*) AS n, coalesce(sum(length(content)), 0) AS bytes FROM messages WHERE session_id = ? AND role = 'assistant'`).get(end.session) as { n: number; bytes: number };
      assert.ok(m.n > 3 && m.bytes <= 8 * 1024 * 1024, `${m.n} assistant messages, ${m.bytes} bytes stored`);
    } finally {
      db.close();
    }
    assert.equal((await verify(dir, end.session)).status, 0);
  });

  test('wall clock: a CLI that never finishes is stopped at limits.timeout_seconds', () => {
    const dir = state();
    const t0 = Date.now();
    const r = run([core('  timeout_seconds: 1.5\n'), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode hang', '--state-dir', dir]);
    assert.equal(r.status, 1, r.stderr);
    const end = lines(r.stdout).at(-1);
    assert.equal(end.outcome, 'limit_hit');
    assert.match(end.reason, /^wall_clock/);
    assert.ok(Date.now() - t0 < 30_000);
    assert.deepEqual(markedPids(lines(r.stdout).find((e) => e.type === 'runtime_started').spawnId), []);
  });

  test('cost: a reported cost over limits.max_cost_usd is limit_hit; the CLI was given the same ceiling', () => {
    const dir = state();
    const r = run([core('  max_cost_usd: 0.5\n'), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode costly', '--state-dir', dir]);
    assert.equal(r.status, 1, r.stderr);
    const ev = lines(r.stdout);
    assert.match(ev.at(-1).reason, /^cost_usd/);
    assert.equal(ev.find((e) => e.type === 'runtime_started').budgets.maxCostUsd, 0.5);
  });

  test('a CLI that offers a built-in at init despite the flags is stopped (fail closed) and the breach is in the chain', async () => {
    const dir = state();
    const r = run([core(''), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode expose-builtin\nfake:call terminal {"command":"echo hi"}', '--state-dir', dir]);
    assert.equal(r.status, 3, r.stderr);
    const end = lines(r.stdout).at(-1);
    assert.equal(end.outcome, 'failed');
    assert.match(end.reason, /RUNTIME_BUILTIN_EXPOSED.*Bash/);
    assert.deepEqual(chain(dir, end.session).find((e) => e.kind === 'runtime.boundary_breach')!.payload.tools, ['Bash']);
    assert.equal((await verify(dir, end.session)).status, 0);
  });

  test('hostile output (not JSON, a 3 MiB line, wrong types) is refused line by line; the run goes on and the chain verifies', async () => {
    const dir = state();
    const r = run([core(''), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode hostile\nfake:call terminal {"command":"echo still-here"}', '--state-dir', dir]);
    assert.equal(r.status, 0, r.stderr);
    const ev = lines(r.stdout);
    assert.match(ev.find((e) => e.type === 'tool_result').view.output, /still-here/);
    const end = ev.at(-1);
    const refused = chain(dir, end.session).filter((e) => e.kind === 'runtime.line_refused').map((e) => e.payload.reason);
    assert.deepEqual(refused, ['not JSON', 'oversized']);
    assert.equal((await verify(dir, end.session)).status, 0);
  });

  test('a CLI that crashes mid-line fails the run (exit 3) with its exit code in the chain', () => {
    const dir = state();
    const r = run([core(''), '--runtime', 'claude-code', '--json', '--prompt', 'fake:mode crash', '--state-dir', dir]);
    assert.equal(r.status, 3, r.stderr);
    const end = lines(r.stdout).at(-1);
    assert.equal(end.outcome, 'failed');
    assert.equal(chain(dir, end.session).find((e) => e.kind === 'runtime.exited')!.payload.exit_code, 7);
  });

  test('flags that would widen the authority are refused before anything is spawned', async () => {
    const dir = state();
    const marker = join(dir, 'spawned');
    const bin = join(dir, 'claude');
    writeFileSync(bin, `#!/bin/sh\ntouch ${marker}\n`);
    chmodSync(bin, 0o755);
    // The first through the real CLI, the others in-process through `main(argv, io)`: a refusal
    // before the session opens needs no node start of its own (issue 17). The whole list of
    // refused flags is checked against the adapter in claude-code-adapter.test.ts.
    const refused: string[][] = [['--dangerously-skip-permissions'], ['--permission-mode=bypassPermissions'], ['--allowedTools', 'Bash'], ['--add-dir', '/'], ['--some-future-flag']];
    for (const [i, args] of refused.entries()) {
      const argv = [core(''), '--runtime', 'claude-code', '--state-dir', dir, ...args.flatMap((a) => ['--runtime-arg', a])];
      const r = i === 0 ? run(argv, { SUPERVISOR_CLAUDE_BIN: bin }) : await runMainWithEnv({ SUPERVISOR_CLAUDE_BIN: bin }, 'run', ...argv);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /refused|allowlist/, args.join(' '));
      assert.equal(existsSync(marker), false, `${args.join(' ')} spawned the CLI`);
    }
    const missing = await runMainWithEnv({ SUPERVISOR_CLAUDE_BIN: join(dir, 'nope') }, 'run', core(''), '--runtime', 'claude-code', '--state-dir', dir);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /SUPERVISOR_CLAUDE_BIN=.*not an executable/);
    // An allowed pass-through reaches the CLI.
    const ok = run([core(''), '--runtime', 'claude-code', '--json', '--prompt', 'fake:call terminal {"command":"echo ok"}', '--state-dir', dir, '--runtime-arg', '--model', '--runtime-arg', 'sonnet']);
    assert.equal(ok.status, 0, ok.stderr);
  });

  test('agent.yaml runtime: picks the target; --runtime local overrides it', async () => {
    const dir = state();
    const c = makeCore({
      'agent.yaml': 'name: ext\nruntime: claude-code\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': 'turns:\n  - text: local engine here\n',
    });
    const ext = run([c, '--json', '--prompt', 'fake:call terminal {"command":"echo from-yaml"}', '--state-dir', dir]);
    assert.equal(ext.status, 0, ext.stderr);
    assert.equal(lines(ext.stdout)[0].runtime, 'claude-code');
    const local = run([c, '--json', '--runtime', 'local', '--state-dir', dir]);
    assert.equal(local.status, 0, local.stderr);
    const ev = lines(local.stdout);
    assert.equal(ev[0].runtime, 'local');
    assert.ok(ev.some((e) => e.type === 'final' && e.text === 'local engine here'));
    const bad = await runMain('run', c, '--runtime', 'codex', '--state-dir', dir);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /registered: local, claude-code/);
  });
});

