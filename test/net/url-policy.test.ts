// The bypass list: every spelling of a forbidden destination from the public SSRF literature
// (PayloadsAllTheThings "SSRF" localhost/metadata bypasses, the OWASP SSRF prevention cheat sheet,
// the IANA special-purpose registries), next to near neighbours that must stay allowed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UrlPolicyError } from '../../src/net/errors.js';
import { formatIp, parseCidr, parseIp } from '../../src/net/ip-address.js';
import { auditUrl, checkUrl, compileAllowlist } from '../../src/net/url-policy.js';

function refusal(url: string, allow?: Parameters<typeof checkUrl>[1]): UrlPolicyError {
  try {
    checkUrl(url, allow);
  } catch (err) {
    assert.ok(err instanceof UrlPolicyError, `${url}: expected UrlPolicyError, got ${String(err)}`);
    return err;
  }
  assert.fail(`${url} was allowed; it must be refused`);
}

const FORBIDDEN_ADDRESSES: ReadonlyArray<readonly [string, RegExp]> = [
  // Loopback in every IPv4 notation the WHATWG parser (and inet_aton) accepts.
  ['http://127.0.0.1/', /loopback/],
  ['http://127.1/', /loopback/],
  ['http://127.0.1/', /loopback/],
  ['http://2130706433/', /loopback/],
  ['http://0x7f000001/', /loopback/],
  ['http://0x7F.0.0.1/', /loopback/],
  ['http://0x7f.1/', /loopback/],
  ['http://0177.0.0.1/', /loopback/],
  ['http://0177.0000.0000.0001/', /loopback/],
  ['http://017700000001/', /loopback/],
  ['http://0177.0.0.0x1/', /loopback/],
  ['http://127.000.000.001/', /loopback/],
  ['http://127.0.0.1./', /loopback/],
  ['http://127.0.0.1:80\\@example.com/', /loopback/],
  ['http://127.127.127.127:8080/', /loopback/],
  ['http://%31%32%37.0.0.1/', /loopback/],
  ['http://\u2460\u2461\u2466.\u24ea.\u24ea.\u2460/', /loopback/], // circled digits fold to 127.0.0.1
  ['http://127\u30020\u30020\u30021/', /loopback/], // ideographic full stops
  ['http://\uff11\uff12\uff17.0.0.1/', /loopback/], // full-width digits
  ['http://0/', /unspecified/],
  ['http://0.0.0.0:8000/', /unspecified/],
  ['http://0x0/', /unspecified/],
  ['http://0.1.2.3/', /this network/],
  // Cloud metadata: AWS/Azure/GCP/DigitalOcean/OpenStack 169.254.169.254, Alibaba, Oracle, AWS IPv6.
  ['http://169.254.169.254/latest/meta-data/', /link-local/],
  ['http://2852039166/', /link-local/],
  ['http://0xa9fea9fe/', /link-local/],
  ['http://0xa9.0xfe.0xa9.0xfe/', /link-local/],
  ['http://0251.0376.0251.0376/', /link-local/],
  ['http://169.254.43518/', /link-local/],
  ['http://169.16689662/', /link-local/],
  ['http://[::ffff:169.254.169.254]/', /IPv4-mapped.*169\.254\.169\.254/],
  ['http://[::ffff:a9fe:a9fe]/', /IPv4-mapped.*link-local/],
  ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', /IPv4-mapped.*link-local/],
  ['http://[64:ff9b::169.254.169.254]/', /NAT64.*link-local/],
  ['http://[fd00:ec2::254]/', /unique local/],
  ['http://100.100.100.200/', /CGNAT/],
  ['http://192.0.0.192/', /IETF protocol assignments/],
  // RFC 1918 and the rest of the IPv4 special-purpose registry, with both edges of each range.
  ['http://10.0.0.1/', /private/],
  ['http://167772161/', /private/],
  ['http://10.255.255.255/', /private/],
  ['http://172.16.0.1/', /private/],
  ['http://172.31.255.255/', /private/],
  ['http://192.168.0.1/', /private/],
  ['http://3232235521/', /private/],
  ['http://0xc0a80001/', /private/],
  ['http://192.168.1/', /private/],
  ['http://100.64.0.1/', /CGNAT/],
  ['http://100.127.255.255/', /CGNAT/],
  ['http://198.18.0.1/', /benchmarking/],
  ['http://198.19.255.255/', /benchmarking/],
  ['http://192.0.2.1/', /documentation/],
  ['http://198.51.100.1/', /documentation/],
  ['http://203.0.113.255/', /documentation/],
  ['http://192.88.99.1/', /6to4 relay/],
  ['http://192.31.196.1/', /AS112/],
  ['http://192.52.193.1/', /AMT/],
  ['http://192.175.48.1/', /AS112/],
  ['http://224.0.0.1/', /multicast/],
  ['http://239.255.255.250/', /multicast/],
  ['http://240.0.0.1/', /reserved/],
  ['http://255.255.255.254/', /reserved/],
  ['http://255.255.255.255/', /broadcast/],
  ['http://4294967295/', /broadcast/],
  // IPv6, compressed and expanded, and every form that embeds an IPv4 address.
  ['http://[::1]/', /loopback/],
  ['http://[0:0:0:0:0:0:0:1]/', /loopback/],
  ['http://[0000::1]:80/', /loopback/],
  ['http://[::]/', /unspecified/],
  ['http://[::ffff:127.0.0.1]/', /IPv4-mapped.*loopback/],
  ['http://[::ffff:7f00:1]/', /IPv4-mapped.*loopback/],
  ['http://[0:0:0:0:0:ffff:127.0.0.1]/', /IPv4-mapped.*loopback/],
  ['http://[::ffff:10.0.0.1]/', /IPv4-mapped.*private/],
  ['http://[::127.0.0.1]/', /IPv4-compatible.*loopback/],
  ['http://[::8.8.8.8]/', /IPv4-compatible/],
  ['http://[::ffff:0:7f00:1]/', /outside global unicast/],
  ['http://[64:ff9b::7f00:1]/', /NAT64.*loopback/],
  ['http://[64:ff9b::10.0.0.1]/', /NAT64.*private/],
  ['http://[64:ff9b:1::8.8.8.8]/', /local-use NAT64/],
  ['http://[2002:7f00:1::1]/', /6to4.*loopback/],
  ['http://[2002:a9fe:a9fe::]/', /6to4.*link-local/],
  ['http://[2001:0:7f00:1::]/', /Teredo.*server.*loopback/],
  ['http://[2001:0:808:808::80ff:fffe]/', /Teredo.*client embedding 127\.0\.0\.1/],
  ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo.*client embedding 192\.0\.2\.45/],
  ['http://[fc00::1]/', /unique local/],
  ['http://[fdff:ffff::1]/', /unique local/],
  ['http://[fe80::1]/', /link-local/],
  ['http://[febf:ffff::1]/', /link-local/],
  ['http://[fec0::1]/', /site-local/],
  ['http://[ff02::1]/', /multicast/],
  ['http://[ff05::1:3]/', /multicast/],
  ['http://[2001:db8::1]/', /documentation/],
  ['http://[3fff::1]/', /documentation/],
  ['http://[100::1]/', /discard-only/],
  ['http://[2001:2::1]/', /benchmarking/],
  ['http://[2001:10::1]/', /IETF protocol assignments/],
  ['http://[2620:4f:8000::1]/', /AS112/],
  ['http://[5f00::1]/', /segment routing/],
  ['http://[1::1]/', /outside global unicast/],
  ['http://[4000::1]/', /outside global unicast/],
];

