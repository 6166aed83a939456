// DNS under the policy: one lookup, every answer judged, any unsafe answer refuses the whole request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UrlPolicyError } from '../../src/net/errors.js';
import { type DnsAnswer, resolvePinnedTarget } from '../../src/net/resolve.js';

const fixed = (answers: DnsAnswer[]) => {
  const calls: string[] = [];
  const lookup = async (host: string): Promise<DnsAnswer[]> => {
    calls.push(host);
    return answers;
  };
  return { lookup, calls };
};

async function refused(p: Promise<unknown>, code: string, message?: RegExp): Promise<UrlPolicyError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof UrlPolicyError, String(err));
    assert.equal(err.code, code, err.message);
    if (message) assert.match(err.message, message);
    return err;
  }
  assert.fail(`expected ${code}, but the target was accepted`);
}

describe('resolvePinnedTarget', () => {
  it('pins the first answer when every answer is public, after exactly one lookup', async () => {
    const r = fixed([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }]);
    const t = await resolvePinnedTarget('https://user:pw@www.example.com./path', { lookup: r.lookup });
    assert.equal(t.address, '93.184.216.34');
    assert.equal(t.family, 4);
    assert.equal(t.hostname, 'www.example.com');
    assert.deepEqual(r.calls, ['www.example.com']);
  });

  for (const bad of ['10.0.0.1', '127.0.0.1', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '169.254.169.254', 'fe80::1%eth0', '64:ff9b::a9fe:a9fe', '0.0.0.0']) {
    it(`refuses the whole request when one answer among public ones is ${bad}`, async () => {
      const r = fixed([{ address: '93.184.216.34', family: 4 }, { address: bad, family: bad.includes(':') ? 6 : 4 }]);
      await refused(resolvePinnedTarget('http://rebind.example.com/', { lookup: r.lookup }), 'url.address_forbidden', /DNS answer 2 of 2/);
    });
  }

  it('refuses an answer that is not an IP address (no second interpretation by the OS)', async () => {
    for (const junk of ['0177.0.0.1', '2130706433', 'localhost', '']) {
      await refused(resolvePinnedTarget('http://odd.example.com/', fixed([{ address: junk, family: 4 }])), 'url.address_forbidden', /not an IP address/);
    }
  });

  it('refuses an empty answer and a lookup failure, naming the host and not the path', async () => {
    await refused(resolvePinnedTarget('http://empty.example.com/secret-path', fixed([])), 'url.dns_empty', /empty\.example\.com/);
    const failing = async (): Promise<DnsAnswer[]> => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nx.example.com'), { code: 'ENOTFOUND' });
    };
    const err = await refused(resolvePinnedTarget('http://nx.example.com/secret-path', { lookup: failing }), 'url.dns_failed', /ENOTFOUND/);
    assert.ok(!err.message.includes('secret-path'));
  });

  it('does not look up literal addresses or refused names at all', async () => {
    const r = fixed([{ address: '93.184.216.34', family: 4 }]);
    const t = await resolvePinnedTarget('http://[2606:4700::1111]:8080/', { lookup: r.lookup });
    assert.equal(t.address, '2606:4700::1111');
    assert.equal(t.family, 6);
    await refused(resolvePinnedTarget('http://db.internal/', { lookup: r.lookup }), 'url.host_forbidden');
    await refused(resolvePinnedTarget('http://0x7f000001/', { lookup: r.lookup }), 'url.address_forbidden');
    assert.deepEqual(r.calls, []);
  });

  it('lets answers inside an allowed range through, and only those', async () => {
    const allow = { cidrs: ['10.203.0.0/24'] };
    const ok = await resolvePinnedTarget('https://pinned.test/', { lookup: fixed([{ address: '10.203.0.1', family: 4 }]).lookup, allow });
    assert.equal(ok.address, '10.203.0.1');
    await refused(
      resolvePinnedTarget('https://pinned.test/', { lookup: fixed([{ address: '10.203.0.1', family: 4 }, { address: '10.203.1.1', family: 4 }]).lookup, allow }),
      'url.address_forbidden',
    );
  });

  it('accepts any address for a host the operator named, but still only addresses', async () => {
    const allow = { hosts: ['wiki.corp.internal'] };
    const t = await resolvePinnedTarget('http://wiki.corp.internal/', { lookup: fixed([{ address: '10.1.2.3', family: 4 }]).lookup, allow });
    assert.equal(t.address, '10.1.2.3');
    await refused(resolvePinnedTarget('http://wiki.corp.internal/', { lookup: fixed([{ address: 'evil', family: 4 }]).lookup, allow }), 'url.address_forbidden');
    await refused(resolvePinnedTarget('http://wiki.corp.internal/', { lookup: fixed([]).lookup, allow }), 'url.dns_empty');
  });

  it('stops waiting for a lookup when the signal aborts', async () => {
    const ac = new AbortController();
    const never = (): Promise<DnsAnswer[]> => new Promise(() => {});
    const p = resolvePinnedTarget('http://slow.example.com/', { lookup: never, signal: ac.signal });
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
  });
});
