// Runs inside a fresh network namespace (started by pinned-tls.test.ts with `unshare --net`): brings
// up test addresses, serves HTTPS for `pinned.test` (10.203.0.1) and `other.test` (10.203.0.2), makes
// pinned requests through the controlled resolver and prints one JSON report on stdout.
// Usage: node netns-tls-child.js <dir with ca.crt, pinned.{crt,key}, other.{crt,key}>
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as https from 'node:https';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { fetchPage } from '../../src/net/fetch-page.js';
import type { DnsAnswer } from '../../src/net/resolve.js';

const dir = process.argv[2]!;
const read = (name: string): Buffer => readFileSync(join(dir, name));
const ip = (...args: string[]): void => void execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/** A dummy interface where the kernel has the module; else a veth pair; else loopback itself. */
function bringUpAddresses(): string {
  ip('link', 'set', 'lo', 'up');
  const add = (dev: string): void => {
    ip('addr', 'add', '10.203.0.1/24', 'dev', dev);
    ip('addr', 'add', '10.203.0.2/24', 'dev', dev);
  };
  try {
    ip('link', 'add', 'pin0', 'type', 'dummy');
    ip('link', 'set', 'pin0', 'up');
    add('pin0');
    return 'dummy';
  } catch {
    try {
      ip('link', 'add', 'pin0', 'type', 'veth', 'peer', 'name', 'pin1');
      ip('link', 'set', 'pin0', 'up');
      ip('link', 'set', 'pin1', 'up');
      add('pin0');
      return 'veth';
    } catch {
      add('lo');
      return 'lo';
    }
  }
}

interface Seen {
  host: string | undefined;
  sni: string | false | null | undefined;
  server: string;
  url: string;
}

async function serve(name: string, address: string, seen: Seen[]): Promise<https.Server> {
  const server = https.createServer({ cert: read(`${name}.crt`), key: read(`${name}.key`) }, (req, res) => {
    seen.push({ host: req.headers.host, sni: (req.socket as TLSSocket).servername, server: name, url: req.url ?? '' });
    if (req.url === '/downgrade') {
      res.writeHead(302, { location: 'http://pinned.test/' });
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`hello from ${name}`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(443, address, () => resolve());
  });
  return server;
}

async function outcome(p: Promise<{ status: number; text: string; finalUrl: string }>): Promise<Record<string, unknown>> {
  try {
    const page = await p;
    return { ok: true, status: page.status, text: page.text, finalUrl: page.finalUrl };
  } catch (err) {
    const e = err as { code?: string; message?: string; cause?: { code?: string } };
    return { ok: false, code: e.code, cause: e.cause?.code, message: e.message };
  }
}

async function main(): Promise<void> {
  const iface = bringUpAddresses();
  const seen: Seen[] = [];
  const servers = [await serve('pinned', '10.203.0.1', seen), await serve('other', '10.203.0.2', seen)];
  const ca = read('ca.crt');
  const to = (address: string) => async (host: string): Promise<DnsAnswer[]> => {
    lookups.push(host);
    return [{ address, family: 4 }];
  };
  const lookups: string[] = [];
  const base = { timeoutMs: 10_000, maxBytes: 1 << 20, allow: { cidrs: ['10.203.0.0/24'] } };
  const report = {
    iface,
    pinned: await outcome(fetchPage('https://pinned.test/hello', { ...base, ca, lookup: to('10.203.0.1') })),
    wrongName: await outcome(fetchPage('https://pinned.test/hello', { ...base, ca, lookup: to('10.203.0.2') })),
    untrustedCa: await outcome(fetchPage('https://pinned.test/hello', { ...base, lookup: to('10.203.0.1') })),
    downgrade: await outcome(fetchPage('https://pinned.test/downgrade', { ...base, ca, lookup: to('10.203.0.1') })),
    notAllowed: await outcome(fetchPage('https://pinned.test/hello', { ...base, allow: {}, ca, lookup: to('10.203.0.1') })),
    seen,
    lookups,
  };
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`netns-tls-child: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
