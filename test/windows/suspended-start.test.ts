// The suspended start on Windows (issue 22), here under Wine: a plain tree's leader is the command
// itself, created suspended by CreateProcessW, put into the tree's Job Object, then resumed. The
// tests check what that promises: the pid the supervisor reports is the command's and its parent is
// the supervisor; a child that starts a grandchild at once and exits leaves it in the job, where
// the tree's end kills it; exit codes, stdout and stderr come through; hostile arguments arrive
// exactly; the kernel kills the tree when the supervisor dies. A stdio server (stdin and stdout
// pipes, as MCP servers) starts the same way, its stdin a token-proven pipe with an EOF (decision
// 107); a .bat gets cmd-quoted arguments and runs nothing else (decision 108); a data channel takes
// the launcher only with SUPERVISOR_SPAWN=node (decision 109; its suspended start: data-channel.test.ts). Run: npm run test:windows (docs/windows-under-wine.md).
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { HOSTILE_ARGS } from '../helpers/windows-args.js';

const SKIP = process.platform === 'win32' ? false : `Windows only (process.platform is ${process.platform}); run it under Wine with npm run test:windows`;
const FIX = (name: string): string => fileURLToPath(new URL(`../../../test/fixtures/${name}`, import.meta.url));

interface EchoedStart {
  pid: number;
  ppid: number;
  argv: string[];
}

