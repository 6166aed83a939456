// Every command against every kind of unusable state dir: a clear one-paragraph message naming the
// path and the fix, an exit code from the documented set, no stack trace, no hang, and an existing
// store left exactly as it was. Real CLI processes, a real read-only bind mount (root, in a private
// mount namespace) and a real unprivileged user (setpriv).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, tempDir } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const isRoot = process.getuid?.() === 0;
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/**
 * A command line per command that takes --state-dir, with what it needs to get that far; the
 * state dir goes between `head` and `tail` (exec's command follows `--`).
 */
function commands(core: string): [string, (dir: string) => string[]][] {
  const at = (head: string[], tail: string[] = []) => (dir: string) => [...head, '--state-dir', dir, ...tail];
  return [
    ['exec', at(['exec'], ['--', 'true'])],
    ['reconcile', at(['reconcile'])],
    ['audit verify', at(['audit', 'verify'])],
    ['run', at(['run', core, '--prompt', 'hi'])],
    ['call', at(['call', core, 'tools_list'])],
    ['serve', at(['serve', core, '--stdio'])],
    ['sessions', at(['sessions'])],
    ['tasks', at(['tasks'])],
    ['logs', at(['logs', 'tk_00000000000000000000'])],
    ['cancel', at(['cancel', 'tk_00000000000000000000'])],
    ['approvals', at(['approvals'])],
  ];
}

interface Outcome {
  status: number | null;
  stderr: string;
  stdout: string;
}

