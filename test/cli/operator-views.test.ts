// Issue 15, the operator's side, as hostile tests with real `supervisor` processes, real stores and
// real secrets from the environment:
//   - an approval rule that can never match is refused (exit 2) before anything runs, naming the
//     closest valid spelling: `--deny Terminal --approve terminal` must not run everything;
//   - a secret the scripted model echoes (assistant text, tool arguments, a task's output) never
//     reaches run's readable or --json output, `supervisor logs`, or the store (nor its base64);
//   - a command hiding `; touch MARKER` behind ANSI conceal, \r, an OSC title, U+202E and U+2028 is
//     shown to the operator with every hidden character as visible text, in the list, in `show`
//     and in the approve echo; `--expect` binds the approval to the digest the operator was shown.
// Every run is a real `supervisor run` process. What only parses, refuses before a session opens
// (a rule or core that cannot be used: refused right after the core is read, before the store or
// any supervisor exists) or reads the store (tasks, logs, approvals) runs in-process through
// `main(argv, io)` (issue 17: a CLI start costs 0.2-1.3 CPU-seconds); the approval itself is still
// answered by a real `supervisor approvals approve` process.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, fixture, tempDir, waitForAsync } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const dirs: { remove(): void }[] = [];
const scratch = (prefix: string): string => {
  const d = tempDir(prefix);
  dirs.push(d);
  return d.path;
};
const cli = (args: string[], env: NodeJS.ProcessEnv = process.env) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, env });
/** A YAML double-quoted scalar (JSON is YAML) with every non-ASCII character escaped, so YAML reads the exact string. */
const yamlString = (s: string): string => JSON.stringify(s).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** Raw bytes a terminal would act on, or that reorder or hide text. */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;

/** Every file under dir (store, WAL, artifacts), as bytes. */
function allBytes(dir: string): Buffer {
  const out: Buffer[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) out.push(readFileSync(p));
    }
  };
  walk(dir);
  return Buffer.concat(out);
}