describe('Windows suspended start', { skip: SKIP, timeout: 120_000 }, () => {
  let mod: typeof import('../../src/process/index.js');
  let win: typeof import('../../src/process/win32/win32-platform.js');
  let platform: import('../../src/process/win32/win32-platform.js').Win32Platform;
  let sup: import('../../src/process/index.js').ProcessSupervisor;
  let dir: string;
  const watched: Array<{ pid: number; marker: import('../../src/process/index.js').StartMarker }> = [];

  before(async () => {
    mod = await import('../../src/process/index.js');
    win = await import('../../src/process/win32/win32-platform.js');
    dir = mkdtempSync(join(tmpdir(), 'supervisor-winsusp-'));
    platform = new win.Win32Platform();
    sup = mod.ProcessSupervisor.open({ stateDir: dir, platform });
  });

  afterEach(() => {
    const alive = watched.filter((w) => platform.isSameProcess(w.pid, w.marker));
    watched.length = 0;
    assert.deepEqual(alive.map((w) => w.pid), [], 'processes outlived their test');
  });

  after(async () => {
    await sup.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function echoed(args: string[], opts: Partial<import('../../src/process/index.js').SpawnTreeOptions> = {}): Promise<{ tree: import('../../src/process/index.js').SupervisedTree; seen: EchoedStart }> {
    const tree = sup.spawnTree({ command: process.execPath, args: [FIX('echo-argv.mjs'), ...args], ...opts });
    const out = await tree.done;
    assert.equal(out.exitCode, 0, out.stderr.tail);
    return { tree, seen: JSON.parse(out.stdout.tail) as EchoedStart };
  }

  test('this machine starts plain trees suspended', () => {
    assert.equal(platform.startPath.path, 'suspended', platform.startPath.why);
  });

  test('the leader is the command itself: its pid is the one reported and its parent is the supervisor', async () => {
    const { tree, seen } = await echoed([]);
    assert.equal(seen.pid, tree.pid, 'the process the supervisor created is the command');
    assert.equal(seen.ppid, process.pid, 'no launcher between the supervisor and the command');
    assert.equal(sup.records.get(tree.spawnId)!.pid, seen.pid, 'the spawn record names the command');
  });

  test('spawnTreeAsync (CreateProcessW on a thread) starts the command itself too', async () => {
    const tree = await sup.spawnTreeAsync({ command: process.execPath, args: [FIX('echo-argv.mjs'), 'a b', 'c"d'] });
    const out = await tree.done;
    const seen = JSON.parse(out.stdout.tail) as EchoedStart;
    assert.equal(seen.pid, tree.pid);
    assert.equal(seen.ppid, process.pid);
    assert.deepEqual(seen.argv, ['a b', 'c"d']);
    assert.equal(sup.records.get(tree.spawnId)!.status, 'exited');
  });

  test('hostile arguments arrive exactly as given (MSVCRT quoting)', async () => {
    const { seen } = await echoed(HOSTILE_ARGS);
    assert.deepEqual(seen.argv, HOSTILE_ARGS);
  });

  test('exit codes come through the process handle', async () => {
    assert.equal((await sup.spawnTree({ command: 'cmd.exe', args: ['/c', 'exit', '3'] }).done).exitCode, 3);
    assert.equal((await sup.spawnTree({ command: process.execPath, args: ['-e', 'process.exit(255)'] }).done).exitCode, 255);
    assert.equal((await sup.spawnTree({ command: 'cmd.exe', args: ['/c', 'exit', '0'] }).done).exitCode, 0);
  });

  test('stdout and stderr are captured apart, from the first byte', async () => {
    const out = await sup.spawnTree({ command: process.execPath, args: ['-e', "process.stdout.write('out:' + 'x'.repeat(200000)); process.stderr.write('err \"quoted\"')"] }).done;
    assert.equal(out.reason, 'exited');
    assert.equal(out.stdout.bytes, 4 + 200_000);
    assert.ok(out.stdout.tail.endsWith('x'.repeat(100)));
    assert.equal(out.stderr.tail, 'err "quoted"');
  });

  test('the environment block reaches the child as given, sorted by Windows', async () => {
    const out = await sup.spawnTree({
      command: process.execPath,
      args: ['-e', 'process.stdout.write(JSON.stringify([process.env.zeta, process.env.ALPHA, process.env.SUPERVISOR_SPAWN_ID]))'],
      env: { zeta: 'z value', ALPHA: 'ä%PATH%', PATH: process.env.PATH ?? '' },
    }).done;
    const [zeta, alpha, marker] = JSON.parse(out.stdout.tail) as string[];
    assert.equal(zeta, 'z value');
    assert.equal(alpha, 'ä%PATH%', 'no expansion');
    assert.match(marker!, /^sp_/);
  });

  test('a child that starts a grandchild and exits at once leaves it in the job, and the tree end kills it', async () => {
    let out = '';
    const grandchild = "setInterval(() => {}, 1000); console.log('grandchild ' + process.pid)";
    const tree = sup.spawnTree({
      command: 'cmd.exe',
      args: ['/c', 'start', '/b', process.execPath, '-e', grandchild],
      drainAfterExitMs: 30_000,
      graceMs: 200,
      onStdout: (c) => (out += c.toString()),
    });
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && (platform.isSameProcess(tree.pid, tree.startMarker) || !/grandchild \d+/.test(out))) await sleep(50);
    assert.equal(platform.isSameProcess(tree.pid, tree.startMarker), false, 'cmd.exe exited');
    const pid = Number(/grandchild (\d+)/.exec(out)?.[1]);
    assert.ok(pid > 0, `the grandchild printed its pid: ${JSON.stringify(out)}`);
    const marker = platform.startMarker(pid);
    assert.ok(marker !== null && platform.isSameProcess(pid, marker), 'the grandchild outlived its parent');
    watched.push({ pid, marker });
    assert.ok(platform.jobPids(tree.spawnId).includes(pid), 'the grandchild is in the job its parent entered before it ran');
    const end = await tree.stop();
    assert.equal(end.exitCode, 0, 'the leader exited by itself');
    assert.ok(end.killed.descendants >= 1, JSON.stringify(end.killed));
    assert.equal(end.killed.survivors, 0);
    assert.equal(platform.isSameProcess(pid, marker), false, 'the grandchild died with the tree');
  });

  test('when the supervisor process dies, the kernel kills a suspended-start tree', async () => {
    const ownerDir = mkdtempSync(join(tmpdir(), 'supervisor-winsusp-owner-'));
    const owner = spawn(process.execPath, [fileURLToPath(new URL('../scenarios/win-owner.js', import.meta.url)), ownerDir, 'plain'], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let line = '';
      const info = await new Promise<{ spawnId: string; launcher: number; pids: number[] }>((resolve, reject) => {
        owner.stdout.on('data', (c) => {
          line += c;
          if (line.includes('\n')) resolve(JSON.parse(line.split('\n')[0]!));
        });
        owner.on('exit', (code) => reject(new Error(`owner exited early (${code})`)));
      });
      assert.equal(info.launcher, info.pids[0], 'the tree leader is the command (node-tree root), not a launcher');
      const markers = info.pids.map((p) => ({ pid: p, marker: platform.startMarker(p)! }));
      assert.ok(markers.every((m) => m.marker !== null), 'the whole tree ran before the owner died');
      owner.kill();
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && markers.some((m) => platform.isSameProcess(m.pid, m.marker))) await sleep(50);
      assert.deepEqual(markers.filter((m) => platform.isSameProcess(m.pid, m.marker)).map((m) => m.pid), [], 'the tree died with its owner');
    } finally {
      owner.kill();
      rmSync(ownerDir, { recursive: true, force: true });
    }
  });

  test('an output pipe reads only the connection that presents its token: a stranger connected first can neither inject nor steal', async () => {
    const { serveInboundPipe } = await import('../../src/process/win32/token-pipe.js');
    const k32 = await import('../../native-helpers/kernel32.js');
    const { GENERIC_WRITE, openInheritable, writeAll } = await import('../../native-helpers/kernel32-spawn.js');
    const { connect } = await import('node:net');
    const { randomBytes } = await import('node:crypto');
    const name = `\\\\.\\pipe\\supervisor-test-${randomBytes(8).toString('hex')}`;
    const token = randomBytes(16);
    const stream = serveInboundPipe(name, token);
    let read = '';
    stream.on('data', (c: Buffer) => (read += c.toString()));
    const ended = new Promise<void>((r) => stream.once('end', () => r()));
    // Strangers connect by name before the child's end exists: one forges a token and writes, one only listens.
    const forger = connect(name);
    forger.on('error', () => {});
    await new Promise<void>((r) => forger.once('connect', () => r()));
    forger.write(Buffer.concat([randomBytes(16), Buffer.from('injected')]));
    const listener = connect(name);
    let stolen = '';
    listener.on('data', (c: Buffer) => (stolen += c.toString()));
    listener.on('error', () => {});
    await sleep(300);
    // The real end, written as openInboundPipe and then the child do.
    const end = openInheritable(name, GENERIC_WRITE);
    writeAll(end, token);
    writeAll(end, Buffer.from('from the child'));
    k32.closeHandle(end);
    await ended;
    assert.equal(read, 'from the child', 'only the token holder is read, token removed');
    assert.equal(stolen, '');
    forger.destroy();
    listener.destroy();
  });

  /** A stdio server tree and a request/answer helper over its stdin and stdout. */
  function stdioServer(opts: Partial<import('../../src/process/index.js').SpawnTreeOptions> = {}) {
    let buffered = '';
    const waiting = new Map<number, (r: Record<string, unknown>) => void>();
    let nextId = 1;
    const tree = sup.spawnTree({
      command: process.execPath,
      args: [FIX('stdio-echo-server.mjs')],
      stdin: 'pipe',
      graceMs: 300,
      ...opts,
      onStdout: (c) => {
        buffered += c.toString();
        for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
          const { id, result } = JSON.parse(buffered.slice(0, nl)) as { id: number; result: Record<string, unknown> };
          buffered = buffered.slice(nl + 1);
          waiting.get(id)?.(result);
        }
      },
    });
    const request = (method: string, params?: unknown): Promise<Record<string, unknown>> => {
      const id = nextId++;
      const answered = new Promise<Record<string, unknown>>((r) => waiting.set(id, r));
      tree.stdin!.write(`${JSON.stringify({ id, method, params })}\n`);
      return Promise.race([answered, tree.done.then((o) => Promise.reject(new Error(`the server ended before answering ${method}: ${o.stderr.tail}`)))]);
    };
    return { tree, request };
  }

  test('a stdio server (stdin and stdout pipes, as MCP servers) starts suspended: it and its grandchild are in the job, and a round trip works', async () => {
    const { tree, request } = stdioServer();
    assert.equal(platform.treeStartPath(tree.spawnId), 'suspended');
    const hello = await request('hello', { text: 'ünï "quoted" \\ line' });
    assert.equal(hello.pid, tree.pid, 'the leader is the server itself');
    assert.equal(hello.ppid, process.pid, 'no launcher between the supervisor and the server');
    assert.deepEqual(hello.echo, { text: 'ünï "quoted" \\ line' });
    const { pid: grandchild } = (await request('spawn')) as { pid: number };
    const marker = platform.startMarker(grandchild)!;
    watched.push({ pid: grandchild, marker });
    const inJob = platform.jobPids(tree.spawnId);
    assert.ok(inJob.includes(tree.pid), 'the server is in the job');
    assert.ok(inJob.includes(grandchild), 'its grandchild is in the job');
    // Many requests in flight at once: every answer comes back over the same pipes.
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => request('hello', i)));
    assert.deepEqual(answers.map((a) => a.echo), Array.from({ length: 50 }, (_, i) => i));
    const end = await tree.stop();
    assert.equal(end.killed.survivors, 0);
    assert.equal(platform.isSameProcess(grandchild, marker), false, 'the grandchild died with the tree');
  });

  test('an MCP server (the SDK on both ends, our stdio transport) starts suspended and serves calls, a 1 MB result included', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { SupervisedStdioTransport } = await import('../../src/adapters/mcp/index.js');
    const t = new SupervisedStdioTransport(sup, { server: 'fx', command: process.execPath, args: [FIX('mcp/server.mjs'), 'basic'], cwd: process.cwd(), env: { ...process.env } as Record<string, string>, redact: [], graceMs: 300 });
    const client = new Client({ name: 't', version: '0' });
    await client.connect(t);
    try {
      assert.equal(platform.treeStartPath(t.spawnId!), 'suspended');
      assert.ok(platform.jobPids(t.spawnId!).includes(t.pid!), 'the server is in its job');
      const text = 'ünï & | %PATH% "q" \\';
      assert.deepEqual((await client.callTool({ name: 'echo', arguments: { text } })).content, [{ type: 'text', text }]);
      const huge = (await client.callTool({ name: 'huge', arguments: {} })).content as Array<{ text: string }>;
      assert.ok(huge[0]!.text.length > 900_000, `a ~1 MB result arrived whole (${huge[0]!.text.length} chars)`);
    } finally {
      await client.close();
    }
    const outcome = await t.stop();
    assert.equal(outcome?.killed.survivors ?? 0, 0);
  });

  test("ending the tree's stdin is the child's EOF, after everything written before it was read", async () => {
    const { tree } = stdioServer();
    const big = 'x'.repeat(100_000);
    for (let i = 0; i < 20; i++) tree.stdin!.write(`${JSON.stringify({ id: i + 1, method: 'hello', params: big })}\n`);
    tree.stdin!.end();
    const out = await tree.done;
    assert.equal(out.reason, 'exited');
    assert.equal(out.exitCode, 0);
    assert.equal(out.stderr.tail, 'eof after 20 requests', 'all 2 MB were read, then EOF');
  });

  test('writing to the stdin of a child that has exited is not an error: the bytes are dropped', async () => {
    const { tree, request } = stdioServer();
    const errors: Error[] = [];
    tree.stdin!.on('error', (e: Error) => errors.push(e));
    await request('hello');
    tree.stdin!.write(`${JSON.stringify({ id: 99, method: 'exit', params: 4 })}\n`);
    const out = await tree.done;
    assert.equal(out.exitCode, 4);
    // 4 MB after the exit: more than any pipe holds, so a writer that waited for 'drain' would hang.
    const chunk = Buffer.alloc(1 << 20, 'y');
    for (let i = 0; i < 4; i++) {
      if (!tree.stdin!.write(chunk)) await new Promise((r) => tree.stdin!.once('drain', r));
    }
    await new Promise<void>((r) => tree.stdin!.end(r));
    assert.deepEqual(errors.map((e) => e.message), []);
  });

  test("the child's stdin end is read-only: it cannot write into the supervisor's end", async () => {
    const { tree, request } = stdioServer();
    const r = await request('write-stdin');
    assert.equal(r.wrote, undefined, `the child wrote ${String(r.wrote)} bytes into its stdin`);
    assert.ok(typeof r.error === 'string', JSON.stringify(r));
    await tree.stop();
  });

  test('a stdin pipe serves only the connection that presents its token: strangers connected first get nothing', async () => {
    const { serveOutboundPipe } = await import('../../src/process/win32/token-pipe.js');
    const { connect } = await import('node:net');
    const { randomBytes } = await import('node:crypto');
    const name = `\\\\.\\pipe\\supervisor-test-${randomBytes(8).toString('hex')}`;
    const token = randomBytes(16);
    const stdin = serveOutboundPipe(name, token);
    stdin.write('written before anyone connected;');
    const client = async (first: Buffer | null): Promise<{ got: () => string; ended: Promise<void>; close: () => void }> => {
      const s = connect(name);
      s.on('error', () => {});
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      const ended = new Promise<void>((r) => s.once('close', () => r()));
      await new Promise<void>((r) => s.once('connect', () => r()));
      if (first) s.write(first);
      return { got: () => got, ended, close: () => s.destroy() };
    };
    // One stranger only listens, one forges a token.
    const listener = await client(null);
    const forger = await client(Buffer.concat([randomBytes(16), Buffer.from('forged')]));
    await sleep(300);
    const child = await client(token);
    stdin.end('after;');
    await child.ended;
    assert.equal(child.got(), 'written before anyone connected;after;', 'the token holder got everything, then its EOF');
    assert.equal(listener.got(), '', 'a stranger that connected first read nothing');
    assert.equal(forger.got(), '', 'a stranger with a forged token read nothing');
    listener.close();
    forger.close();
  });

  const BATCH_ARGS = ['plain', 'with space', 'a&echo INJECTED>injected.txt', 'x"&echo INJECTED>injected.txt&"', 'a|b^c<d>e', 'trailing space\\', '(a) !PATH!', '', '\\"&echo INJECTED>injected.txt'];

  /** What %1..%9 hold for BATCH_ARGS: cmd keeps the quotes; the metacharacters stay inside them. */
  const BATCH_RECEIVED = [
    '1=plain',
    '2="with space"',
    '3="a&echo INJECTED>injected.txt"',
    '4="x""&echo INJECTED>injected.txt&"""',
    '5="a|b^c<d>e"',
    '6="trailing space\\\\"',
    '7="(a) !PATH!"',
    '8=""',
    '9="\\\\""&echo INJECTED>injected.txt"',
  ];

  /** Runs record-args.bat in a fresh folder: the %1..%9 it wrote, and whether an injected command ran there. */
  async function recordArgs(args: string[], on: { sup: typeof sup; platform: typeof platform } = { sup, platform }): Promise<{ lines: string[]; injected: boolean; startPath: string | null }> {
    const cwd = mkdtempSync(join(tmpdir(), 'supervisor-winbat-'));
    try {
      const received = join(cwd, 'received.txt');
      const tree = on.sup.spawnTree({ command: FIX('record-args.bat'), args, cwd, env: { ...process.env, RECEIVED: received } as Record<string, string> });
      const startPath = on.platform.treeStartPath(tree.spawnId);
      const out = await tree.done;
      assert.equal(out.exitCode, 0, out.stderr.tail);
      return { lines: readFileSync(received, 'utf8').split('\r\n').filter((l) => l !== ''), injected: existsSync(join(cwd, 'injected.txt')), startPath };
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }

  test('a .bat runs suspended as cmd.exe /d /s /c with cmd-quoted arguments: each arrives as one inert %N and no second command runs', async () => {
    const { lines, injected, startPath } = await recordArgs(BATCH_ARGS);
    assert.equal(startPath, 'suspended');
    assert.deepEqual(lines, BATCH_RECEIVED);
    assert.equal(injected, false, 'no argument ran a command of its own');
  });

  test('with SUPERVISOR_SPAWN=node the launcher runs a .bat through cmd.exe with the same line (Node alone refuses a .bat)', async () => {
    const before = process.env.SUPERVISOR_SPAWN;
    process.env.SUPERVISOR_SPAWN = 'node';
    const launcherPlatform = new win.Win32Platform();
    try {
      launcherPlatform.init();
    } finally {
      if (before === undefined) delete process.env.SUPERVISOR_SPAWN;
      else process.env.SUPERVISOR_SPAWN = before;
    }
    const launcherSup = mod.ProcessSupervisor.open({ stateDir: join(dir, 'launcher'), platform: launcherPlatform });
    try {
      const { lines, injected, startPath } = await recordArgs(BATCH_ARGS, { sup: launcherSup, platform: launcherPlatform });
      assert.equal(startPath, 'launcher');
      assert.deepEqual(lines, BATCH_RECEIVED);
      assert.equal(injected, false);
    } finally {
      await launcherSup.close();
    }
  });

  test('a .bat argument with % (expanded even inside quotes) or a line break is refused before anything starts', async () => {
    for (const [bad, why] of [
      ['%PATH%', /batch file argument 2 contains '%'/],
      ['%%cd:~,%', /batch file argument 2 contains '%'/],
      ['a\r\necho INJECTED>injected.txt', /batch file argument 2 contains a line break/],
    ] as const) {
      const cwd = mkdtempSync(join(tmpdir(), 'supervisor-winbat-'));
      try {
        const received = join(cwd, 'received.txt');
        assert.throws(
          () => sup.spawnTree({ command: FIX('record-args.bat'), args: ['ok', bad], cwd, env: { ...process.env, RECEIVED: received } as Record<string, string> }),
          (e: Error & { code?: string }) => e.code === 'SPAWN_FAILED' && why.test(e.message),
        );
        assert.equal(existsSync(received), false, 'the script never ran');
        assert.equal(existsSync(join(cwd, 'injected.txt')), false);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }
  });

  test('with SUPERVISOR_SPAWN=node a tree with a data channel is led by the launcher, which hands the channel to the command', async () => {
    const before = process.env.SUPERVISOR_SPAWN;
    process.env.SUPERVISOR_SPAWN = 'node';
    const launcherPlatform = new win.Win32Platform();
    try {
      launcherPlatform.init();
    } finally {
      if (before === undefined) delete process.env.SUPERVISOR_SPAWN;
      else process.env.SUPERVISOR_SPAWN = before;
    }
    const launcherSup = mod.ProcessSupervisor.open({ stateDir: join(dir, 'launcher-channel'), platform: launcherPlatform });
    try {
      const tree = launcherSup.spawnTree({ command: process.execPath, args: [FIX('channel-echo.mjs')], stdin: 'pipe', channel: true });
      assert.equal(launcherPlatform.treeStartPath(tree.spawnId), 'launcher');
      const channel = tree.channel!;
      let echoed = '';
      channel.on('data', (c: Buffer) => (echoed += c.toString()));
      const closed = new Promise<void>((r) => channel.once('close', () => r()));
      // Its hello first (the fixture ends its side at our EOF, so the EOF waits for it).
      for (let i = 0; i < 300 && echoed === ''; i++) await sleep(50);
      channel.end('ping');
      const [out] = await Promise.all([tree.done, closed]);
      assert.equal(echoed, 'hello\nping', 'the command got the channel through the launcher (fd 4) and echoed it');
      const seen = JSON.parse(out.stdout.tail) as EchoedStart;
      assert.notEqual(seen.pid, tree.pid);
      assert.equal(seen.ppid, tree.pid, 'the launcher started the command');
    } finally {
      await launcherSup.close();
    }
  });

  test('SUPERVISOR_SPAWN=node chooses the launcher for every tree, and doctor says so', async () => {
    const choice = win.chooseStartPath({ SUPERVISOR_SPAWN: 'node' });
    assert.deepEqual(choice, { path: 'launcher', why: 'SUPERVISOR_SPAWN=node asks for Node spawn()' });
    const { probeSpawnPath } = await import('../../src/process/spawn-path-probe.js');
    const before = process.env.SUPERVISOR_SPAWN;
    process.env.SUPERVISOR_SPAWN = 'node';
    try {
      const finding = await probeSpawnPath({ SUPERVISOR_SPAWN_ID: 'probe' });
      assert.match(finding.detail, /^the Node launcher for every tree \(SUPERVISOR_SPAWN=node/);
    } finally {
      if (before === undefined) delete process.env.SUPERVISOR_SPAWN;
      else process.env.SUPERVISOR_SPAWN = before;
    }
  });
});
