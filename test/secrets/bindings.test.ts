import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { bindSecrets } from '../../src/secrets/index.js';
import { assertNoLeak, binding, rejectsWith, removeTempDirs, storeOf, tempDir, writeSecretFile } from './secret-fixture.js';

after(removeTempDirs);

const GH = 'ghp_bindingsValue_0a1b2c3d';
const DB = 'db-pass-w0rd-bindings-77';
const NOW = Date.parse('2030-06-01T12:00:00Z');

function twoSecretStore() {
  const dir = tempDir();
  writeSecretFile(dir, 'secrets/db', `${DB}\n`);
  return storeOf(dir, { GITHUB_TOKEN: { env: 'GH_SRC' }, DB_PASSWORD: { file: 'secrets/db' } }, { GH_SRC: GH });
}
const grants = ['secret:GITHUB_TOKEN', 'secret:DB_PASSWORD'];

describe('bindSecrets', () => {
  it('reports the earliest binding expiry as the deadline, and each expiry in the metadata', async () => {
    const store = twoSecretStore();
    const set = await bindSecrets(
      store,
      [
        binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: 300_000 }),
        binding('DB_PASSWORD', 'PGPASSWORD', { ttl_ms: 600_000, expires_at: new Date(NOW + 30_000).toISOString() }),
      ],
      { grants, now: NOW },
    );
    assert.equal(set.deadline, NOW + 30_000);
    assert.deepEqual(set.metadata, [
      { secret: 'GITHUB_TOKEN', target: 'GH_TOKEN', source: 'env', expiresAt: new Date(NOW + 300_000).toISOString() },
      { secret: 'DB_PASSWORD', target: 'PGPASSWORD', source: 'file', expiresAt: new Date(NOW + 30_000).toISOString() },
    ]);
    const ttlOnly = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: 90_000 }), binding('DB_PASSWORD', 'PGPASSWORD', { ttl_ms: 45_000 })], { grants, now: NOW });
    assert.equal(ttlOnly.deadline, NOW + 45_000);
  });

  it('hands the values to a real child through the overlay, once, and only before the deadline', async () => {
    const store = twoSecretStore();
    const set = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN'), binding('DB_PASSWORD', 'PGPASSWORD')], { grants });
    const env = set.overlay.apply({ KEEP: 'kept' });
    const r = spawnSync(process.execPath, ['-e', 'process.stdout.write([process.env.GH_TOKEN, process.env.PGPASSWORD, process.env.KEEP].join("|"))'], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `${GH}|${DB}|kept`, 'the trailing newline of the file was trimmed');
    await rejectsWith(Promise.resolve().then(() => set.overlay.apply({})), 'secret.expired', [GH, DB]);

    const late = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: 1_000 })], { grants, now: NOW });
    const err = await rejectsWith(Promise.resolve().then(() => late.overlay.apply({}, NOW + 1_000)), 'secret.expired', [GH]);
    assert.match(err.message, /expired at/);
    assert.equal(late.overlay.apply({}, NOW + 999).GH_TOKEN, GH, 'the refusal above was the clock, not the overlay');
  });

  it('builds the environment from own keys only: a hostile "__proto__" key in the base or as a target stays a variable, never a prototype', async () => {
    const store = twoSecretStore();
    const set = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants });
    // A base built from parsed JSON has "__proto__" as an own key; assignment would drop it (or,
    // for an object value, make it the environment's prototype).
    const base = JSON.parse('{"KEEP":"kept","__proto__":"from-base","constructor":"c"}') as Record<string, string>;
    const env = set.overlay.apply(base);
    assert.equal(Object.getPrototypeOf(env), Object.prototype, 'the prototype was not replaced');
    assert.deepEqual(Object.keys(env).sort(), ['GH_TOKEN', 'KEEP', '__proto__', 'constructor'].sort());
    assert.equal(Object.getOwnPropertyDescriptor(env, '__proto__')?.value, 'from-base');
    const r = spawnSync('/usr/bin/env', [], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.split('\n').includes('__proto__=from-base'), r.stdout);
    assert.ok(r.stdout.split('\n').includes(`GH_TOKEN=${GH}`));

    const proto = await bindSecrets(store, [binding('GITHUB_TOKEN', '__proto__')], { grants }).catch((e: Error) => e);
    if (proto instanceof Error) return; // refused as a target: nothing to copy
    const env2 = proto.overlay.apply({ A: '1' });
    assert.equal(Object.getOwnPropertyDescriptor(env2, '__proto__')?.value, GH, 'the bound value reached its target');
    assert.equal(Object.getPrototypeOf(env2), Object.prototype);
  });

  it('refuses a binding whose expires is in the past, before reading any value', async () => {
    const store = twoSecretStore();
    const past = new Date(NOW - 1).toISOString();
    const err = await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: 60_000, expires_at: past })], { grants, now: NOW }), 'secret.expired', [GH]);
    assert.match(err.message, /GITHUB_TOKEN/);
    await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: null, expires_at: new Date(NOW).toISOString() })], { grants, now: NOW }), 'secret.expired');
    await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: -5 })], { grants, now: NOW }), 'secret.expired');
    await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: null, expires_at: null })], { grants, now: NOW }), 'secret.expired');
    assert.equal(store.knownValues().length, 0);
    const ok = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN', { ttl_ms: null, expires_at: new Date(NOW + 1).toISOString() })], { grants, now: NOW });
    assert.equal(ok.deadline, NOW + 1);
  });

  it('refuses any binding for a background task, and allows an empty set', async () => {
    const store = twoSecretStore();
    const err = await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants, background: true }), 'secret.background_refused', [GH]);
    assert.match(err.message, /foreground/);
    assert.equal(store.knownValues().length, 0);
    const none = await bindSecrets(store, [], { grants, background: true });
    assert.equal(none.deadline, null);
    assert.deepEqual(none.overlay.apply({ A: '1' }), { A: '1' });
  });

  it('refuses an undeclared secret', async () => {
    const err = await rejectsWith(bindSecrets(twoSecretStore(), [binding('NOPE', 'NOPE_TOKEN')], { grants: ['secret:NOPE'] }), 'secret.unknown');
    assert.match(err.message, /not declared/);
  });

  it('keeps every value out of JSON and util.inspect of the result, its overlay, metadata and the store', async () => {
    const store = twoSecretStore();
    const set = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN'), binding('DB_PASSWORD', 'PGPASSWORD')], { grants });
    for (const [what, x] of Object.entries({ set, overlay: set.overlay, metadata: set.metadata, store, value: await store.resolve('GITHUB_TOKEN') })) {
      assertNoLeak(x, [GH, DB], what);
    }
    assert.equal(JSON.stringify(await store.resolve('DB_PASSWORD')), '"[secret DB_PASSWORD]"');
    // The values are really there, so the leak checks above are about printing, not absence.
    assert.deepEqual(set.values().map((b) => b.toString()), [GH, DB]);
    assert.deepEqual(store.knownValues().map((b) => b.toString()).sort(), [DB, GH].sort());
  });

  it('wipes: a wiped overlay yields zero bytes, not the value', async () => {
    const set = await bindSecrets(twoSecretStore(), [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants });
    set.overlay.wipe();
    assert.equal(set.values()[0]?.toString(), '\0'.repeat(GH.length));
  });
});
