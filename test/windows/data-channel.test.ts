// A tree with a data channel (authored tool hosts: `channel: true`, fd 3 in the child) started
// suspended on Windows (issue 22, decision 116), here under Wine: the channel is a duplex named
// pipe the supervisor serves behind a token, its child end handed over as fd 3 in the C runtime's
// inherited fd table (STARTUPINFO.lpReserved2), as Node's spawn() does. The tests check the start
// path and the job, bytes both ways (1 MB included), the close when the child exits, the tree's
// death with its supervisor, a stranger racing for the pipe, and the real tool host answering a
// call. Run: npm run test:windows.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Duplex } from 'node:stream';

const SKIP = process.platform === 'win32' ? false : `Windows only (process.platform is ${process.platform}); run it under Wine with npm run test:windows`;
const FIX = (name: string): string => fileURLToPath(new URL(`../../../test/fixtures/${name}`, import.meta.url));

interface Started {
  pid: number;
  ppid: number;
  fd: number;
  grandchild: number | null;
}

/**
 * Collects what `stream` brings from now on; wait(n) resolves once n bytes have come (or it ended
 * first: then with what came), and fails after 15 s naming what did come.
 */
function inbox(stream: Duplex): { wait(bytes: number): Promise<Buffer> } {
  const chunks: Buffer[] = [];
  let got = 0;
  let ended = false;
  const waiters: Array<() => void> = [];
  const wake = (): void => {
    for (const w of waiters.splice(0)) w();
  };
  stream.on('data', (c: Buffer) => {
    chunks.push(c);
    got += c.length;
    wake();
  });
  stream.once('close', () => {
    ended = true;
    wake();
  });
  return {
    async wait(bytes) {
      const deadline = Date.now() + 15_000;
      while (got < bytes && !ended) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`waited 15 s for ${bytes} bytes on the channel; ${got} came`);
        await new Promise<void>((r) => {
          const timer = setTimeout(r, left);
          waiters.push(() => {
            clearTimeout(timer);
            r();
          });
        });
      }
      const all = Buffer.concat(chunks);
      chunks.length = 0;
      chunks.push(all.subarray(bytes));
      got = all.length - Math.min(bytes, all.length);
      return all.subarray(0, bytes);
    },
  };
}

