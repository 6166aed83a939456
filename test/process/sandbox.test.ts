// The sandbox tier against hostile children: real bwrap sandboxes started through
// ProcessSupervisor.spawnTree with sandboxCommand's output, probed from the inside.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ProcessSupervisor, SandboxSpecError, sandboxAvailability, sandboxCommand, type SandboxSpec, type SupervisedTree } from '../../src/process/index.js';
import { seatbeltProfile, validateSpec } from '../../src/process/sandbox/index.js';
import { readStat } from '../../src/process/linux/procfs.js';
import { waitpidNoHang, libcAvailable } from '../../native-helpers/libc.js';
import { killMarked, markedPids, tempDir, waitFor } from '../helpers/procs.js';

const availability = process.platform === 'linux' ? sandboxAvailability() : null;
const SKIP =
  process.platform !== 'linux'
    ? `the bubblewrap tier is Linux only (process.platform is ${process.platform})`
    : !availability?.usable
      ? `the sandbox tier is not usable here: ${availability?.reason}`
      : false;
const scenario = fileURLToPath(new URL('../scenarios/sandbox-owner.js', import.meta.url));

describe('sandbox tier (bubblewrap)', { skip: SKIP }, () => {
  const root = tempDir('supervisor-sandbox-');
  const dirs = { work: join(root.path, 'work'), ro: join(root.path, 'ro'), outside: join(root.path, 'outside'), state: join(root.path, 'state') };
  const started = new Set<string>();
  let sup: ProcessSupervisor;

  before(() => {
    for (const d of [dirs.work, dirs.ro, dirs.outside]) mkdirSync(d);
    writeFileSync(join(dirs.ro, 'granted.txt'), 'granted');
    writeFileSync(join(dirs.outside, 'secret.txt'), 'outside the grant');
    sup = ProcessSupervisor.open({ stateDir: dirs.state });
  });

  afterEach(() => {
    const leaked = killMarked(started);
    started.clear();
    assert.equal(leaked, 0, `${leaked} sandboxed process(es) outlived their test`);
  });

  after(async () => {
    await sup.close();
    // The store's checkpoint thread may still be removing its files: retry instead of failing.
    rmSync(root.path, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
  });

  function spec(over: Partial<SandboxSpec> = {}): SandboxSpec {
    return {
      command: process.execPath,
      args: [],
      readOnlyPaths: [dirs.ro],
      writablePaths: [dirs.work],
      cwd: dirs.work,
      network: false,
      env: { PATH: '/usr/bin:/bin' },
      protectedPaths: [sup.stateDir],
      ...over,
    };
  }

  function start(s: SandboxSpec, extra: { onStdout?: (c: Buffer) => void } = {}): SupervisedTree {
    const tree = sup.spawnTree({ ...sandboxCommand(s), artifacts: false, timeoutMs: 30_000, graceMs: 500, ...extra });
    started.add(tree.spawnId);
    return tree;
  }

  /** Runs a CommonJS script with node inside the sandbox; returns the JSON it printed last. */
  async function inside<T>(script: string, args: string[] = [], over: Partial<SandboxSpec> = {}): Promise<T> {
    const tree = start(spec({ args: ['-e', script, ...args], ...over }));
    const out = await tree.done;
    assert.equal(out.reason, 'exited', `sandboxed node: ${out.stderr.tail}`);
    assert.equal(out.exitCode, 0, `sandboxed node exited ${out.exitCode}: ${out.stderr.tail}`);
    const last = out.stdout.tail.trim().split('\n').pop() ?? '';
    return JSON.parse(last) as T;
  }

  const CONNECT = `
    const net = require('node:net'), os = require('node:os');
    const ifs = Object.keys(os.networkInterfaces());
    const s = net.connect(Number(process.argv[1]), '127.0.0.1');
    const done = (r) => { console.log(JSON.stringify({ ...r, ifs })); process.exit(0); };
    s.on('connect', () => { s.write('hello'); s.end(); s.on('close', () => done({ connected: true })); });
    s.on('error', (e) => done({ connected: false, code: e.code }));
    setTimeout(() => done({ connected: false, code: 'TIMEOUT' }), 5000);`;

  async function withListener<T>(fn: (port: number, accepted: () => number) => Promise<T>): Promise<T> {
    let accepted = 0;
    const server: Server = createServer((sock) => {
      accepted++;
      sock.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      return await fn((server.address() as { port: number }).port, () => accepted);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }

  test('network: false — no route to a listener on the host\'s 127.0.0.1, only lo', async () => {
    await withListener(async (port, accepted) => {
      const r = await inside<{ connected: boolean; code?: string; ifs: string[] }>(CONNECT, [String(port)]);
      assert.equal(r.connected, false);
      assert.equal(r.code, 'ECONNREFUSED', 'its own lo has no listener');
      assert.deepEqual(r.ifs, ['lo']);
      assert.equal(accepted(), 0, 'the host listener saw a connection');
    });
  });

  test('network: true — the same listener is reached', async () => {
    await withListener(async (port, accepted) => {
      const r = await inside<{ connected: boolean; code?: string }>(CONNECT, [String(port)], { network: true });
      assert.equal(r.connected, true, `connect failed: ${r.code}`);
      assert.equal(accepted(), 1);
    });
  });

  const TRY_WRITE = `
    const fs = require('node:fs');
    const out = {};
    for (const p of JSON.parse(process.argv[1])) {
      try { fs.writeFileSync(p, 'written from the sandbox'); out[p] = 'ok'; } catch (e) { out[p] = e.code; }
    }
    console.log(JSON.stringify(out));`;

  test('writes land only in writablePaths; read-only binds, the system and the host are out of reach', async () => {
    mkdirSync(join(dirs.work, 'sealed'), { recursive: true });
    const targets = {
      work: join(dirs.work, 'out.txt'),
      sealed: join(dirs.work, 'sealed', 'x.txt'), // read-only bind nested in the writable one
      ro: join(dirs.ro, 'x.txt'),
      usr: '/usr/x.txt',
      etc: '/etc/x.txt',
      outside: join(dirs.outside, 'x.txt'),
      state: join(sup.stateDir, 'x.txt'),
      tmp: `/tmp/sandbox-private-${process.pid}.txt`,
    };
    const r = await inside<Record<string, string>>(TRY_WRITE, [JSON.stringify(Object.values(targets))], {
      readOnlyPaths: [dirs.ro, join(dirs.work, 'sealed')],
    });
    assert.equal(r[targets.work], 'ok');
    assert.equal(readFileSync(targets.work, 'utf8'), 'written from the sandbox');
    for (const k of ['sealed', 'ro', 'usr', 'etc'] as const) assert.equal(r[targets[k]], 'EROFS', `${k}: ${r[targets[k]]}`);
    // Not bound at all: the directories do not exist inside.
    for (const k of ['outside', 'state'] as const) assert.equal(r[targets[k]], 'ENOENT', `${k}: ${r[targets[k]]}`);
    for (const k of ['sealed', 'ro', 'outside', 'state'] as const) assert.equal(existsSync(targets[k]), false, `${k} was written on the host`);
    // /tmp is the sandbox's own tmpfs: writable inside, invisible on the host.
    assert.equal(r[targets.tmp], 'ok');
    assert.equal(existsSync(targets.tmp), false, 'the sandbox /tmp is the host /tmp');
  });

  test('reads: granted paths yes; a file elsewhere, the supervisor\'s state dir and /etc/shadow no', async () => {
    const READ = `
      const fs = require('node:fs');
      const out = {};
      for (const p of JSON.parse(process.argv[1])) {
        try { out[p] = fs.statSync(p).isDirectory() ? fs.readdirSync(p).length >= 0 && 'ok' : fs.readFileSync(p, 'utf8'); } catch (e) { out[p] = e.code; }
      }
      console.log(JSON.stringify(out));`;
    const outsideFile = join(dirs.outside, 'secret.txt');
    const db = join(sup.stateDir, 'supervisor.db');
    assert.ok(existsSync(db), 'the state dir holds the store');
    const r = await inside<Record<string, string>>(READ, [JSON.stringify([join(dirs.ro, 'granted.txt'), outsideFile, sup.stateDir, db, '/etc/shadow', '/root'])]);
    assert.equal(r[join(dirs.ro, 'granted.txt')], 'granted');
    for (const p of [outsideFile, sup.stateDir, db, '/etc/shadow', '/root']) assert.equal(r[p], 'ENOENT', `${p}: ${r[p]}`);
  });

  test('maskPaths: a secret file and a state-like dir inside a read-only bind cannot be read (EACCES, an empty dir); userDatabase: false hides /etc/passwd', async () => {
    const maskedDir = join(dirs.ro, 'state-inside');
    mkdirSync(maskedDir, { recursive: true });
    writeFileSync(join(maskedDir, 'db'), 'state-inside-content');
    writeFileSync(join(dirs.ro, 'tok'), 'masked-secret-content', { mode: 0o600 });
    const READ = `
      const fs = require('node:fs');
      const out = {};
      for (const p of JSON.parse(process.argv[1])) {
        try { out[p] = fs.statSync(p).isDirectory() ? fs.readdirSync(p).join(',') || 'empty dir' : fs.readFileSync(p, 'utf8') || 'empty file'; } catch (e) { out[p] = e.code; }
      }
      console.log(JSON.stringify(out));`;
    const paths = [join(dirs.ro, 'tok'), maskedDir, join(maskedDir, 'db'), join(dirs.ro, 'granted.txt'), '/etc/passwd'];
    const masked = await inside<Record<string, string>>(READ, [JSON.stringify(paths)], { maskPaths: [join(dirs.ro, 'tok'), maskedDir, join(dirs.outside, 'not-shown')], userDatabase: false });
    assert.deepEqual(masked, { [paths[0]!]: 'EACCES', [paths[1]!]: 'empty dir', [paths[2]!]: 'ENOENT', [paths[3]!]: 'granted', '/etc/passwd': 'ENOENT' });
    // The control: without masks the same paths are read.
    const open = await inside<Record<string, string>>(READ, [JSON.stringify(paths)]);
    assert.equal(open[paths[0]!], 'masked-secret-content');
    assert.equal(open[paths[2]!], 'state-inside-content');
    assert.match(open['/etc/passwd']!, /^root:/);
  });

  test('own pid namespace: /proc lists only the sandbox\'s processes', async () => {
    const r = await inside<{ pid: number; pids: number[]; ppid: number }>(
      `const pids = require('node:fs').readdirSync('/proc').filter((n) => /^\\d+$/.test(n)).map(Number);
       console.log(JSON.stringify({ pid: process.pid, ppid: process.ppid, pids }));`,
    );
    // bwrap's reaper is pid 1, node is pid 2: nothing of the host is listed.
    assert.deepEqual(r.pids.sort((a, b) => a - b), [1, 2]);
    assert.equal(r.pid, 2);
    assert.equal(r.ppid, 1);
  });

  test('the environment is exactly the spec\'s plus SUPERVISOR_SPAWN_ID, and the host sees the marker', async () => {
    const env = { PATH: '/usr/bin:/bin', TOOL_SETTING: 'a value with spaces' };
    const tree = start(spec({ args: ['-e', 'console.log(JSON.stringify(process.env))'], env }));
    const out = await tree.done;
    const seen = JSON.parse(out.stdout.tail.trim()) as Record<string, string>;
    // bwrap adds PWD for --chdir; nothing of the supervisor's environment arrives.
    assert.deepEqual(seen, { ...env, SUPERVISOR_SPAWN_ID: tree.spawnId, PWD: dirs.work });
  });

  test('values never appear in the launcher\'s command line (world-readable /proc/<pid>/cmdline)', async () => {
    let ready!: () => void;
    const printed = new Promise<void>((r) => (ready = r));
    const tree = start(spec({ command: 'sh', args: ['-c', 'echo ready; exec sleep 30'], env: { PATH: '/usr/bin:/bin', API_TOKEN: 'tok-3f9a1c-never-in-argv' } }), { onStdout: () => ready() });
    await printed;
    for (const pid of markedPids(tree.spawnId)) {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
      assert.doesNotMatch(cmdline, /tok-3f9a1c/, `pid ${pid} shows the value in its argv`);
    }
    assert.ok(readFileSync(`/proc/${tree.pid}/environ`, 'latin1').includes('API_TOKEN=tok-3f9a1c-never-in-argv'));
    await tree.stop();
  });

  test('tree.stop() kills the whole sandbox, a setsid\'d grandchild inside included', async () => {
    let ready!: () => void;
    const printed = new Promise<void>((r) => (ready = r));
    const tree = start(spec({ command: 'sh', args: ['-c', 'setsid sleep 61 & sleep 62 & echo ready; wait'] }), {
      onStdout: (c) => c.toString().includes('ready') && ready(),
    });
    await printed;
    // bwrap outside, bwrap's reaper (pid 1 inside), sh, two sleeps: all carry the marker.
    // "ready" can print before the backgrounded setsid(1) has run setsid(2): wait until the
    // grandchild has really left the tree's session, so the kill below is tested against it.
    const pids = await waitFor('5 marked processes, one in its own session', () => {
      const p = markedPids(tree.spawnId);
      const escaped = p.filter((pid) => readStat(pid)?.session !== tree.sid);
      return p.length >= 5 && escaped.length >= 1 ? p : null;
    });
    const out = await tree.stop();
    assert.equal(out.reason, 'cancelled');
    assert.equal(out.killed.survivors, 0);
    assert.deepEqual(markedPids(tree.spawnId), []);
    for (const p of pids) assert.equal(readStat(p) === null || readStat(p)?.state === 'Z', true, `pid ${p} is alive`);
  });

  test('the sandbox dies with the supervisor that started it (SIGKILL), and reconciliation finds nothing left', { timeout: 30_000 }, async () => {
    const scenarioState = join(root.path, 'scenario-state');
    const owner = spawn(process.execPath, [scenario, scenarioState, dirs.ro], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    owner.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((r) => owner.once('exit', () => r()));
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      owner.stdout!.on('data', (c: Buffer) => {
        buf += c.toString();
        if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
      });
      owner.once('exit', (code) => reject(new Error(`the scenario exited ${code} before printing its tree: ${stderr}`)));
    });
    const { spawnId } = JSON.parse(line) as { pid: number; spawnId: string };
    started.add(spawnId);
    const pids = await waitFor('the sandboxed sleep', () => {
      const p = markedPids(spawnId);
      return p.length >= 3 ? p : null;
    });
    owner.kill('SIGKILL');
    await exited;
    await waitFor('every sandboxed process to be gone', () => markedPids(spawnId).length === 0 || null, 5_000);
    // This test process is a subreaper (its own supervisor): reap whatever was re-parented to it.
    if (libcAvailable()) for (const p of pids) if (readStat(p)?.ppid === process.pid) waitpidNoHang(p);
    const later = ProcessSupervisor.open({ stateDir: scenarioState });
    try {
      const report = later.lastReconcile!;
      assert.equal(report.interrupted.length, 1);
      assert.equal(report.interrupted[0]!.spawnId, spawnId);
      assert.equal(report.interrupted[0]!.killed, 0, 'reconciliation had to kill what --die-with-parent should have');
    } finally {
      await later.close();
    }
  });
});

describe('sandbox spec validation', { skip: SKIP }, () => {
  const root = tempDir('supervisor-sandbox-spec-');
  const work = join(root.path, 'work');
  const state = join(root.path, 'state');
  const outside = join(root.path, 'outside');
  before(() => {
    for (const d of [work, state, outside]) mkdirSync(d);
    writeFileSync(join(outside, 'tool.sh'), '#!/bin/sh\n', { mode: 0o755 });
  });
  after(() => root.remove());

  const base = (): SandboxSpec => ({
    command: 'sh',
    args: [],
    readOnlyPaths: [],
    writablePaths: [work],
    cwd: work,
    network: false,
    env: { PATH: '/usr/bin:/bin' },
    protectedPaths: [state],
  });
  const cases: [string, Partial<SandboxSpec>, string, string][] = [
    ['a relative path', { writablePaths: ['work'] }, 'SANDBOX_BAD_PATH', 'writablePaths[0]'],
    ['a path with ..', { readOnlyPaths: [`${work}/../outside`] }, 'SANDBOX_BAD_PATH', 'readOnlyPaths[0]'],
    ['/', { readOnlyPaths: ['/'] }, 'SANDBOX_PATH_TOO_BROAD', 'readOnlyPaths[0]'],
    ['the host /proc', { readOnlyPaths: ['/proc'] }, 'SANDBOX_PATH_RESERVED', 'readOnlyPaths[0]'],
    ['a missing path', { readOnlyPaths: [join(root.path, 'nope')] }, 'SANDBOX_PATH_MISSING', 'readOnlyPaths[0]'],
    ['a writable system directory', { writablePaths: [work, '/usr/local'] }, 'SANDBOX_PATH_SYSTEM', 'writablePaths[1]'],
    ['a parent of the state dir', { readOnlyPaths: [root.path] }, 'SANDBOX_PATH_PROTECTED', 'readOnlyPaths[0]'],
    ['the state dir itself', { writablePaths: [work, state] }, 'SANDBOX_PATH_PROTECTED', 'writablePaths[1]'],
    ['one path in both lists', { readOnlyPaths: [work] }, 'SANDBOX_PATH_CONFLICT', 'writablePaths[0]'],
    ['a cwd outside every bind', { cwd: outside }, 'SANDBOX_CWD_OUTSIDE', 'cwd'],
    ['a bad variable name', { env: { PATH: '/usr/bin', 'A-B': 'x' } }, 'SANDBOX_BAD_ENV', 'env["A-B"]'],
    ['a forged spawn marker', { env: { PATH: '/usr/bin', SUPERVISOR_SPAWN_ID: 'sp_x' } }, 'SANDBOX_ENV_RESERVED', 'env.SUPERVISOR_SPAWN_ID'],
    ['LD_PRELOAD (acts on bwrap outside)', { env: { PATH: '/usr/bin', LD_PRELOAD: '/x.so' } }, 'SANDBOX_ENV_RESERVED', 'env.LD_PRELOAD'],
    ['a bare command without PATH', { env: {} }, 'SANDBOX_COMMAND_NOT_FOUND', 'env.PATH'],
    ['a command outside the sandbox', { command: join(outside, 'tool.sh') }, 'SANDBOX_COMMAND_NOT_VISIBLE', 'command'],
    ['a relative command path', { command: './tool.sh' }, 'SANDBOX_BAD_COMMAND', 'command'],
    ['an argument with NUL', { args: ['a\0b'] }, 'SANDBOX_BAD_ARG', 'args[0]'],
  ];
  for (const [what, over, code, field] of cases) {
    test(`refuses ${what}: ${code} naming ${field}`, () => {
      assert.throws(
        () => sandboxCommand({ ...base(), ...over }),
        (e: unknown) => {
          assert.ok(e instanceof SandboxSpecError, `not a SandboxSpecError: ${String(e)}`);
          assert.equal(e.code, code, e.message);
          assert.equal(e.field, field, e.message);
          assert.ok(e.message.startsWith(`sandbox spec ${field}: `), e.message);
          return true;
        },
      );
    });
  }

  test('a bad env value is refused without being quoted', () => {
    assert.throws(
      () => sandboxCommand({ ...base(), env: { PATH: '/usr/bin', TOKEN: 'hunter2-value\0' } }),
      (e: unknown) => e instanceof SandboxSpecError && e.code === 'SANDBOX_BAD_ENV' && e.field === 'env.TOKEN' && !e.message.includes('hunter2'),
    );
  });

  test('a command in a bound path is accepted and resolved to its absolute path', () => {
    const cmd = sandboxCommand({ ...base(), command: join(outside, 'tool.sh'), readOnlyPaths: [outside] });
    assert.ok(cmd.args.includes(join(outside, 'tool.sh')));
    assert.equal(sandboxCommand(base()).args.at(-1), '/usr/bin/sh');
  });
});

describe('seatbelt profile (macOS; text only, not run here)', () => {
  const root = tempDir('supervisor-seatbelt-');
  const ro = join(root.path, 'ro');
  const rw = join(root.path, 'a"b) (allow default');
  before(() => {
    mkdirSync(ro);
    mkdirSync(rw);
  });
  after(() => root.remove());

  const profile = (network: boolean) =>
    seatbeltProfile(
      validateSpec({ command: '/bin/sh', args: [], readOnlyPaths: [ro], writablePaths: [rw], cwd: rw, network, env: {} }, LAYOUT),
      LAYOUT,
    );
  const LAYOUT = { visibleRoots: ['/usr/lib', '/usr/bin', '/bin'], noWriteRoots: ['/usr', '/bin'], reserved: ['/dev'] };

  test('deny by default; reads of system and granted paths; writes only to writablePaths; no network', () => {
    const { profile: text, params } = profile(false);
    assert.match(text, /^\(version 1\)\n\(deny default\)\n/);
    assert.doesNotMatch(text, /network/);
    assert.doesNotMatch(text, /\(allow default\)/, 'a path leaked into the profile text');
    const byValue = new Map(params.map(([k, v]) => [v, k]));
    const roParam = byValue.get(ro)!;
    const rwParam = byValue.get(rw)!;
    assert.match(roParam, /^RO_\d+$/);
    assert.match(rwParam, /^RW_\d+$/);
    assert.ok(text.includes(`(allow file-read* (subpath (param "${roParam}")))`));
    assert.ok(text.includes(`(allow file-read* file-write* (subpath (param "${rwParam}")))`));
    // The only other writes are harmless devices.
    const writeLines = text.split('\n').filter((l) => l.includes('file-write'));
    assert.equal(writeLines.length, 2, writeLines.join('\n'));
    assert.ok(writeLines.some((l) => l.startsWith('(allow file-write* (literal "/dev/null")')));
    // Seatbelt matches resolved paths, so a parameter is the real path (/bin is /usr/bin on merged-/usr Linux).
    for (const r of LAYOUT.visibleRoots) assert.ok(byValue.has(realpathSync(r)), `${r} is not readable`);
  });

  test('maskPaths become deny rules after every allow (Seatbelt applies the last match)', () => {
    const masked = join(ro, 'tok');
    writeFileSync(masked, 'x');
    const { profile: text, params } = seatbeltProfile(
      validateSpec({ command: '/bin/sh', args: [], readOnlyPaths: [ro], writablePaths: [], cwd: ro, network: false, env: {}, maskPaths: [masked] }, LAYOUT),
      LAYOUT,
    );
    const name = params.find(([, v]) => v === realpathSync(masked))?.[0];
    assert.match(name ?? '', /^MASK_\d+$/);
    const lines = text.trim().split('\n');
    const deny = lines.findIndex((l) => l === `(deny file-read* file-write* (subpath (param "${name}")))`);
    const allow = lines.findIndex((l) => l.includes('(allow file-read*') && l.includes('RO_'));
    assert.ok(deny > allow && allow >= 0, text);
  });

  test('network: true adds the network rules', () => {
    assert.match(profile(true).profile, /^\(allow network\*\)$/m);
  });
});
