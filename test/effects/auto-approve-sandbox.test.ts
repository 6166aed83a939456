// Issue 15, hostile: what an attacker gets from auto-approval by class. Real processes, real
// bubblewrap, real secrets, a real SQLite state dir; every assertion is about bytes (in the model
// view, the store, the artifacts), never about a classification label.
//   break 2: a call that binds a secret is never approved by a command class;
//   break 4: a symlink already in the workspace points at nothing inside the sandbox;
//   daemon escape: a sandboxed command cannot reach a UNIX socket outside it;
//   fail closed: without a sandbox, no auto-approval by class (said once per run), and
//   terminal.sandbox: always refuses.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { ApprovalRules, NonInteractiveApprover, RuleApprover, type Approver, type ApprovalRequest } from '../../src/policy/index.js';
import { sandboxAvailability } from '../../src/process/index.js';
import type { EffectOutcome } from '../../src/effects/index.js';
import { filesUnder, tempDir } from '../helpers/procs.js';
import { runtimeSuite } from './runtime-fixture.js';

const AUTO = 'approval:\n  default: prompt\n  auto_approve: [read-only]\n';

/** The bytes the attacker could get: every view of the outcome, and every file of the state dir. */
function leaked(out: EffectOutcome, stateDir: string, needles: readonly string[]): string[] {
  const found: string[] = [];
  const views = JSON.stringify(out.views);
  for (const n of needles) if (views.includes(n)) found.push(`views: ${n}`);
  for (const f of filesUnder(stateDir)) {
    if (statSync(f).size > 64 * 1024 * 1024) continue;
    const bytes = readFileSync(f);
    for (const n of needles) if (bytes.includes(n)) found.push(`${f}: ${n}`);
  }
  return found;
}

const sandboxed = (out: EffectOutcome): unknown => (out.views.durable.audit as { sandbox?: { sandboxed: boolean } } | undefined)?.sandbox?.sandboxed;
const source = (out: EffectOutcome): unknown => (out.views.durable.approval as { source?: string } | null)?.source;

