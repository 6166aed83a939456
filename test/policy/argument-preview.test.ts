import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isSensitiveFieldName, previewArguments } from '../../src/policy/argument-preview.js';

describe('isSensitiveFieldName', () => {
  it('catches sensitive words in any case style', () => {
    for (const name of [
      'token', 'accessToken', 'ACCESS_TOKEN', 'refresh-token', 'secret', 'clientSecret', 'password', 'PASSWD', 'passphrase',
      'apiKey', 'api_key', 'APIKey', 'X-Api-Key', 'apikey', 'private_key', 'privateKey', 'key', 'ssh_keys', 'auth', 'x-auth',
      'authToken', 'Authorization', 'credentials', 'Cookie', 'set-cookie', 'session', 'sessionId', 'session_id', 'bearer',
      'private', 'pass', 'pwd', 'oauth2Token', 'max_tokens',
    ]) {
      assert.ok(isSensitiveFieldName(name), `${name} should be sensitive`);
    }
  });

  it('leaves innocent names alone (key only as a whole word)', () => {
    for (const name of ['monkey', 'keyboard', 'turkey', 'author', 'authors', 'passenger', 'bypass', 'command', 'cwd', 'path', 'query', 'url', 'timeout', 'keynote']) {
      assert.ok(!isSensitiveFieldName(name), `${name} should not be sensitive`);
    }
  });
});