const FORBIDDEN_HOSTS: readonly string[] = [
  'http://localhost/',
  'http://LOCALHOST:8080/',
  'http://localhost./',
  'http://localhost../',
  'http://\u24db\u24de\u24d2\u24d0\u24db\u24d7\u24de\u24e2\u24e3/', // circled letters fold to "localhost"
  'http://foo.localhost/',
  'http://printer.local/',
  'http://db.internal/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://metadata/computeMetadata/v1/',
  'http://instance-data/latest/',
  'http://instance-data.ec2.internal/',
  'http://router.home.arpa/',
  'http://nas.lan/',
  'http://box.localdomain/',
  'http://intranet/',
  'http://rancher-metadata/',
  'http://kubernetes/',
];

const ALLOWED: ReadonlyArray<readonly [string, string]> = [
  ['http://example.com/', 'example.com'],
  ['https://Example.COM:8443/x?y#z', 'example.com'],
  ['http://example.com./', 'example.com'],
  ['http://user:pass@example.com/', 'example.com'],
  ['http://localhost.example.com/', 'localhost.example.com'],
  ['http://local.example.com/', 'local.example.com'],
  ['http://internal.example.com/', 'internal.example.com'],
  ['http://b\u00fccher.example/', 'xn--bcher-kva.example'],
  // What the client connects to is what is checked: WHATWG takes the last '@' and stops at '\\'.
  ['http://user@127.0.0.1@example.com/', 'example.com'],
  ['http://example.com\\@127.0.0.1/', 'example.com'],
  ['http://1.1.1.1 &@8.8.4.4# @127.0.0.1/', '8.8.4.4'],
  ['http://8.8.8.8/', '8.8.8.8'],
  ['http://134744072/', '8.8.8.8'],
  ['http://0x08080808/', '8.8.8.8'],
  ['http://11.0.0.1/', '11.0.0.1'],
  ['http://9.255.255.255/', '9.255.255.255'],
  ['http://100.63.255.255/', '100.63.255.255'],
  ['http://100.128.0.1/', '100.128.0.1'],
  ['http://126.255.255.255/', '126.255.255.255'],
  ['http://128.0.0.1/', '128.0.0.1'],
  ['http://169.253.255.255/', '169.253.255.255'],
  ['http://169.255.0.1/', '169.255.0.1'],
  ['http://172.15.255.255/', '172.15.255.255'],
  ['http://172.32.0.1/', '172.32.0.1'],
  ['http://192.167.255.255/', '192.167.255.255'],
  ['http://192.169.0.1/', '192.169.0.1'],
  ['http://198.17.255.255/', '198.17.255.255'],
  ['http://198.20.0.1/', '198.20.0.1'],
  ['http://223.255.255.255/', '223.255.255.255'],
  ['http://[2606:4700:4700::1111]/', '2606:4700:4700::1111'],
  ['http://[2a00:1450:4001:80b::200e]/', '2a00:1450:4001:80b::200e'],
  ['http://[::ffff:8.8.8.8]/', '::ffff:808:808'],
  ['http://[64:ff9b::8.8.8.8]/', '64:ff9b::808:808'],
  ['http://[2002:808:808::1]/', '2002:808:808::1'],
  ['http://[2001:0:4136:e378:8000:63bf:f7f7:f7f7]/', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
  ['http://[2001:db9::1]/', '2001:db9::1'],
  ['http://[2001:200::1]/', '2001:200::1'],
];

describe('URL policy: literal addresses in every notation', () => {
  for (const [url, rule] of FORBIDDEN_ADDRESSES) {
    it(`refuses ${url}`, () => {
      const err = refusal(url);
      assert.equal(err.code, 'url.address_forbidden', err.message);
      assert.match(err.message, rule);
    });
  }
});

describe('URL policy: local, internal and metadata host names', () => {
  for (const url of FORBIDDEN_HOSTS) {
    it(`refuses ${url}`, () => {
      const err = refusal(url);
      assert.equal(err.code, 'url.host_forbidden', err.message);
      assert.match(err.message, /allow\.hosts/, 'the message names the fix');
    });
  }
});

describe('URL policy: near neighbours stay allowed', () => {
  for (const [url, hostname] of ALLOWED) {
    it(`allows ${url} (host ${hostname})`, () => {
      const checked = checkUrl(url);
      assert.equal(checked.hostname, hostname);
      assert.equal(checked.hostAllowed, false);
    });
  }
});

describe('URL policy: schemes and malformed URLs', () => {
  for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1:6379/_INFO', 'dict://127.0.0.1:11211/stat', 'ftp://example.com/', 'ws://example.com/', 'wss://example.com/', 'javascript:alert(1)', 'data:text/html,<b>x</b>', 'ldap://example.com/', 'jar:http://example.com/x.jar!/', 'view-source:http://example.com/']) {
    it(`refuses scheme of ${url}`, () => assert.equal(refusal(url).code, 'url.scheme'));
  }
  for (const url of ['not a url', 'http://', 'http://[::1', 'http://09.0.0.1/', 'http://1.2.3.4.5/', 'http://4294967296/', 'http://[fe80::1%25eth0]/', '//example.com/']) {
    it(`refuses malformed ${JSON.stringify(url)}`, () => assert.equal(refusal(url).code, 'url.invalid'));
  }
});