describe('Windows data channel, suspended start', { skip: SKIP, timeout: 120_000 }, () => {
  let mod: typeof import('../../src/process/index.js');
  let platform: import('../../src/process/win32/win32-platform.js').Win32Platform;
  let sup: import('../../src/process/index.js').ProcessSupervisor;
  let dir: string;
  const watched: Array<{ pid: number; marker: import('../../src/process/index.js').StartMarker }> = [];

  before(async () => {
    mod = await import('../../src/process/index.js');
    const win = await import('../../src/process/win32/win32-platform.js');
    dir = mkdtempSync(join(tmpdir(), 'supervisor-winchan-'));
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

  /** Starts channel-echo.mjs with a channel; resolves once it printed its start line. */
  async function echoTree(args: string[] = []): Promise<{ tree: import('../../src/process/index.js').SupervisedTree; started: Started; received: ReturnType<typeof inbox> }> {
    let line = '';
    let seen: (s: Started) => void;
    const started = new Promise<Started>((r) => (seen = r));
    const tree = sup.spawnTree({
      command: process.execPath,
      args: [FIX('channel-echo.mjs'), ...args],
      channel: true,
      onStdout: (c: Buffer) => {
        line += c.toString();
        if (line.includes('\n')) seen(JSON.parse(line.split('\n')[0]!) as Started);
      },
    });
    // Listening from the start, before the child has connected: its first words must still come.
    const received = inbox(tree.channel!);
    return { tree, received, started: await started };
  }

  test('the leader is the command itself, started suspended, with the channel as fd 3; it and a grandchild are in the job', async () => {
    const { tree, started } = await echoTree(['grandchild']);
    assert.equal(platform.treeStartPath(tree.spawnId), 'suspended');
    assert.equal(started.pid, tree.pid, 'no launcher: the reported pid is the command');
    assert.equal(started.ppid, process.pid);
    assert.equal(started.fd, 3);
    assert.ok(started.grandchild !== null);
    const inJob = platform.jobPids(tree.spawnId);
    assert.ok(inJob.includes(started.pid), `leader ${started.pid} in the job ${inJob.join(',')}`);
    assert.ok(inJob.includes(started.grandchild), `grandchild ${started.grandchild} in the job ${inJob.join(',')}`);
    const marker = platform.startMarker(started.grandchild)!;
    watched.push({ pid: started.grandchild, marker });
    await tree.stop();
    assert.equal(platform.isSameProcess(started.grandchild, marker), false, 'the grandchild ended with the tree');
  });

  test("bytes go both ways over the channel: the child's hello, a line, then 1 MB each way, unchanged", async () => {
    const { tree, received } = await echoTree();
    const channel = tree.channel!;
    assert.equal((await received.wait(6)).toString(), 'hello\n', 'what the child says unprompted arrives');
    channel.write('ping\n');
    assert.equal((await received.wait(5)).toString(), 'ping\n');
    const big = randomBytes(1 << 20);
    channel.write(big);
    const got = await received.wait(big.length);
    assert.equal(got.length, big.length);
    assert.ok(got.equals(big), 'the megabyte came back unchanged');
    // The supervisor's end is the child's EOF: the echo ends and so does the child.
    channel.end();
    const out = await tree.done;
    assert.equal(out.exitCode, 0, out.stderr.tail);
  });

  test('what the child wrote before it exited is read, then the channel closes', async () => {
    const { tree, received } = await echoTree(['bye']);
    const channel = tree.channel!;
    const closed = new Promise<void>((r) => channel.once('close', () => r()));
    const got = await received.wait(3);
    assert.equal(got.toString(), 'bye');
    await closed;
    const out = await tree.done;
    assert.equal(out.exitCode, 3, out.stderr.tail);
  });

  test('when the supervisor process dies, the kernel kills a data-channel tree started suspended', async () => {
    const ownerDir = mkdtempSync(join(tmpdir(), 'supervisor-winchan-owner-'));
    const owner = spawn(process.execPath, [fileURLToPath(new URL('../scenarios/win-owner.js', import.meta.url)), ownerDir, 'channel'], { stdio: ['ignore', 'pipe', 'inherit'] });
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
      while (Date.now() < deadline && markers.some((m) => platform.isSameProcess(m.pid, m.marker))) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(markers.filter((m) => platform.isSameProcess(m.pid, m.marker)).map((m) => m.pid), [], 'the tree died with its owner');
    } finally {
      owner.kill();
      rmSync(ownerDir, { recursive: true, force: true });
    }
  });

  test('a channel pipe serves only the connection with its token: strangers connected first read nothing and are not heard', async () => {
    const { serveChannelPipe } = await import('../../src/process/win32/token-pipe.js');
    const { connect } = await import('node:net');
    const name = `\\\\.\\pipe\\supervisor-test-${randomBytes(8).toString('hex')}`;
    const token = randomBytes(16);
    const channel = serveChannelPipe(name, token);
    const heard: Buffer[] = [];
    channel.on('data', (c: Buffer) => heard.push(c));
    channel.write('for the child only;');
    const client = async (first: Buffer | null): Promise<{ got: () => string; socket: import('node:net').Socket }> => {
      const s = connect(name);
      s.on('error', () => {});
      let got = '';
      s.on('data', (c: Buffer) => (got += c.toString()));
      await new Promise<void>((r) => s.once('connect', () => r()));
      if (first) s.write(first);
      return { got: () => got, socket: s };
    };
    const listener = await client(null);
    const forger = await client(Buffer.concat([randomBytes(16), Buffer.from('forged')]));
    await new Promise((r) => setTimeout(r, 300));
    const child = await client(Buffer.concat([token, Buffer.from('from the child')]));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(child.got(), 'for the child only;');
    assert.equal(Buffer.concat(heard).toString(), 'from the child', 'only the token holder is heard, without its token');
    assert.equal(listener.got(), '');
    assert.equal(forger.got(), '');
    for (const c of [listener, forger, child]) c.socket.destroy();
    channel.destroy();
  });

  test('the real authored tool host, started this way under the permission model, says hello and answers a call', async () => {
    const { HostTree } = await import('../../src/adapters/authored/host-tree.js');
    const { hostArgs } = await import('../../src/adapters/authored/host-launch.js');
    const { DEFAULT_TOOL_HOST_CONFIG } = await import('../../src/adapters/authored/host-config.js');
    const toolDir = fileURLToPath(new URL('../../../test/fixtures/tools/agent/tools/sandboxed/', import.meta.url));
    const entryPath = join(toolDir, 'index.mjs');
    const config = { ...DEFAULT_TOOL_HOST_CONFIG };
    const spec = { toolName: 'sandboxed', toolDir, entryPath, entrySha256: '', readPaths: [], workspace: dir, tier: 'process' as const, network: true };
    const messages: unknown[] = [];
    let ready: () => void;
    let failed: (e: Error) => void;
    const helloSeen = new Promise<void>((r, j) => ((ready = r), (failed = j)));
    let answer: (m: unknown) => void;
    const answered = new Promise<unknown>((r) => (answer = r));
    const host = new HostTree(sup, { command: process.execPath, args: hostArgs(spec, config), cwd: toolDir, env: { ...process.env } as Record<string, string> }, config, 'the tool host', {
      onReady: () => ready(),
      onMessage: (m) => {
        messages.push(m);
        if (m.type === 'result' || m.type === 'error') answer(m);
      },
      onEnd: (err) => {
        failed(new Error(`the host ended before its hello: ${String(err?.message)}`));
      },
    });
    try {
      await helloSeen.catch(async (e: Error) => {
        const out = await host.tree.stop();
        assert.fail(`${e.message}; exit ${String(out.exitCode)}; stderr: ${out.stderr.tail}`);
      });
      assert.equal(platform.treeStartPath(host.tree.spawnId), 'suspended');
      host.send({ type: 'call', id: 'c1', tool: { name: 'sandboxed', entryPath, capabilities: [], dispatchCapability: 'tool.sandboxed' }, input: {}, secrets: {}, deadlineMs: 20_000 });
      const reply = (await answered) as { type: string; value?: { pid: number } };
      assert.equal(reply.type, 'result', JSON.stringify(messages));
      assert.equal(reply.value!.pid, host.tree.pid, 'the tool ran in the host the supervisor started, with no launcher in between');
    } finally {
      host.close();
      await host.tree.stop();
    }
  });
});