describe('what the operator sees', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  describe('approval rules are checked against what exists', () => {
    function core(marker: string, agentExtra = ''): string {
      return makeCore({
        'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n${agentExtra}model:\n  provider: scripted\n  script: script.yaml\n`,
        'script.yaml': `turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: ${yamlString(`touch ${marker}`)} } }\n  - text: done\n`,
        // Declared, never started (no mcp.connect grant): its names are known from the declaration.
        'agent/mcp/memory.yaml': 'name: memory\ntransport:\n  type: stdio\n  command: /bin/false\n',
      });
    }

    const refused: [flag: string, rule: string, names: RegExp][] = [
      ['--deny', 'Terminal', /did you mean {2}--deny terminal /],
      ['--deny', 'TERMINAL:*', /did you mean {2}--deny terminal /],
      ['--deny', ' terminal', /did you mean {2}--deny terminal /],
      ['--deny', 'terminal:', /terminal/],
      ['--deny', 'capability:terminal.exex', /did you mean {2}--deny capability:terminal\.exec /],
      ['--deny', 'capability:proc.exec*', /capability/],
      ['--deny', 'terminal.exec', /did you mean {2}--deny capability:terminal\.exec /],
      ['--approve', 'mcp.connect:memory', /did you mean {2}--approve capability:mcp\.connect:memory /],
      ['--approve', 'mcp.connect:memroy', /did you mean {2}--approve mcp\.connect\.memory /],
    ];
    for (const [flag, rule, names] of refused) {
      test(`${flag} ${JSON.stringify(rule)} is refused with exit 2 naming the valid spelling, and nothing runs`, async () => {
        const dir = scratch('rules-');
        const marker = join(dir, 'MARKER');
        const r = await runMain('run', core(marker), flag, rule, '--approve', 'terminal', '--state-dir', join(dir, 'state'));
        assert.equal(r.status, 2, r.stdout + r.stderr);
        assert.match(r.stderr, names);
        assert.doesNotMatch(r.stderr, /\n\s+at /, 'a usage error, not a stack trace');
        assert.equal(existsSync(marker), false, 'nothing ran');
        assert.equal(existsSync(join(dir, 'state', 'supervisor.db')), false, 'no session was started');
      });
    }

    test('every documented spelling that exists is accepted and applies exactly (deny wins, case-sensitive names)', () => {
      for (const rule of ['terminal', 'terminal:touch *', 'capability:terminal.exec', 'capability:terminal.*', 'capability:*']) {
        const dir = scratch('rules-ok-');
        const marker = join(dir, 'MARKER');
        const r = cli(['run', core(marker), '--deny', rule, '--approve', 'terminal', '--json', '--state-dir', join(dir, 'state')]);
        assert.equal(r.status, 0, `${rule}: ${r.stderr}`);
        assert.equal(existsSync(marker), false, `--deny ${rule} denied the call`);
      }
      for (const rule of ['mcp.connect.memory', 'capability:mcp.connect:memory', 'capability:mcp.call:memory']) {
        const dir = scratch('rules-ok-');
        const r = cli(['run', core(join(dir, 'MARKER')), '--deny', rule, '--json', '--state-dir', join(dir, 'state')]);
        assert.equal(r.status, 0, `${rule}: ${r.stderr}`);
      }
    });

    test('agent.yaml approval.rules: a capability no tool requires is refused, naming the file, the field and the spelling', async () => {
      const dir = scratch('rules-yaml-');
      const marker = join(dir, 'MARKER');
      const r = await runMain('run', core(marker, "approval:\n  rules:\n    terminal.exec: prompt\n    'termnal.*': deny\n"), '--approve', 'terminal', '--state-dir', join(dir, 'state'));
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /agent\.yaml: approval\.rules\[1\]\.capability "termnal\.\*".*did you mean "terminal\.\*"/);
      assert.equal(existsSync(marker), false);
      const ok = await runMain('catalog', core(marker, "approval:\n  rules:\n    'mcp.connect:memory': deny\n    'terminal.*': prompt\n"), '--json');
      assert.equal(ok.status, 0, `MCP capabilities are known from the declaration: ${ok.stderr}`);
    });
  });

  test('a secret the model echoes (text, tool arguments, task output, base64) is in no view: run, run --json, logs, the store', async () => {
    const secret = `sv-${randomBytes(12).toString('hex')}`;
    const b64 = Buffer.from(secret).toString('base64');
    const env = { ...process.env, SV_VIEW_SECRET: secret };
    // The secret is resolved when the session connects an MCP server whose env binds it; the
    // terminal has no binding, so its background task may run (a bound call may not go background).
    const dir = makeCore({
      'agent.yaml': [
        'name: t',
        'toolsets: [terminal, tasks]',
        "grants: [terminal.exec, task.read, task.control, 'mcp.connect:fx', 'mcp.call:fx', 'secret:TOK']",
        'secrets:',
        '  TOK: { env: SV_VIEW_SECRET }',
        'model:',
        '  provider: scripted',
        '  script: script.yaml',
        '',
      ].join('\n'),
      'agent/mcp/fx.yaml': [
        'name: fx',
        'transport:',
        '  type: stdio',
        `  command: ${JSON.stringify(process.execPath)}`,
        `  args: [${JSON.stringify(fixture('mcp/server.mjs'))}, basic, --marker, ${JSON.stringify(join(scratch('views-mcp-'), 'started'))}]`,
        '  env: [{ name: API_KEY, value: { secret: TOK } }]',
        'approval: { connect: auto, call: auto }',
        '',
      ].join('\n'),
      'script.yaml': [
        'turns:',
        '  - tool_calls:',
        `      - { name: terminal, arguments: { command: ${yamlString(`echo ${secret}; echo ${b64}; printf 'x\\033]0;pwned\\007y\\n'`)}, background: true } }`,
        '  - tool_calls:',
        '      - { name: yield_until, arguments: { timeout_seconds: 20 } }',
        '  - tool_calls:',
        `      - { name: terminal, arguments: { command: ${yamlString(`echo ${secret} ${b64}`)} } }`,
        `  - text: ${yamlString(`the token is ${secret}, in base64 ${b64}`)}`,
        '',
      ].join('\n'),
    });
    for (const json of [false, true]) {
      const state = scratch('views-');
      const r = cli(['run', dir, '--approve', 'mcp.connect.fx', '--approve', 'terminal', '--approve', 'yield_until', ...(json ? ['--json'] : []), '--state-dir', state], env);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const shown = r.stdout + r.stderr;
      assert.match(shown, /\[REDACTED/, 'the echo was there, redacted');
      assert.ok(!shown.includes(secret), `run${json ? ' --json' : ''} printed the secret:\n${shown}`);
      assert.ok(!shown.includes(b64), `run${json ? ' --json' : ''} printed the secret's base64`);
      assert.doesNotMatch(shown, RAW_CONTROL, 'no raw control byte reaches the terminal');
      const store = allBytes(state);
      assert.ok(!store.includes(Buffer.from(secret)) && !store.includes(Buffer.from(b64)), 'the store and artifacts hold no copy (the task summary is the command line)');
      const listed = await runMain('tasks', '--state-dir', state);
      assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(b64), `supervisor tasks printed the secret:\n${listed.stdout}`);
      const tasks = JSON.parse((await runMain('tasks', '--json', '--state-dir', state)).stdout) as { tasks: { id: string; status: string }[] };
      assert.equal(tasks.tasks.length, 1);
      for (const flags of [[], ['--json']]) {
        const logs = await runMain('logs', tasks.tasks[0]!.id, ...flags, '--state-dir', state);
        assert.equal(logs.status, 0, logs.stderr);
        const text = logs.stdout + logs.stderr;
        assert.match(text, /REDACTED/);
        assert.ok(!text.includes(secret) && !text.includes(b64), `logs ${flags.join(' ')} printed the secret:\n${text}`);
        assert.doesNotMatch(text, RAW_CONTROL, 'logs escape what a task printed');
        if (flags.length === 0) assert.match(logs.stdout, /x\\x1b\]0;pwned\\x07y\n/, 'the OSC title is shown as text; the newline stays');
      }
    }
  });

  test('a secret a binding resolves mid-run is removed from everything run prints after it (readable and --json), as from the store', () => {
    const secret = `sv-${randomBytes(12).toString('hex')}`;
    const b64 = Buffer.from(secret).toString('base64');
    const dir = makeCore({
      'agent.yaml': [
        'name: t',
        'toolsets: [terminal]',
        "grants: [terminal.exec, 'secret:TOK']",
        'secrets:',
        '  TOK: { env: SV_VIEW_SECRET }',
        'tools:',
        '  terminal:',
        '    secrets:',
        '      - { secret: TOK, env: TOK, ttl: 1m }',
        'model:',
        '  provider: scripted',
        '  script: script.yaml',
        '',
      ].join('\n'),
      'script.yaml': [
        'turns:',
        '  - tool_calls:',
        '      - { name: terminal, arguments: { command: "echo bound" } }',
        '  - tool_calls:',
        `      - { name: terminal, arguments: { command: ${yamlString(`echo ${secret} ${b64}`)} } }`,
        `  - text: ${yamlString(`the token is ${secret}, in base64 ${b64}`)}`,
        '',
      ].join('\n'),
    });
    for (const json of [false, true]) {
      const state = scratch('views-bound-');
      const r = cli(['run', dir, '--approve', 'terminal', ...(json ? ['--json'] : []), '--state-dir', state], { ...process.env, SV_VIEW_SECRET: secret });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const shown = r.stdout + r.stderr;
      assert.match(shown, /\[REDACTED/);
      assert.ok(!shown.includes(secret) && !shown.includes(b64), `run${json ? ' --json' : ''} printed the secret:\n${shown}`);
      const store = allBytes(state);
      assert.ok(!store.includes(Buffer.from(secret)) && !store.includes(Buffer.from(b64)), 'the store holds no copy');
    }
  });

  test('a command hiding `; touch MARKER` behind ESC[8m, \\r, an OSC title, U+202E and U+2028 is shown whole and visible; the approval is bound to what was shown', async () => {
    const work = scratch('hidden-');
    const state = join(work, 'state');
    const marker = join(work, 'MARKER');
    const command = `ls -la\u001b]0;title\u0007\u202e\u2028\r\u001b[8m; touch ${marker} #\u001b[0m`;
    const dir = makeCore({
      'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': `turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: ${yamlString(command)} } }\n  - text: done\n`,
    });
    const run = spawn(process.execPath, [CLI, 'run', dir, '--json', '--await-approval', '110', '--state-dir', state], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    run.stdout.on('data', (c) => (out += c));
    run.stderr.on('data', (c) => (err += c));
    const closed = new Promise<number | null>((r) => run.once('close', r));
    try {
      const pending = await waitForAsync(
        'a waiting request',
        async () => {
          const r = await runMain('approvals', '--json', '--state-dir', state);
          return r.status === 0 ? (JSON.parse(r.stdout) as { pending: { id: string; summary: string; digest: string }[] }).pending[0] : undefined;
        },
        // A bound on the wait, not a measurement: with three test files at once at load 20-30 the
        // run took more than the former 20 s to ask (issue 17); it waits 110 s for the answer.
        90_000,
        250,
      );
      assert.equal(pending.summary, command, '--json keeps the exact bytes (as JSON escapes)');
      const visible = /ls -la\\x1b\]0;title\\x07\\u202e\\u2028\\r\\x1b\[8m; touch \S+MARKER #\\x1b\[0m/;
      for (const view of [['approvals'], ['approvals', '--json'], ['approvals', 'show', pending.id]]) {
        const r = await runMain(...view, '--state-dir', state);
        assert.equal(r.status, 0, r.stderr);
        assert.doesNotMatch(r.stdout, RAW_CONTROL, `supervisor ${view.join(' ')} wrote a raw control or bidi character`);
        if (!view.includes('--json')) assert.match(r.stdout, visible, `supervisor ${view.join(' ')} shows the hidden part as text`);
        if (!view.includes('--json')) assert.match(r.stdout, new RegExp(`digest ${pending.digest}`));
      }
      assert.equal(existsSync(marker), false, 'nothing ran before the answer');
      const wrong = await runMain('approvals', 'approve', pending.id, '--expect', '0000000000000000', '--state-dir', state);
      assert.equal(wrong.status, 1, 'an approval bound to another digest is refused');
      assert.match(wrong.stderr, /not the request you were shown; nothing was answered/);
      const yes = cli(['approvals', 'approve', pending.id, '--expect', pending.digest, '--state-dir', state]);
      assert.equal(yes.status, 0, yes.stderr);
      assert.doesNotMatch(yes.stdout, RAW_CONTROL, 'the approve echo wrote a raw control character');
      assert.match(yes.stdout, visible);
      assert.equal(await closed, 0, out + err);
      assert.doesNotMatch(out + err, RAW_CONTROL, "run's own output escapes the command too");
      assert.equal(existsSync(marker), true, 'what was approved (and shown) ran');
    } finally {
      if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL');
      await closed;
    }
  });
});
