// The pinning proof with real TLS: inside a network namespace this test creates (`unshare --net`, so
// the host's network is untouched and nothing outside the namespace is reachable), an HTTPS server
// for `pinned.test` with a certificate from a test CA. The controlled resolver maps the name to
// 10.203.0.1 (on the operator allowlist); the request must arrive with Host and SNI `pinned.test`
// and a verified certificate, and a certificate for another name must fail.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const CHILD = fileURLToPath(new URL('./netns-tls-child.js', import.meta.url));
const missing = ['unshare', 'ip', 'openssl'].filter((cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status !== 0);
const skip = missing.length > 0 ? `needs ${missing.join(', ')} on PATH (util-linux, iproute2, openssl)` : false;
if (skip) console.log(`# pinned-tls: SKIPPED: ${skip}`);

function openssl(dir: string, args: string[]): void {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, `openssl ${args.join(' ')} failed: ${r.stderr}`);
}

/** A throwaway CA and two leaf certificates, one per test name. */
function makeCertificates(dir: string): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(dir, ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=isolation-supervisor net test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  for (const name of ['pinned', 'other']) {
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=DNS:${name}.test\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`);
    openssl(dir, ['req', '-new', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${name}.test`]);
    openssl(dir, ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`]);
  }
}

describe('pinned dispatcher over real TLS in a network namespace', { skip }, () => {
  let dir = '';
  let report: Record<string, any> = {};

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'net-tls-'));
    makeCertificates(dir);
    const child = spawn('unshare', ['--net', '--', process.execPath, CHILD, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(killer);
    assert.equal(code, 0, `the namespace child failed (exit ${code}); run as root with unshare and iproute2.\n${err}`);
    report = JSON.parse(out) as Record<string, any>;
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('reaches the pinned address with Host and SNI pinned.test and a verified certificate', () => {
    assert.deepEqual(report.pinned, { ok: true, status: 200, text: 'hello from pinned', finalUrl: 'https://pinned.test' });
    const first = report.seen[0];
    assert.deepEqual(first, { host: 'pinned.test', sni: 'pinned.test', server: 'pinned', url: '/hello' });
    console.log(`# pinned-tls: test addresses on a ${report.iface} interface`);
  });

  it('fails when the pinned address presents a certificate for another name', () => {
    assert.equal(report.wrongName.ok, false);
    assert.equal(report.wrongName.code, 'fetch.tls_failed', report.wrongName.message);
    assert.equal(report.wrongName.cause, 'ERR_TLS_CERT_ALTNAME_INVALID');
    // The handshake reached other.test's server but no request was served there.
    assert.ok(!report.seen.some((s: { server: string }) => s.server === 'other'));
  });

  it('verifies the chain: without the test CA the same server is refused', () => {
    assert.equal(report.untrustedCa.ok, false);
    assert.equal(report.untrustedCa.code, 'fetch.tls_failed', report.untrustedCa.message);
  });

  it('does not follow an https to http downgrade, and needs the allowlist for the test range', () => {
    assert.equal(report.downgrade.code, 'url.redirect_forbidden');
    assert.match(report.downgrade.message, /downgrade/);
    assert.equal(report.notAllowed.code, 'url.address_forbidden');
    assert.equal(report.seen.length, 2, 'only /hello and /downgrade reached a server');
  });
});
