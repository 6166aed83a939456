// The store and the files next to it are private from their first byte: created 0600 in a 0700
// directory by open flags and umask (never chmod-ed after), a state directory others can enter is
// refused, and a symlinked store is refused without touching its target.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore, StoreError, writePrivateFile } from '../../src/store/index.js';
import { tempDir } from '../helpers/procs.js';

const STORE_INDEX = fileURLToPath(new URL('../../src/store/index.js', import.meta.url));
const isRoot = process.getuid?.() === 0;
const hasStrace = spawnSync('strace', ['-V']).status === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const mode = (p: string): number => statSync(p).mode & 0o777;

/** Runs `node -e` that opens the store at `file` (and, with `hold`, keeps it open while `then` runs). */
function openStoreInChild(file: string, env: NodeJS.ProcessEnv = {}, prefix: string[] = []) {
  const script = `const { openStore } = await import(${JSON.stringify(STORE_INDEX)}); const db = openStore(process.argv[1]); db.prepare('CREATE TABLE IF NOT EXISTS t (x)').run(); db.close();`;
  return spawnSync(prefix[0] ?? process.execPath, [...prefix.slice(1), ...(prefix.length ? [process.execPath] : []), '--input-type=module', '-e', script, file], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

describe('the store is private from its first byte', { skip: process.platform !== 'linux' && 'Linux file modes and tools' }, () => {
  const scratch = tempDir('private-store-');
  after(() => scratch.remove());

  test('traced: the store is created by an O_EXCL open with mode 0600, WAL and SHM with 0600, and nothing is chmod-ed', { skip: !hasStrace && 'strace is not installed' }, () => {
    const dir = join(scratch.path, 'traced');
    const trace = join(scratch.path, 'traced.strace');
    const r = openStoreInChild(join(dir, 'supervisor.db'), {}, ['strace', '-f', '-qq', '-e', 'trace=open,openat,creat,chmod,fchmod,fchmodat', '-o', trace]);
    assert.equal(r.status, 0, r.stderr);
    const lines = readFileSync(trace, 'utf8').split('\n').filter((l) => l.includes('supervisor.db') && !l.includes('ENOENT'));
    const create = lines.find((l) => /O_CREAT/.test(l));
    assert.ok(create, lines.join('\n'));
    // The first open that can create the file must be exclusive and 0600: no window with 0644.
    assert.match(create!, /O_EXCL/, `first creating open: ${create}`);
    // The mode is the last argument: `, 0600)`, or `, 0600 <unfinished ...>` when strace -f split
    // the call around another thread's syscall (more likely on a loaded machine).
    const mode0600 = /, 0600(\)| <unfinished \.\.\.>)/;
    assert.match(create!, mode0600, `first creating open: ${create}`);
    assert.deepEqual(lines.filter((l) => /chmod/.test(l)), [], 'no chmod after creation');
    for (const side of ['supervisor.db-wal', 'supervisor.db-shm']) {
      const open = lines.find((l) => l.includes(`${side}"`) && /O_CREAT/.test(l));
      assert.ok(open && mode0600.test(open), `${side}: ${open}`);
    }
  });

  test('a pre-existing state directory with mode 0755 is refused, naming it, its mode and the fix; nothing is created in it', () => {
    const dir = join(scratch.path, 'shared');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    assert.throws(
      () => openStore(join(dir, 'supervisor.db')),
      (err: unknown) => err instanceof StoreError && err.code === 'STATE_DIR_UNSAFE' && err.message.includes(dir) && err.message.includes('0755') && err.message.includes(`chmod 700 ${dir}`),
    );
    assert.equal(existsSync(join(dir, 'supervisor.db')), false, 'no store was created');
    // The operator's explicit opt-out still works, and the file is 0600 all the same.
    const r = openStoreInChild(join(dir, 'supervisor.db'), { SUPERVISOR_ALLOW_SHARED_STATE_DIR: '1' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(mode(join(dir, 'supervisor.db')), 0o600);
  });

  test('a fresh state directory is made 0700; as another user (nobody) the store, its WAL and SHM cannot be opened', { skip: !(isRoot && hasSetpriv) && 'needs root and setpriv' }, () => {
    // The parent is traversable by nobody, so only the state directory's own mode protects the files.
    const parent = join(scratch.path, 'open-parent');
    mkdirSync(parent);
    chmodSync(parent, 0o755);
    chmodSync(scratch.path, 0o755);
    const dir = join(parent, 'state');
    const db = openStore(join(dir, 'supervisor.db'));
    try {
      db.prepare('CREATE TABLE secrets_here (x)').run();
      assert.equal(mode(dir), 0o700);
      for (const f of ['supervisor.db', 'supervisor.db-wal', 'supervisor.db-shm']) {
        assert.equal(mode(join(dir, f)), 0o600, f);
        const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'cat', join(dir, f)], { encoding: 'utf8' });
        assert.notEqual(r.status, 0, `nobody read ${f}`);
        assert.match(r.stderr, /Permission denied/, f);
      }
    } finally {
      db.close();
      chmodSync(scratch.path, 0o700);
    }
  });

  test('a store path that is a symlink is refused and its target keeps its mode and bytes', () => {
    const dir = join(scratch.path, 'linked');
    mkdirSync(dir, { mode: 0o700 });
    const target = join(scratch.path, 'elsewhere.txt');
    writeFileSync(target, 'not a store');
    chmodSync(target, 0o644);
    symlinkSync(target, join(dir, 'supervisor.db'));
    assert.throws(
      () => openStore(join(dir, 'supervisor.db')),
      (err: unknown) => err instanceof StoreError && err.code === 'STATE_FILE_UNSAFE' && /symbolic link/.test(err.message) && err.message.includes('rm '),
    );
    assert.equal(mode(target), 0o644, 'the target was not chmod-ed');
    assert.equal(readFileSync(target, 'utf8'), 'not a store');
  });

  test('a symlinked WAL next to an existing store is refused', () => {
    const dir = join(scratch.path, 'linked-wal');
    openStore(join(dir, 'supervisor.db')).close();
    const target = join(scratch.path, 'wal-target');
    writeFileSync(target, '');
    chmodSync(target, 0o644);
    symlinkSync(target, join(dir, 'supervisor.db-wal'));
    assert.throws(() => openStore(join(dir, 'supervisor.db')), (err: unknown) => err instanceof StoreError && err.code === 'STATE_FILE_UNSAFE');
    assert.equal(mode(target), 0o644);
  });

  test('a token file written over a symlink replaces the link with a fresh 0600 file; the link target is untouched', () => {
    const dir = join(scratch.path, 'tokens');
    mkdirSync(dir, { mode: 0o700 });
    const target = join(scratch.path, 'token-target');
    writeFileSync(target, 'original');
    chmodSync(target, 0o644);
    const tokenFile = join(dir, 'serve.token');
    symlinkSync(target, tokenFile);
    writePrivateFile(tokenFile, 'tok-123\n');
    assert.equal(lstatSync(tokenFile).isSymbolicLink(), false);
    assert.equal(mode(tokenFile), 0o600);
    assert.equal(readFileSync(tokenFile, 'utf8'), 'tok-123\n');
    assert.equal(readFileSync(target, 'utf8'), 'original');
    assert.equal(mode(target), 0o644);
  });
});