describe('auto-approval means sandboxed (issue 15)', { skip: process.platform !== 'linux' && 'bubblewrap is Linux only' }, () => {
  const suite = runtimeSuite();
  const stateDir = (): string => dirname(suite.db().name);
  const outside = tempDir('sv-outside-');
  after(() => outside.remove());

  test('precondition: bubblewrap works here (the positive tests below use the real sandbox)', () => {
    const a = sandboxAvailability();
    assert.equal(a.usable, true, a.reason);
  });

  describe('break 2: a secret bound to the terminal is never handed out by a command class', () => {
    const SRC = 'SV_I15_TOK_SRC';
    const value = `tok${randomBytes(10).toString('hex')}`;
    process.env[SRC] = value;
    after(() => delete process.env[SRC]);
    // The forms the commands below would print: raw, reversed, od's one char per column, hex, base32.
    const forms = [
      value,
      [...value].reverse().join(''),
      [...value.slice(0, 8)].join('   '),
      Buffer.from(value).toString('hex').slice(0, 16),
      Buffer.from(value.slice(0, 10)).toString('hex').replace(/(..)(..)/g, '$1$2 ').slice(0, 14),
    ];

    async function secretRuntime(approver: Approver) {
      const agent = [
        'name: t',
        'toolsets: [terminal]',
        "grants: [terminal.exec, 'secret:TOK']",
        `secrets:\n  TOK: { env: ${SRC} }`,
        'tools:\n  terminal:\n    secrets:\n      - { secret: TOK, env: TOK, ttl: 1m }',
        AUTO,
      ].join('\n');
      return suite.runtime({ files: { 'agent.yaml': agent }, approver, principal: 'p' });
    }

    for (const command of [
      'printenv TOK | od -An -c',
      'printenv TOK | xxd',
      'printenv TOK | rev',
      'printenv TOK | base32',
      'env | sort',
      "cat /proc/self/environ | tr '\\0' '\\n'",
      "sh -c 'echo $TOK' | od",
      'printenv',
      'ls',
    ]) {
      test(`${command}: not auto-approved (denied without a terminal), and no form of the secret reaches a view or the store`, async () => {
        const r = await secretRuntime(new NonInteractiveApprover());
        const out = await r.runtime.execute(r.runtime.request('terminal', { command: `${command} > /dev/null; touch marker; ${command}` })!, r.ctx);
        const plain = await r.runtime.execute(r.runtime.request('terminal', { command })!, r.ctx);
        for (const o of [plain, out]) {
          // What the attacker got first: no form of the value in any view, the store or the artifacts.
          assert.deepEqual(leaked(o, stateDir(), forms), []);
          assert.deepEqual([o.ok, !o.ok && o.code, !o.ok && o.step], [false, 'APPROVAL_DENIED', 5], JSON.stringify(o.views.model));
          assert.notEqual(source(o), 'policy');
          assert.match(!o.ok ? o.message : '', /binds a secret is never approved by a command class/);
        }
        assert.equal(existsSync(join(r.dir, 'marker')), false);
      });
    }

    test('the approval request names the secrets the call binds (names only), and an explicit yes still delivers it', async () => {
      const seen: ApprovalRequest[] = [];
      const yes = new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] }));
      const recording: Approver = { decide: async (req, signal) => (seen.push(req), yes.decide(req, signal)) };
      const r = await secretRuntime(recording);
      const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'printenv TOK | wc -c' })!, r.ctx);
      assert.equal(out.ok, true);
      assert.deepEqual(seen.map((q) => q.secrets), [['TOK as $TOK']]);
      assert.ok(!JSON.stringify(seen.map((q) => ({ ...q, preview: q.preview.text }))).includes(value));
      assert.match(out.ok ? out.views.model.content : '', new RegExp(`\\b${value.length + 1}\\b`), 'the command got the value');
      assert.equal(sandboxed(out), false, 'an explicit approval runs as today: unsandboxed');
    });
  });

  describe('break 4: a link in the workspace leads nowhere inside the sandbox', () => {
    const mark = `outside-marker-${randomBytes(8).toString('hex')}`;
    const stateMark = `state-marker-${randomBytes(8).toString('hex')}`;

    async function linkedWorkspace() {
      const r = await suite.runtime({ files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n${AUTO}`, 'inside.txt': 'inside-content\n' }, approver: new NonInteractiveApprover(), principal: 'p' });
      const secretDir = join(outside.path, randomBytes(4).toString('hex'));
      mkdirSync(secretDir);
      writeFileSync(join(secretDir, 'passwd'), `root:x:0:0:${mark}\n`);
      writeFileSync(join(stateDir(), 'state-marker.txt'), `${stateMark}\n`);
      symlinkSync(join(secretDir, 'passwd'), join(r.dir, 'pw'));
      symlinkSync(secretDir, join(r.dir, 'dirlink'));
      symlinkSync('/etc/passwd', join(r.dir, 'etcpw'));
      symlinkSync('/etc', join(r.dir, 'etc'));
      symlinkSync('/root', join(r.dir, 'rootl'));
      symlinkSync(stateDir(), join(r.dir, 'statel'));
      const call = (command: string) => r.runtime.execute(r.runtime.request('terminal', { command })!, r.ctx);
      return { ...r, call };
    }

    test('cat *, grep -R, find -L, cat pw: auto-approved, run sandboxed, and print nothing from outside the workspace', async () => {
      const w = await linkedWorkspace();
      const hostPasswd = readFileSync('/etc/passwd', 'utf8').split('\n')[0]!;
      // The classifier cannot see where a glob or a recursive walk leads: these are auto-approved.
      for (const command of ['cat *', 'head -n 5 *', 'grep -R root: .', 'grep -R x: .', 'find -L . -name passwd', 'find -L . -type f', 'ls -laR']) {
        const out = await w.call(command);
        // What the attacker got first: nothing from outside the workspace in any view, the store or the artifacts.
        assert.deepEqual(leaked(out, stateDir(), [mark, hostPasswd, 'root:x:0:0']), [], command);
        // The state dir holds the marker file itself: only the views are checked for it.
        assert.equal(JSON.stringify(out.views).includes(stateMark), false, `${command} read the state dir`);
        assert.equal(out.ok, true, `${command}: ${JSON.stringify(!out.ok && out.message)}`);
        assert.equal(source(out), 'policy', `${command} is auto-approved by class`);
        assert.equal(sandboxed(out), true, `${command} ran sandboxed`);
      }
      // A link named on the command line is caught by the classifier (it asks); either way nothing leaks.
      for (const command of ['cat pw', 'cat etcpw', 'ls -la rootl etc statel dirlink', 'cat statel/state-marker.txt', 'grep -r x: dirlink etc']) {
        const out = await w.call(command);
        if (out.ok) assert.equal(sandboxed(out), true, `${command} ran, so it ran sandboxed`);
        else assert.equal(out.code, 'APPROVAL_DENIED', command);
        assert.deepEqual(leaked(out, stateDir(), [mark, hostPasswd, 'root:x:0:0']), [], command);
        assert.equal(JSON.stringify(out.views).includes(stateMark), false, `${command} read the state dir`);
      }
    });

    test('a plain in-workspace cat still works when auto-approved (and the audit says sandboxed, and why)', async () => {
      const w = await linkedWorkspace();
      const out = await w.call('cat inside.txt');
      assert.equal(out.ok && out.views.model.content.includes('inside-content'), true, JSON.stringify(out.views.model));
      assert.deepEqual(out.views.durable.audit && (out.views.durable.audit as { sandbox: unknown }).sandbox, { sandboxed: true, because: 'class', why: 'auto-approved by class read-only' });
      const detail = out.views.durable.detail as { spawnId: string; artifacts: unknown; sandboxed: boolean };
      assert.match(detail.spawnId, /^sp_/, 'a supervised tree with a spawn record');
      assert.equal(detail.sandboxed, true);
    });

    test('without the sandbox the same links print the outside file (the test can fail: control run, explicit approval)', async () => {
      const w = await linkedWorkspace();
      const r = await suite.runtime({ files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n` }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p', workspace: w.dir });
      const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'cat pw' })!, r.ctx);
      assert.equal(sandboxed(out), false);
      assert.equal(out.ok && out.views.model.content.includes(mark), true, 'unsandboxed, the link reaches the marker');
    });
  });

  describe("a workspace that is, or contains, the user's home: the sandbox would show the home, so no class approves", () => {
    const mark = `home-key-${randomBytes(8).toString('hex')}`;

    /** A home with a key in it, under a parent directory; HOME points at it while `fn` runs. */
    async function withHome<T>(fn: (home: string, parent: string) => Promise<T>): Promise<T> {
      const parent = join(outside.path, `h-${randomBytes(4).toString('hex')}`);
      const home = join(parent, 'home');
      mkdirSync(join(home, '.ssh'), { recursive: true });
      mkdirSync(join(home, 'project'));
      writeFileSync(join(home, '.ssh', 'id_key'), `${mark}\n`);
      writeFileSync(join(home, 'project', 'inside.txt'), 'project-content\n');
      const saved = process.env.HOME;
      process.env.HOME = home;
      try {
        return await fn(home, parent);
      } finally {
        if (saved === undefined) delete process.env.HOME;
        else process.env.HOME = saved;
      }
    }

    test('workspace = home, and a workspace containing home: cat of the key is not auto-approved, and nothing of it leaks', async () => {
      await withHome(async (home, parent) => {
        // Other spellings of the same place: a link to the home, and a path through `..`.
        const link = join(outside.path, `link-${randomBytes(4).toString('hex')}`);
        symlinkSync(home, link);
        for (const [workspace, command] of [
          [home, 'cat .ssh/id_key'],
          [link, 'cat .ssh/id_key'],
          [`${home}/project/..`, 'cat .ssh/id_key'],
          [home, 'grep -R home-key .'],
          [parent, 'cat home/.ssh/id_key'],
          [parent, 'find -L . -name id_key'],
        ] as const) {
          const r = await suite.runtime({ files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n${AUTO}` }, approver: new NonInteractiveApprover(), principal: 'p', workspace });
          const out = await r.runtime.execute(r.runtime.request('terminal', { command })!, r.ctx);
          assert.deepEqual(leaked(out, stateDir(), [mark]), [], `${workspace}: ${command}`);
          assert.deepEqual([out.ok, !out.ok && out.code], [false, 'APPROVAL_DENIED'], `${workspace}: ${command}`);
          assert.match(!out.ok ? out.message : '', /home/, 'the refusal says why');
        }
      });
    });

    test('terminal.sandbox: always with the home as workspace refuses even an explicit approval, and reads nothing', async () => {
      await withHome(async (home) => {
        const r = await suite.runtime({ files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nterminal:\n  sandbox: always\n' }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p', workspace: home });
        const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'cat .ssh/id_key' })!, r.ctx);
        assert.deepEqual(leaked(out, stateDir(), [mark]), []);
        assert.equal(out.ok, false);
        assert.match(!out.ok ? out.message : '', /home/);
      });
    });

    test('the control: a workspace inside the home is auto-approved, sandboxed, and still reads its own files (not the home)', async () => {
      await withHome(async (home) => {
        const r = await suite.runtime({ files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n${AUTO}` }, approver: new NonInteractiveApprover(), principal: 'p', workspace: join(home, 'project') });
        const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'cat inside.txt' })!, r.ctx);
        assert.equal(out.ok && out.views.model.content.includes('project-content'), true, JSON.stringify(out.views.model));
        assert.deepEqual([source(out), sandboxed(out)], ['policy', true]);
      });
    });
  });

  describe('daemon escape: a sandboxed command cannot reach a UNIX socket outside it', () => {
    let server: Server | null = null;
    after(() => server?.close());

    test('a server on a host /tmp socket and in $XDG_RUNTIME_DIR-like dirs sees no connection from the sandbox; unsandboxed it does', async () => {
      const sockDir = tempDir('sv-daemon-');
      const sock = join(sockDir.path, 'daemon.sock');
      let connections = 0;
      server = createServer((c) => {
        connections++;
        c.end('daemon-says-hi\n');
      });
      await new Promise<void>((res) => server!.listen(sock, res));
      try {
        const probe = `node -e "require('net').connect(process.argv[1]).on('data',d=>process.stdout.write('GOT '+d)).on('error',e=>console.log('ERR',e.code))" ${sock}`;
        const always = await suite.runtime({ files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nterminal:\n  sandbox: always\n' }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p' });
        const boxed = await always.runtime.execute(always.runtime.request('terminal', { command: probe })!, always.ctx);
        assert.equal(sandboxed(boxed), true);
        assert.equal(boxed.ok, true, JSON.stringify(boxed.views.model));
        assert.match(boxed.ok ? boxed.views.model.content : '', /ERR ENOENT/);
        assert.equal(connections, 0, 'the daemon saw nothing from the sandbox');
        const open = await suite.runtime({ files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n' }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p' });
        const free = await open.runtime.execute(open.runtime.request('terminal', { command: probe })!, open.ctx);
        assert.equal(sandboxed(free), false);
        assert.match(free.ok ? free.views.model.content : '', /GOT daemon-says-hi/, 'control: unsandboxed, the same command reaches the daemon');
        assert.equal(connections, 1);
      } finally {
        await new Promise<void>((res) => server!.close(() => res()));
        server = null;
        sockDir.remove();
      }
    });
  });

  describe('fail closed', () => {
    const none = () => ({ usable: false, mechanism: 'bubblewrap' as const, reason: 'injected by the test: no sandbox' });

    test('without a sandbox a read-only command is not auto-approved, and the run says so once', async () => {
      const notices: string[] = [];
      const r = await suite.runtime({ files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n${AUTO}` }, approver: new NonInteractiveApprover(), principal: 'p', options: { sandboxAvailability: none, onNotice: (t) => notices.push(t) } });
      for (const command of ['ls', 'cat agent.yaml', 'echo hi']) {
        const out = await r.runtime.execute(r.runtime.request('terminal', { command })!, r.ctx);
        assert.deepEqual([out.ok, !out.ok && out.code], [false, 'APPROVAL_DENIED'], command);
        assert.match(!out.ok ? out.message : '', /no OS sandbox works here: injected by the test/);
        assert.equal(JSON.stringify(out.views.model).includes('name: t'), false);
      }
      assert.equal(notices.length, 1, 'one notice per run, not per call');
      const events = suite.db().prepare("SELECT count(*) AS n FROM runtime_events WHERE session_id = ? AND kind = 'runtime.notice'").get(r.ctx.sessionId) as { n: number };
      assert.equal(events.n, 1);
    });

    test('terminal.sandbox: always with no sandbox refuses even an explicitly approved call, before it runs', async () => {
      const r = await suite.runtime({ files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nterminal:\n  sandbox: always\n' }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p', options: { sandboxAvailability: none } });
      const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'touch marker' })!, r.ctx);
      assert.deepEqual([out.ok, !out.ok && out.code, !out.ok && out.step], [false, 'CHECK_FAILED', 4]);
      assert.match(!out.ok ? out.message : '', /terminal\.sandbox: always/);
      assert.equal(existsSync(join(r.dir, 'marker')), false);
    });

    test('terminal.sandbox: always sandboxes an explicit approval: the workspace is read-only to it', async () => {
      const r = await suite.runtime({ files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nterminal:\n  sandbox: always\n' }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p' });
      const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'touch marker; echo x > marker2' })!, r.ctx);
      assert.equal(sandboxed(out), true);
      assert.equal(out.ok && out.isError, true);
      assert.match(out.ok ? out.views.model.content : '', /Read-only file system/);
      assert.equal(existsSync(join(r.dir, 'marker')) || existsSync(join(r.dir, 'marker2')), false);
    });

    test('terminal.sandbox: workspace-write: an explicit approval writes the workspace and nothing else; its .git stays read-only', async () => {
      const outside = tempDir('sv-ww-outside-');
      try {
        const r = await suite.runtime({
          files: { 'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nterminal:\n  sandbox: workspace-write\n', '.git/config': '[core]\n' },
          approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })),
          principal: 'p',
        });
        const command = `echo in > made.txt; echo hook > .git/post-commit; echo x >> .git/config; rm -rf .git; echo out > ${outside.path}/escaped; echo up > ../ww-escaped-${process.pid}; true`;
        const out = await r.runtime.execute(r.runtime.request('terminal', { command })!, r.ctx);
        assert.equal(sandboxed(out), true);
        assert.equal(readFileSync(join(r.dir, 'made.txt'), 'utf8'), 'in\n', 'the workspace is writable');
        assert.equal(readFileSync(join(r.dir, '.git', 'config'), 'utf8'), '[core]\n', '.git is read-only');
        assert.equal(existsSync(join(r.dir, '.git', 'post-commit')), false);
        assert.equal(existsSync(join(outside.path, 'escaped')), false, 'nothing outside the workspace');
        assert.equal(existsSync(join(r.dir, '..', `ww-escaped-${process.pid}`)), false);
      } finally {
        outside.remove();
      }
    });

    test('a background task auto-approved by class runs sandboxed too: its log holds nothing from outside the workspace', async () => {
      const worker = suite.taskWorker();
      const mark = `bg-outside-${randomBytes(8).toString('hex')}`;
      const r = await suite.runtime({ files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\n${AUTO}`, 'inside.txt': 'bg-inside-content\n' }, approver: new NonInteractiveApprover(), principal: 'p', tasks: worker });
      const secretDir = tempDir('sv-bg-outside-');
      try {
        writeFileSync(join(secretDir.path, 'passwd'), `${mark}\n`);
        symlinkSync(join(secretDir.path, 'passwd'), join(r.dir, 'pw'));
        const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'cat *', background: true })!, r.ctx);
        assert.equal(out.ok, true, JSON.stringify(out.views.model));
        assert.equal(source(out), 'policy');
        const detail = out.views.durable.detail as { taskId: string; sandboxed: boolean };
        assert.equal(detail.sandboxed, true);
        const { ended } = await worker.waitAny({ principal: 'p' }, r.ctx.sessionId, [detail.taskId], 20_000);
        assert.equal(ended.length, 1, 'the task ended');
        const log = (suite.db().prepare('SELECT chunk FROM task_logs WHERE task_id = ? ORDER BY seq').all(detail.taskId) as { chunk: string }[]).map((x) => x.chunk).join('');
        assert.match(log, /bg-inside-content/, 'the task ran and read the workspace');
        assert.equal(log.includes(mark), false, 'the link out of the workspace read nothing');
        assert.deepEqual(leaked(out, stateDir(), [mark]), []);
      } finally {
        secretDir.remove();
      }
    });

    test('a command line naming a secret source is refused at step 4, even explicitly approved (and nothing is read)', async () => {
      const dir = tempDir('sv-named-');
      try {
        const file = join(dir.path, 'tok');
        writeFileSync(file, 'named-source-secret-value\n', { mode: 0o600 });
        const r = await suite.runtime({
          files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nsecrets:\n  TOK: { file: ${file} }\n` },
          approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })),
          principal: 'p',
        });
        const out = await r.runtime.execute(r.runtime.request('terminal', { command: `cat ${file}` })!, r.ctx);
        assert.deepEqual(leaked(out, stateDir(), ['named-source-secret-value']), []);
        assert.deepEqual([out.ok, !out.ok && out.code, !out.ok && out.step], [false, 'CHECK_FAILED', 4]);
        assert.match(!out.ok ? out.message : '', /secrets\.TOK\.file/);
      } finally {
        dir.remove();
      }
    });

    test('a hard link of a secret file is refused when it is bound (a second name no mask covers)', async () => {
      const dir = tempDir('sv-hardlink-');
      try {
        const file = join(dir.path, 'tok');
        writeFileSync(file, 'hard-linked-secret-value\n', { mode: 0o600 });
        const r = await suite.runtime({
          files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec, 'secret:TOK']\nsecrets:\n  TOK: { file: ${file} }\ntools:\n  terminal:\n    secrets:\n      - { secret: TOK, env: TOK, ttl: 1m }\n` },
          approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })),
          principal: 'p',
        });
        linkSync(file, join(dir.path, 'again')); // after load: the bind-time check is what holds
        const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'printenv TOK' })!, r.ctx);
        assert.deepEqual([out.ok, !out.ok && out.code], [false, 'SECRET_DENIED']);
        assert.match(!out.ok ? out.message : '', /2 hard links/);
        assert.deepEqual(leaked(out, stateDir(), ['hard-linked-secret-value']), []);
      } finally {
        dir.remove();
      }
    });
  });
});
