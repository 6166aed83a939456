// `supervisor web --socket PATH`: real HTTP over a real UNIX socket. The socket is 0600 in a 0700
// directory; the Host must be a loopback literal (a rebound name is refused) and a mutation's
// Origin must be http:// + that Host; an existing file, a symlink, a socket in use and a directory
// others can enter are refused; a stale socket is replaced; the socket is gone after SIGTERM.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { CLI, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { Cleanup, stateDir, statusOf, store, type RawResponse } from './web-fixture.js';

function overSocket(socketPath: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: { ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}), ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface SocketWeb {
  child: ChildProcess;
  socket: string;
  token: string;
  log(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

async function startOnSocket(c: Cleanup, dir: string, socket: string): Promise<SocketWeb> {
  const child = spawn(process.execPath, [CLI, 'web', '--json', '--socket', socket, '--state-dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await gone;
  };
  c.add(() => stop('SIGKILL'));
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`supervisor web exited (${code}) before printing its URL: ${err}`)));
  });
  const j = JSON.parse(line) as { url: string; port: number | null; socket: string };
  assert.equal(j.port, null);
  assert.equal(j.socket, socket);
  assert.match(j.url, /^http:\/\/localhost\/#token=[A-Za-z0-9_-]{43}$/);
  return { child, socket, token: new URL(j.url).hash.replace('#token=', ''), log: () => err, stop };
}