describe('previewArguments', () => {
  it('shows small arguments as they are, as valid JSON', () => {
    const p = previewArguments({ command: 'ls -la', cwd: 'src', n: 3, ok: true, nothing: null, list: [1, 'two'] });
    assert.deepEqual(JSON.parse(p.text), { command: 'ls -la', cwd: 'src', n: 3, ok: true, nothing: null, list: [1, 'two'] });
    assert.equal(p.truncated, false);
    assert.deepEqual(p.redacted, []);
    assert.deepEqual(p.cuts, []);
  });

  it('redacts nested sensitive fields whatever their value, and says where', () => {
    const args = {
      url: 'https://example.com',
      headers: { Authorization: 'Bearer abc.def.ghi', 'X-Api-Key': 'k-123', Accept: 'json' },
      auth: { user: 'u', password: 'hunter2' },
      items: [{ name: 'a', token: { nested: 'deep-secret' } }],
      pairs: [['Authorization', 'Bearer zzz-123-456']],
      env: [{ name: 'GITHUB_TOKEN', value: 'ghp_x1' }, { name: 'HOME', value: '/home/u' }],
      note: 'Basic setup for the project',
    };
    const p = previewArguments(args);
    assert.doesNotMatch(p.text, /abc\.def|k-123|hunter2|deep-secret|zzz-123|ghp_x1/);
    const parsed = JSON.parse(p.text);
    assert.equal(parsed.headers.Authorization, '[redacted]');
    assert.equal(parsed.headers['X-Api-Key'], '[redacted]');
    assert.equal(parsed.headers.Accept, 'json');
    assert.equal(parsed.auth, '[redacted]', 'a sensitive key hides its whole subtree');
    assert.equal(parsed.items[0].token, '[redacted]');
    assert.equal(parsed.items[0].name, 'a');
    assert.deepEqual(parsed.pairs, [['Authorization', '[redacted]']], 'a Bearer value is redacted without a key');
    assert.deepEqual(parsed.env, [{ name: 'GITHUB_TOKEN', value: '[redacted]' }, { name: 'HOME', value: '/home/u' }], 'a name/value pair naming a secret');
    assert.equal(parsed.note, 'Basic setup for the project', 'prose is not an auth header');
    assert.deepEqual(p.redacted, ['$.headers.Authorization', '$.headers["X-Api-Key"]', '$.auth', '$.items[0].token', '$.pairs[0][1]', '$.env[0].value']);
  });

  it('bounds huge input: total size, string length, keys, items and depth, and says what was cut', () => {
    const big = 'x'.repeat(10_000_000);
    const p = previewArguments({
      big,
      many: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])),
      list: Array.from({ length: 1000 }, (_, i) => i),
      deep: { a: { b: { c: { d: { e: 1 } } } } },
    });
    assert.ok(p.text.length <= 2000);
    const parsed = JSON.parse(p.text);
    assert.equal(parsed.big, `${'x'.repeat(200)}…[+${10_000_000 - 200} chars]`);
    assert.equal(Object.keys(parsed.many).length, 21);
    assert.equal(parsed.many['[cut]'], '+80 more keys');
    assert.equal(parsed.list.length, 21);
    assert.equal(parsed.list[20], '[+980 more items]');
    assert.equal(parsed.deep.a.b.c, '[object with 1 key]', 'the arguments object itself is level 1');
    assert.equal(p.truncated, true);
    assert.ok(p.cuts.some((c) => /^\$\.big: string cut to 200 of 10000000 chars$/.test(c)), p.cuts.join('\n'));
    assert.ok(p.cuts.some((c) => /^\$\.many: 80 of 100 keys not shown \(limit 20 keys per object\)$/.test(c)));
    assert.ok(p.cuts.some((c) => /^\$\.list: 980 of 1000 items not shown/.test(c)));
    assert.ok(p.cuts.some((c) => /^\$\.deep\.a\.b\.c: object below depth 4/.test(c)));
  });

  it('stays within the total budget and valid JSON for wide, deep, escaped input', () => {
    const wide = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, Object.fromEntries(Array.from({ length: 20 }, (_, j) => [`j${j}`, '\u0001"\\'.repeat(100)]))]));
    for (const maxChars of [64, 100, 333, 2000, 5000]) {
      const p = previewArguments(wide, { maxChars });
      assert.ok(p.text.length <= maxChars, `${p.text.length} > ${maxChars}`);
      JSON.parse(p.text);
      assert.equal(p.truncated, true);
      assert.ok(p.cuts.some((c) => /preview size limit/.test(c)) || maxChars >= 5000, p.cuts.join('\n'));
    }
    const keyBomb = { ['k'.repeat(100_000)]: 1 };
    const p = previewArguments(keyBomb);
    assert.ok(p.text.length <= 2000);
    JSON.parse(p.text);
  });

  it('never throws: cycles, BigInt, functions, symbols, getters that throw, proxies, odd objects', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    cyclic.list = [cyclic];
    const shared = { v: 1 };
    const getter = Object.defineProperty({}, 'boom', { enumerable: true, get: () => { throw new Error('no'); } });
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const lying = new Proxy([], { get: (t, k) => (k === 'length' ? 'many' : Reflect.get(t, k)) });
    const p = previewArguments({
      cyclic,
      twice: [shared, shared],
      big: 12345678901234567890123n,
      huge: 2n ** 100_000n,
      fn: function named() {},
      sym: Symbol('s'),
      undef: undefined,
      nan: Number.NaN,
      getter,
      revoked,
      lying,
      date: new Date(0),
      bytes: Buffer.from('abc'),
      map: new Map([[1, 2]]),
      err: new Error('bad'),
    });
    const parsed = JSON.parse(p.text);
    assert.equal(parsed.cyclic.self, '[cycle]');
    assert.deepEqual(parsed.cyclic.list, ['[cycle]']);
    assert.deepEqual(parsed.twice, [{ v: 1 }, { v: 1 }], 'a shared object is not a cycle');
    assert.equal(parsed.big, '12345678901234567890123n');
    assert.equal(parsed.huge, '[bigint of 100004 bits]');
    assert.equal(parsed.fn, '[function named]');
    assert.equal(parsed.sym, '[symbol]');
    assert.equal(parsed.undef, '[undefined]');
    assert.equal(parsed.nan, '[NaN]');
    assert.deepEqual(parsed.getter, { boom: '[unreadable]' });
    assert.equal(parsed.revoked, '[unreadable]');
    assert.deepEqual(parsed.lying, []);
    assert.equal(parsed.date, '1970-01-01T00:00:00.000Z');
    assert.equal(parsed.bytes, '[Buffer of 3 bytes]');
    assert.equal(parsed.map, '[Map of 1 entry]');
    assert.equal(parsed.err, '[Error: bad]');
    assert.ok(p.cuts.some((c) => /^\$\.cyclic\.self: cycle/.test(c)));
    for (const top of [undefined, null, 'plain', 7, cyclic, revoked]) JSON.parse(previewArguments(top).text);
  });

  it('keeps surrogate pairs whole when cutting strings', () => {
    const p = previewArguments({ s: '😀'.repeat(300) }, { maxStringChars: 5 });
    const s = JSON.parse(p.text).s as string;
    assert.ok(s.startsWith('😀😀…'), s);
    assert.ok(!/[\ud800-\udbff](?![\udc00-\udfff])/.test(s), 'no lone high surrogate');
  });
});