function check(what: string, r: Outcome, allowed: readonly number[]): void {
  const all = `${r.stdout}\n${r.stderr}`;
  assert.notEqual(r.status, null, `${what}: it hung (killed by the timeout)`);
  assert.ok(allowed.includes(r.status!), `${what}: exit ${r.status}, expected one of ${allowed.join(', ')}\n${r.stderr}`);
  assert.doesNotMatch(all, /^\s+at .+(\(|:\d+:\d+)/m, `${what}: a stack trace reached the terminal\n${all}`);
  assert.doesNotMatch(all, /internal error/, `${what}: an expected failure was reported as internal\n${all}`);
  if (r.status !== 0) assert.match(r.stderr, /^supervisor( [a-z]+)*: .+/, `${what}: no message`);
}

function digest(dir: string): string {
  const h = createHash('sha256');
  for (const name of readdirSync(dir).sort()) if (name.startsWith('supervisor.db')) h.update(name).update(readFileSync(join(dir, name)));
  return h.digest('hex');
}

describe('bad state dirs', () => {
  const tmp = tempDir('bad-state-');
  let core: string;
  before(() => {
    core = makeCore({ 'agent.yaml': 'name: t\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: s.yaml\n', 's.yaml': 'turns:\n  - text: hi\n' });
  });
  after(() => {
    tmp.remove();
    removeTempCores();
  });

  const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000, input: '', env: { ...process.env, ...env } });

  test('a file, a path under a file, /dev/null/x and /proc: every command says so and exits 2 (exec 125)', () => {
    const file = join(tmp.path, 'a-file');
    writeFileSync(file, 'not a directory');
    // Every command for a file and for /proc (the hang); the two other ENOTDIR spellings for the
    // commands that create the store, read it, or run a session (each CLI start costs a second).
    const some = new Set(['exec', 'run', 'sessions']);
    const dirs: [string, (name: string) => boolean][] = [
      [file, () => true],
      [`/proc/sv-state-${randomBytes(4).toString('hex')}`, () => true],
      [join(file, 'below'), (n) => some.has(n)],
      ['/dev/null/x', (n) => some.has(n)],
    ];
    for (const [dir, wanted] of dirs) {
      for (const [name, args] of commands(core).filter(([n]) => wanted(n))) {
        const r = run(args(dir));
        check(`${name} --state-dir ${dir}`, r, name === 'exec' ? [125] : [2]);
        assert.ok(r.stderr.includes(dir) || r.stderr.includes(file), `${name} ${dir}: the message names the path\n${r.stderr}`);
      }
      // The environment variable spelling takes the same path.
      check(`exec with SUPERVISOR_STATE_DIR=${dir}`, run(['exec', '--', 'true'], { SUPERVISOR_STATE_DIR: dir }), [125]);
    }
    assert.equal(readFileSync(file, 'utf8'), 'not a directory');
  });

  test('a read-only state dir holding a store: no stack, and the store is byte for byte unchanged', { skip: !(isRoot && has('unshare')) && 'needs root and unshare for a read-only bind mount' }, () => {
    const dir = join(tmp.path, 'ro');
    const made = run(['run', core, '--prompt', 'first', '--state-dir', dir]);
    assert.equal(made.status, 0, made.stderr);
    const before = digest(dir);
    for (const [name, args] of commands(core)) {
      // A private mount namespace: the bind is gone when the command ends.
      const line = ['mount --bind -o ro "$0" "$0"', 'exec "$@"'].join(' && ');
      const r = spawnSync('unshare', ['-m', 'sh', '-c', line, dir, process.execPath, CLI, ...args(dir)], { encoding: 'utf8', timeout: 30_000, input: '' });
      // Reading commands may answer from a read-only store; anything that writes must fail clearly.
      check(`${name} on a read-only state dir`, r, name === 'exec' ? [125] : [0, 2]);
    }
    assert.equal(digest(dir), before, 'nothing in the existing store changed');
  });

  // nobody must be able to read the checkout itself: a clone inside a 0700 mktemp dir (CI's own
  // command) is not, and the CLI would fail to start for that reason instead of the one under test.
  const nobodyReadsCli = (): boolean => spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', 'test', '-r', CLI]).status === 0;
  test('a missing parent the user may not enter: a clear refusal', { skip: !(isRoot && has('setpriv') && nobodyReadsCli()) && 'needs root to run as nobody, and a checkout nobody can read' }, () => {
    const locked = join(tmp.path, 'locked');
    mkdirSync(locked, { mode: 0o700 });
    chmodSync(tmp.path, 0o755);
    const dir = join(locked, 'child', 'state');
    for (const [name, args] of commands(core)) {
      if (name === 'run' || name === 'call' || name === 'serve') continue; // the temp core is private to root
      const r = spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, CLI, ...args(dir)], {
        encoding: 'utf8',
        timeout: 30_000,
        input: '',
        env: { ...process.env, HOME: '/nonexistent' },
      });
      check(`${name} as nobody under ${locked}`, r, name === 'exec' ? [125] : [2]);
      // Commands that only read say there is no store they may open; the rest say why they cannot make one.
      assert.match(r.stderr, /EACCES|permission denied|no store at/i, `${name}: says why\n${r.stderr}`);
    }
    assert.equal(existsSync(join(locked, 'child')), false);
  });

  test('an unexpected failure says "internal error" and leaves its stack in a 0600 file, not on the terminal', () => {
    // An option value JSON.parse cannot read is a usage error; an internal one needs a bug, so
    // this drives the boundary through its own module with an error no code path expects.
    const script = `import('${new URL('../../src/cli/failure.js', import.meta.url).href}').then(({ reportFailure }) => {
      process.exitCode = reportFailure(new TypeError('x is not a function'), ['sessions', '--state-dir', ${JSON.stringify(tmp.path)}]);
    });`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 70);
    assert.match(r.stderr, /^supervisor: internal error: x is not a function; the details are in (\S+); please report it\n$/);
    const file = /the details are in (\S+);/.exec(r.stderr)![1]!;
    assert.ok(file.startsWith(tmp.path));
    assert.match(readFileSync(file, 'utf8'), /TypeError: x is not a function\n\s+at /);
    assert.equal((readFileSync(file) && spawnSync('stat', ['-c', '%a', file], { encoding: 'utf8' }).stdout.trim()), '600');
    const json = spawnSync(process.execPath, ['--input-type=module', '-e', script.replace("['sessions',", "['sessions', '--json',")], { encoding: 'utf8' });
    const parsed = JSON.parse(json.stderr) as { error: { code: string; exit: number; stackFile: string } };
    assert.deepEqual([parsed.error.code, parsed.error.exit], ['INTERNAL', 70]);
  });
});