describe('supervisor web --socket', { skip: process.platform !== 'linux' && 'UNIX sockets are tested on Linux' }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());

  test('0600 in a new 0700 directory; loopback Host only; Origin = http:// + Host; hostile requests 403 and nothing changes; removed on SIGTERM', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const req = s.ask('touch marker');
    const socket = join(dir, 'run', 'web.sock');
    const web = await startOnSocket(c, dir, socket);
    assert.ok(lstatSync(socket).isSocket());
    assert.equal(lstatSync(socket).mode & 0o777, 0o600, 'the socket is 0600');
    assert.equal(lstatSync(join(dir, 'run')).mode & 0o777, 0o700, 'its directory was made 0700');

    const page = await overSocket(socket, 'GET', '/', { host: 'localhost' });
    assert.equal(page.status, 200);
    assert.match(page.body, /<title>supervisor<\/title>/);
    // A forward at some port: localhost:8080 is the page's origin for that browser.
    const json = { host: 'localhost:8080', origin: 'http://localhost:8080', 'content-type': 'application/json' };
    const signIn = await overSocket(socket, 'POST', '/api/session', json, JSON.stringify({ token: web.token }));
    assert.equal(signIn.status, 200, signIn.body);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    assert.match(String(signIn.headers['set-cookie']), /^supervisor_web_s[0-9a-f]{12}=[^;]+; HttpOnly; SameSite=Strict; Path=\/$/);
    const csrf = (JSON.parse(signIn.body) as { csrf: string }).csrf;
    const ok = { ...json, cookie, 'x-supervisor-csrf': csrf };
    const state = await overSocket(socket, 'GET', '/api/state', ok);
    assert.equal(state.status, 200);
    assert.equal((JSON.parse(state.body) as { approvals: { id: string }[] }).approvals[0]?.id, req.id);

    const answer = JSON.stringify({ decision: 'approve', digest: (JSON.parse(state.body) as { approvals: { digest: string }[] }).approvals[0]!.digest });
    const path = `/api/approvals/${req.id}/answer`;
    const hostile: [string, Record<string, string>, string?][] = [
      ['a rebound name', { ...ok, host: 'evil.example:8080', origin: 'http://evil.example:8080' }],
      ['a name ending like a loopback literal', { ...ok, host: 'localhost.evil.example', origin: 'http://localhost.evil.example' }],
      ['no Host', { ...ok, host: '' }],
      ['a missing Origin', Object.fromEntries(Object.entries(ok).filter(([k]) => k !== 'origin'))],
      ['another loopback origin', { ...ok, origin: 'http://localhost:9090' }],
      ['a foreign origin', { ...ok, origin: 'http://evil.example' }],
      ['text/plain', { ...ok, 'content-type': 'text/plain' }],
      ['no CSRF token', Object.fromEntries(Object.entries(ok).filter(([k]) => k !== 'x-supervisor-csrf'))],
      ['cross-site fetch metadata', { ...ok, 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [what, headers] of hostile) {
      const r = await overSocket(socket, 'POST', path, headers, answer);
      assert.equal(r.status, 403, `${what}: ${r.status} ${r.body}`);
      assert.equal(r.headers['access-control-allow-origin'], undefined);
    }
    const read = await overSocket(socket, 'GET', '/api/state', { ...ok, host: 'evil.example' });
    assert.equal(read.status, 403, 'a read with a rebound name');
    assert.equal(statusOf(s.db, req.id).status, 'pending', 'nothing was answered');
    // Each refusal is a line on the server's stderr, which reaches us through a pipe a little later.
    const refusalLines = () => web.log().split('\n').filter((l) => l.startsWith('supervisor web: refused'));
    await waitFor('a log line per refusal', () => refusalLines().length >= hostile.length + 1, 5_000).catch(() => undefined);
    const refusals = refusalLines();
    assert.equal(refusals.length, hostile.length + 1, web.log());
    assert.ok(refusals.some((l) => /Host "evil\.example:8080" is not a loopback address/.test(l)), web.log());

    // The page's own answer, at the Host it was loaded from, goes through.
    const good = await overSocket(socket, 'POST', path, ok, answer);
    assert.equal(good.status, 200, good.body);
    assert.equal(statusOf(s.db, req.id).status, 'approved');

    await web.stop('SIGTERM');
    assert.equal(web.child.exitCode, 0);
    assert.equal(existsSync(socket), false, 'the socket is removed on exit');
    assert.ok(existsSync(join(dir, 'run')), 'its directory stays');
  });

  test('refused: an existing file, a symlink, a socket in use, a directory others can enter; a stale socket is replaced', async () => {
    const dir = stateDir(c);
    store(c, dir);
    // The first refusal through the real CLI, the others in-process through `main(argv, io)`: each
    // comes before anything listens, so it needs no node start of its own (issue 17).
    let real = true;
    const refuse = async (socket: string, why: RegExp): Promise<void> => {
      const argv = ['web', '--socket', socket, '--state-dir', dir];
      const r = real ? spawnSync(process.execPath, [CLI, ...argv], { encoding: 'utf8', timeout: 30_000 }) : await runMain(...argv);
      real = false;
      assert.equal(r.status, 2, `${socket}: ${r.stdout} ${r.stderr}`);
      assert.match(r.stderr, why);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    };
    const priv = join(dir, 'priv');
    mkdirSync(priv, { mode: 0o700 });
    writeFileSync(join(priv, 'file'), 'keep me');
    await refuse(join(priv, 'file'), /exists and is not a socket; nothing is replaced/);
    assert.equal(spawnSync('cat', [join(priv, 'file')], { encoding: 'utf8' }).stdout, 'keep me');
    symlinkSync(join(priv, 'elsewhere.sock'), join(priv, 'link.sock'));
    await refuse(join(priv, 'link.sock'), /is a symbolic link; it is not followed/);
    assert.equal(existsSync(join(priv, 'elsewhere.sock')), false, 'nothing was made through the link');
    const open = join(dir, 'open');
    mkdirSync(open);
    chmodSync(open, 0o755);
    await refuse(join(open, 'web.sock'), /is mode 0755; others could reach the socket\. chmod 700/);
    symlinkSync(priv, join(dir, 'linked-dir'));
    await refuse(join(dir, 'linked-dir', 'web.sock'), /is a symbolic link; give a path in a real directory/);

    const socket = join(priv, 'web.sock');
    const first = await startOnSocket(c, dir, socket);
    await refuse(socket, /is in use \(a server answers on it\)/);
    // Killed: the socket stays behind, nobody answers on it; the next server replaces it.
    await first.stop('SIGKILL');
    assert.ok(lstatSync(socket).isSocket(), 'a SIGKILLed server leaves its socket');
    const second = await startOnSocket(c, dir, socket);
    assert.equal((await overSocket(socket, 'GET', '/', { host: 'localhost' })).status, 200);
    await second.stop('SIGTERM');
    assert.equal(existsSync(socket), false);

    const both = await runMain('web', '--socket', socket, '--port', '0', '--state-dir', dir);
    assert.equal(both.status, 2);
    assert.match(both.stderr, /--socket and --port exclude each other/);
    const opened = await runMain('web', '--socket', socket, '--open', '--state-dir', dir);
    assert.equal(opened.status, 2);
    assert.match(opened.stderr, /--open cannot open a UNIX socket/);
  });
});
