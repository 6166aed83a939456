import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { CapabilitySnapshot } from '../../src/policy/capability.js';
import { bindSecrets, exactSecretGrants } from '../../src/secrets/index.js';
import { binding, rejectsWith, removeTempDirs, storeOf, tempDir } from './secret-fixture.js';

after(removeTempDirs);

const VALUE = 'ghp_exactGrantValue_7f3a';

describe('secret grants match exactly', () => {
  const wildcards = ['*', '**', 'secret:*', 'secret:**', 'secret:GIT*', 'secret:GITHUB_*', 'secret:github_token', 'secret:GITHUB_TOKEN ', ' secret:GITHUB_TOKEN', 'secret:GITHUB_TOKEN/x', 'secret:GITHUB_TOKEN_2', 'secret:GITHUB_TOKE', 'secret', 'secret.read:GITHUB_TOKEN'];

  it('grants secret:NAME only for the exact grant', () => {
    assert.equal(exactSecretGrants(['secret:GITHUB_TOKEN'])('secret:GITHUB_TOKEN'), true);
    assert.equal(exactSecretGrants(['terminal.exec', 'secret:OTHER', 'secret:GITHUB_TOKEN'])('secret:GITHUB_TOKEN'), true);
    for (const g of wildcards) {
      assert.equal(exactSecretGrants([g])('secret:GITHUB_TOKEN'), false, `${JSON.stringify(g)} must not grant secret:GITHUB_TOKEN`);
    }
    assert.equal(exactSecretGrants(wildcards)('secret:GITHUB_TOKEN'), false, 'all of them together grant nothing either');
  });

  it('refuses a binding when only wildcard grants are held, and binds with the exact grant', async () => {
    const store = storeOf(tempDir(), { GITHUB_TOKEN: { env: 'SRC' } }, { SRC: VALUE });
    for (const g of wildcards) {
      const err = await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants: [g] }), 'secret.not_granted', [VALUE]);
      assert.match(err.message, /secret:GITHUB_TOKEN/);
      assert.match(err.message, /wildcards never grant a secret/);
    }
    assert.equal(store.knownValues().length, 0, 'a refused grant reads no value');
    const set = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants: ['secret:GITHUB_TOKEN'] });
    assert.deepEqual(set.overlay.targets, ['GH_TOKEN']);
  });

  it("agrees with the policy layer: CapabilitySnapshot never lets '*' grant a secret and rejects 'secret:*'", async () => {
    const any = CapabilitySnapshot.from(['*', 'terminal.*']);
    assert.equal(any.allows('secret:GITHUB_TOKEN'), false);
    assert.equal(any.allows('terminal.exec'), true, 'the wildcard itself works, so the refusal above is about secrets');
    assert.throws(() => CapabilitySnapshot.from(['secret:*']), /matched exactly/);
    const exact = CapabilitySnapshot.from(['secret:GITHUB_TOKEN']);
    const store = storeOf(tempDir(), { GITHUB_TOKEN: { env: 'SRC' } }, { SRC: VALUE });
    // The snapshot's own predicate is usable as the grant check.
    await rejectsWith(bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants: (c) => any.allows(c) }), 'secret.not_granted');
    const set = await bindSecrets(store, [binding('GITHUB_TOKEN', 'GH_TOKEN')], { grants: (c) => exact.allows(c) });
    assert.equal(set.metadata[0]?.secret, 'GITHUB_TOKEN');
  });

  it('treats a grant predicate that throws on a malformed name as not granted', async () => {
    const snap = CapabilitySnapshot.from(['secret:GITHUB_TOKEN']);
    const store = storeOf(tempDir(), { GITHUB_TOKEN: { env: 'SRC' } }, { SRC: VALUE });
    await rejectsWith(bindSecrets(store, [binding('GITHUB-TOKEN', 'GH_TOKEN')], { grants: (c) => snap.allows(c) }), 'secret.not_granted');
  });

  it('checks the grant before existence, so an ungranted caller cannot probe which secrets exist', async () => {
    const store = storeOf(tempDir(), { REAL: { env: 'SRC' } }, { SRC: VALUE });
    await rejectsWith(bindSecrets(store, [binding('NOT_DECLARED', 'X_TOKEN')], { grants: [] }), 'secret.not_granted');
    await rejectsWith(bindSecrets(store, [binding('REAL', 'X_TOKEN')], { grants: [] }), 'secret.not_granted');
    const err = await rejectsWith(bindSecrets(store, [binding('NOT_DECLARED', 'X_TOKEN')], { grants: ['secret:NOT_DECLARED'] }), 'secret.unknown');
    assert.equal(err.secret, 'NOT_DECLARED');
  });
});