describe('URL policy: the operator allowlist', () => {
  it('opens exactly the listed range', () => {
    const allow = { cidrs: ['10.203.0.0/24'] };
    assert.equal(checkUrl('http://10.203.0.7/', allow).hostname, '10.203.0.7');
    assert.equal(checkUrl('http://10.203.0.255:8080/', allow).hostname, '10.203.0.255');
    assert.equal(refusal('http://10.203.1.1/', allow).code, 'url.address_forbidden');
    assert.equal(refusal('http://127.0.0.1/', allow).code, 'url.address_forbidden');
  });
  it('matches an IPv4 range against the IPv4-mapped spelling, and IPv6 ranges', () => {
    assert.equal(checkUrl('http://[::ffff:127.0.0.1]/', { cidrs: ['127.0.0.1'] }).hostname, '::ffff:7f00:1');
    assert.equal(refusal('http://[::ffff:127.0.0.2]/', { cidrs: ['127.0.0.1'] }).code, 'url.address_forbidden');
    assert.equal(checkUrl('http://[fd00:1::5]/', { cidrs: ['fd00:1::/64'] }).hostname, 'fd00:1::5');
    assert.equal(refusal('http://[fd00:2::5]/', { cidrs: ['fd00:1::/64'] }).code, 'url.address_forbidden');
  });
  it('opens named hosts exactly, and *.suffix for subdomains only', () => {
    const allow = { hosts: ['wiki.corp.internal', '*.lab.lan', 'intranet'] };
    assert.equal(checkUrl('http://WIKI.corp.internal./', allow).hostAllowed, true);
    assert.equal(checkUrl('http://intranet/', allow).hostAllowed, true);
    assert.equal(checkUrl('http://a.b.lab.lan/', allow).hostAllowed, true);
    assert.equal(refusal('http://other.corp.internal/', allow).code, 'url.host_forbidden');
    assert.equal(refusal('http://lab.lan/', allow).code, 'url.host_forbidden');
    assert.equal(refusal('http://xlab.lan/', allow).code, 'url.host_forbidden');
    // A host name never opens an address.
    assert.equal(refusal('http://127.0.0.1/', { hosts: ['localhost'] }).code, 'url.address_forbidden');
  });
  it('rejects malformed entries with the field and the fix', () => {
    const bad = (allow: Parameters<typeof compileAllowlist>[0], where: RegExp): void => {
      assert.throws(() => compileAllowlist(allow), (e: unknown) => e instanceof UrlPolicyError && e.code === 'url.allowlist_invalid' && where.test(e.message));
    };
    bad({ cidrs: ['10.0.0.0/33'] }, /allow\.cidrs\[0\].*prefix length/);
    bad({ cidrs: ['10.0.0.0/8', 'nonsense'] }, /allow\.cidrs\[1\].*not an IP address/);
    bad({ cidrs: ['0177.0.0.1/32'] }, /allow\.cidrs\[0\]/);
    bad({ hosts: ['127.0.0.1'] }, /allow\.hosts\[0\].*allow\.cidrs/);
    bad({ hosts: ['ok.example', 'bad host'] }, /allow\.hosts\[1\]/);
  });
});

