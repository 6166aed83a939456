import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { bindSecrets, MAX_SECRET_BYTES, SecretStore } from '../../src/secrets/index.js';
import { binding, rejectsWith, removeTempDirs, storeOf, tempDir, writeSecretFile } from './secret-fixture.js';

after(removeTempDirs);

const VALUE = 'sk_sourcesValue_5e6f7a8b';
const grants = ['secret:S'];
const bindS = (store: SecretStore) => bindSecrets(store, [binding('S', 'S_TOKEN')], { grants });

describe('env source', () => {
  it("reads the supervisor's environment at bind time (process.env by default)", async () => {
    const name = `SECRETS_TEST_SRC_${process.pid}`;
    const store = new SecretStore({ S: { env: name } }, { coreDir: tempDir() });
    await rejectsWith(bindS(store), 'secret.source_failed');
    process.env[name] = VALUE;
    try {
      const set = await bindS(store);
      assert.equal(set.overlay.apply({}).S_TOKEN, VALUE);
    } finally {
      delete process.env[name];
    }
  });

  it('fails as source_failed when the variable is missing or empty, naming the variable', async () => {
    const missing = await rejectsWith(bindS(storeOf(tempDir(), { S: { env: 'GONE' } }, {})), 'secret.source_failed');
    assert.match(missing.message, /GONE is not set/);
    const empty = await rejectsWith(bindS(storeOf(tempDir(), { S: { env: 'E' } }, { E: '' })), 'secret.source_failed');
    assert.match(empty.message, /E is empty/);
  });
});

describe('file source', () => {
  it('reads relative paths below the core and absolute paths, trimming one trailing newline', async () => {
    const dir = tempDir();
    const cases: [string, string][] = [
      [`${VALUE}\n`, VALUE],
      [`${VALUE}\r\n`, VALUE],
      [VALUE, VALUE],
      [`${VALUE}\n\n`, `${VALUE}\n`],
      [` ${VALUE} `, ` ${VALUE} `],
    ];
    for (const [i, [content, expected]] of cases.entries()) {
      const abs = writeSecretFile(dir, `s/${i}`, content);
      for (const file of [`s/${i}`, abs]) {
        const v = await storeOf(dir, { S: { file } }).resolve('S');
        assert.equal(v.bytes().toString(), expected, `${JSON.stringify(content)} via ${file}`);
      }
    }
  });

  it('re-reads at every binding, so a rotated file is used and both values stay known to the redactor', async () => {
    const dir = tempDir();
    writeSecretFile(dir, 'db', 'first-value-1111');
    const store = storeOf(dir, { S: { file: 'db' } });
    assert.equal((await bindS(store)).overlay.apply({}).S_TOKEN, 'first-value-1111');
    writeSecretFile(dir, 'db', 'second-value-2222');
    assert.equal((await bindS(store)).overlay.apply({}).S_TOKEN, 'second-value-2222');
    assert.deepEqual(store.knownValues().map(String).sort(), ['first-value-1111', 'second-value-2222']);
  });

  it('refuses a file readable or writable by group or others, without printing its contents', { skip: process.platform === 'win32' }, async () => {
    const dir = tempDir();
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602]) {
      writeSecretFile(dir, 'db', VALUE, mode);
      const err = await rejectsWith(bindS(storeOf(dir, { S: { file: 'db' } })), 'secret.source_failed', [VALUE]);
      assert.match(err.message, new RegExp(`mode 0${mode.toString(8)}.*chmod 600`));
      assert.ok(err.message.includes(path.join(dir, 'db')), 'the message names the file');
    }
    writeSecretFile(dir, 'db', VALUE, 0o400);
    assert.equal((await bindS(storeOf(dir, { S: { file: 'db' } }))).overlay.apply({}).S_TOKEN, VALUE);
  });

  it('fails as source_failed for a missing file, a directory, a FIFO, an empty or an oversized file', async () => {
    const dir = tempDir();
    const store = (file: string) => storeOf(dir, { S: { file } });
    assert.match((await rejectsWith(bindS(store('nope')), 'secret.source_failed')).message, /does not exist/);
    fs.mkdirSync(path.join(dir, 'adir'), { mode: 0o700 });
    assert.match((await rejectsWith(bindS(store('adir')), 'secret.source_failed')).message, /directory|not a regular file/);
    writeSecretFile(dir, 'empty', '\n');
    assert.match((await rejectsWith(bindS(store('empty')), 'secret.source_failed')).message, /is empty/);
    const big = `${VALUE}${'x'.repeat(MAX_SECRET_BYTES)}`;
    writeSecretFile(dir, 'big', big);
    assert.match((await rejectsWith(bindS(store('big')), 'secret.source_failed', [VALUE])).message, /larger than/);
    if (process.platform !== 'win32') {
      // Opening a FIFO with no writer would block forever without O_NONBLOCK.
      execFileSync('mkfifo', ['-m', '600', path.join(dir, 'fifo')]);
      assert.match((await rejectsWith(bindS(store('fifo')), 'secret.source_failed')).message, /not a regular file/);
    }
  });

  it('refuses values an environment variable cannot carry (NUL, invalid UTF-8) without printing them', async () => {
    const dir = tempDir();
    writeSecretFile(dir, 'nul', Buffer.concat([Buffer.from(VALUE), Buffer.from([0]), Buffer.from('tail-part')]));
    const nul = await rejectsWith(bindS(storeOf(dir, { S: { file: 'nul' } })), 'secret.source_failed', [VALUE, 'tail-part']);
    assert.match(nul.message, /NUL byte/);
    writeSecretFile(dir, 'latin1', Buffer.concat([Buffer.from(VALUE), Buffer.from([0xff, 0xfe])]));
    assert.match((await rejectsWith(bindS(storeOf(dir, { S: { file: 'latin1' } })), 'secret.source_failed', [VALUE])).message, /UTF-8/);
  });
});

describe('keychain source', () => {
  it('is declared but not implemented: a clear source_failed naming the platform and the alternatives', async () => {
    const err = await rejectsWith(bindS(storeOf(tempDir(), { S: { keychain: { service: 'gh', account: 'me' } } })), 'secret.source_failed');
    assert.match(err.message, new RegExp(`not implemented on this platform \\(${process.platform}\\)`));
    assert.match(err.message, /env: VAR or file: path/);
  });
});