describe('URL policy: audit form and secrecy of userinfo', () => {
  it('keeps scheme, host and port only', () => {
    assert.equal(auditUrl('https://user:pw@Example.COM:8443/p/a?q=secret#frag'), 'https://example.com:8443');
    assert.equal(auditUrl('http://example.com:80/x'), 'http://example.com');
    assert.equal(auditUrl('http://[::FFFF:127.0.0.1]:8080/'), 'http://[::ffff:7f00:1]:8080');
    assert.equal(auditUrl(new URL('https://a:b@example.org/?token=1')), 'https://example.org');
    assert.equal(auditUrl('javascript:alert(1)'), 'javascript:');
    assert.equal(auditUrl('http://user:pw@[::1'), '(invalid URL)');
  });
  it('never puts userinfo, path or query into an error message', () => {
    for (const url of ['http://alice:hunter2@127.0.0.1/p?q=tok', 'ftp://alice:hunter2@example.com/p?q=tok', 'http://alice:hunter2@localhost/p?q=tok', 'http://alice:hunter2@[::1/p?q=tok']) {
      const err = refusal(url);
      for (const secret of ['alice', 'hunter2', 'tok', '/p']) assert.ok(!err.message.includes(secret), `${err.message} leaks ${secret}`);
    }
  });
});

describe('IP address parsing', () => {
  it('round-trips canonical text and rejects lenient or broken forms', () => {
    for (const [text, canonical] of [['::FFFF:127.0.0.1', '::ffff:7f00:1'], ['2001:db8:0:0:0:0:0:1', '2001:db8::1'], ['1:0:0:1:0:0:0:1', '1:0:0:1::1'], ['10.0.0.1', '10.0.0.1'], ['[::1]', '::1'], ['fe80::1%eth0', 'fe80::1%eth0']] as const) {
      const ip = parseIp(text);
      assert.ok(ip, text);
      assert.equal(formatIp(ip), canonical);
    }
    for (const text of ['0177.0.0.1', '127.1', '0x7f000001', '1.2.3.256', '01.2.3.4', '1::2::3', '1:2:3:4:5:6:7:8:9', ':1:2:3:4:5:6:7', '::1.2.3', 'g::1', '', '::%']) {
      assert.equal(parseIp(text), null, text);
    }
    assert.equal(parseCidr('10.0.0.0/8').prefix, 8);
    assert.throws(() => parseCidr('::/129'), /prefix length/);
  });
});
