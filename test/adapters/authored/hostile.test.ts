// Hostile authored tools in the process tier: each attempt is contained with a typed error, the
// next call of the same tool works, and no tool-host process outlives the suite.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { alive } from '../../helpers/procs.js';
import { openHostFixture, rejection, type HostFixture } from './host-fixture.js';

describe('hostile authored tools (process tier)', () => {
  let f: HostFixture;
  before(async () => {
    process.env.SUPERVISOR_FIXTURE_SECRET = 'fixture-secret-value-7f3a9c';
    f = await openHostFixture();
  });
  after(async () => {
    delete process.env.SUPERVISOR_FIXTURE_SECRET;
    await f.close();
  });

  const hostile = (action: string, arg?: string, opts?: { deadlineMs?: number; signal?: AbortSignal }) => f.call('hostile', arg === undefined ? { action } : { action, arg }, opts);
  // The host's pid as the supervisor sees it (its tree's root): inside its own pid namespace the
  // tool sees another number, the same in every host.
  const nextCallWorks = async (): Promise<number> => {
    const out = await hostile('ok');
    assert.equal(out.isError, false, out.text);
    return out.detail.workerPid as number;
  };
  const toolError = (out: { text: string; isError: boolean; detail: Readonly<Record<string, unknown>> }, code: string): void => {
    assert.equal(out.isError, true, out.text);
    assert.equal(out.detail.code, code, out.text);
    assert.match(out.text, new RegExp(`^\\[${code}\\]`));
  };

  test('a read outside its grant (/etc/passwd, the supervisor state dir) is refused', async () => {
    toolError(await hostile('read', '/etc/passwd'), 'ERR_ACCESS_DENIED');
    toolError(await hostile('read', join(f.stateDir, 'supervisor.db')), 'ERR_ACCESS_DENIED');
    toolError(await hostile('readdir', f.stateDir), 'ERR_ACCESS_DENIED');
    // Its own files it may read.
    const own = await hostile('read', join(f.core.dir, 'agent/tools/hostile/tool.yaml'));
    assert.equal(own.isError, false, own.text);
    await nextCallWorks();
  });

  test('writes are refused everywhere, the workspace and its own directory included', async () => {
    for (const target of [join(f.core.workspace, 'pwned.txt'), join(f.core.dir, 'agent/tools/hostile/pwned.txt'), '/tmp/authored-hostile-pwned.txt']) {
      rmSync(target, { force: true });
      toolError(await hostile('write', target), 'ERR_ACCESS_DENIED');
      assert.equal(existsSync(target), false, target);
    }
    await nextCallWorks();
  });

  test('spawning a process and starting a worker thread are refused', async () => {
    toolError(await hostile('spawn'), 'ERR_ACCESS_DENIED');
    toolError(await hostile('worker'), 'ERR_ACCESS_DENIED');
    await nextCallWorks();
  });

  test('a loop that never ends is killed at the deadline (TIMEOUT) with its tree, and the next call gets a new host', async () => {
    const before = await nextCallWorks();
    const t0 = Date.now();
    const out = await hostile('loop', undefined, { deadlineMs: 500 });
    toolError(out, 'TIMEOUT');
    assert.ok(Date.now() - t0 < 5_000, 'stopped promptly');
    assert.equal(alive(before), false, 'the looping host is gone');
    assert.notEqual(await nextCallWorks(), before);
  });

  test('unbounded allocation hits the heap limit: ADAPTER_FAILED naming it, the next call works', async () => {
    const err = await rejection(hostile('allocate', undefined, { deadlineMs: 60_000 }));
    assert.equal(err.code, 'ADAPTER_FAILED', err.message);
    assert.match(err.message, /out of memory|heap/i);
    await nextCallWorks();
  });

  test('a gigabyte on stdout is drained with bounded memory and no artifact; the call completes', async () => {
    const rss0 = process.memoryUsage.rss();
    let peak = rss0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
    try {
      const out = await hostile('print', '1024', { deadlineMs: 120_000 });
      assert.equal(out.isError, false, out.text);
      assert.deepEqual(JSON.parse(out.text), { printedMiB: 1024 });
    } finally {
      clearInterval(sampler);
    }
    assert.ok(peak - rss0 < 200 * 1024 * 1024, `supervisor RSS grew by ${Math.round((peak - rss0) / 1048576)} MiB`);
    // Tails only: no artifact of the stream was written.
    for (const id of f.spawnIds()) assert.equal(existsSync(join(f.stateDir, 'artifacts', id)), false);
    await nextCallWorks();
  });

  for (const [action, code] of [
    ['garbage', 'IPC_MALFORMED'],
    ['giant', 'IPC_FRAME_TOO_LARGE'],
    ['forge', 'IPC_UNEXPECTED'],
  ] as const) {
    test(`${action} written straight onto the channel fd ends that host with ${code}; the next call works`, async () => {
      const before = await nextCallWorks();
      const err = await rejection(hostile(action));
      assert.equal(err.code, code, err.message);
      assert.equal(alive(before), false, 'the offending host is gone');
      assert.notEqual(await nextCallWorks(), before);
    });
  }

  test("the supervisor's environment does not reach the tool (no secret, only the allowlist)", async () => {
    const out = await hostile('env');
    assert.equal(out.isError, false);
    assert.equal(out.text.includes('fixture-secret-value-7f3a9c'), false);
    const keys = Object.keys(JSON.parse(out.text) as object);
    // PWD: set by the /bin/sh that enters the tree's cgroup before exec.
    const allowed = new Set(['PWD', 'HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'SUPERVISOR_SPAWN_ID', 'SUPERVISOR_CHANNEL_FD']);
    assert.deepEqual(keys.filter((k) => !allowed.has(k)), []);
  });

  test('a tool that keeps running after its result (setInterval) loses its host; the next call gets a new one', async () => {
    const before = await nextCallWorks();
    const out = await hostile('linger');
    assert.equal(out.isError, false);
    assert.equal(out.detail.workerPid, before);
    await new Promise((r) => setTimeout(r, 0));
    const pool = f.hosts.pools().find((p) => p.spec.toolName === 'hostile')!;
    assert.ok((pool.stats.retired['leaked-resources'] ?? 0) >= 1, JSON.stringify(pool.stats));
    assert.notEqual(await nextCallWorks(), before);
    assert.equal(alive(before), false);
  });

  test('a tool that closes its server and clears its timer before returning keeps its host (the leak check is not "always recycle")', async () => {
    const before = await nextCallWorks();
    const pool = f.hosts.pools().find((p) => p.spec.toolName === 'hostile')!;
    const leaked = pool.stats.retired['leaked-resources'] ?? 0;
    const out = await hostile('tidy');
    assert.equal(out.isError, false, out.text);
    assert.equal(out.detail.workerPid, before);
    assert.equal(await nextCallWorks(), before, 'the same host serves the next call');
    assert.equal(pool.stats.retired['leaked-resources'] ?? 0, leaked);
  });

  test('ctx.capability.require allows the listed capability only; the dispatch gate and others are TOOL_CAPABILITY_DENIED', async () => {
    const ok = await hostile('require', 'notes.read:alpha');
    assert.equal(ok.isError, false, ok.text);
    toolError(await hostile('require', 'notes.write:alpha'), 'TOOL_CAPABILITY_DENIED');
    toolError(await hostile('require', 'tool.call:hostile'), 'TOOL_CAPABILITY_DENIED');
    await nextCallWorks();
  });

  test('an oversized result is a typed error; log lines are bounded in count and size', async () => {
    toolError(await hostile('big'), 'TOOL_RESULT_TOO_LARGE');
    const out = await hostile('chatty');
    assert.equal(out.isError, false);
    const logs = out.detail.logs as string[];
    assert.ok((out.detail.logCount as number) <= 201, String(out.detail.logCount));
    assert.ok(logs.length <= 50 && logs.every((l) => l.length <= 4096 + 8));
    assert.deepEqual(out.detail.progress, { done: 1, total: 2 });
    await nextCallWorks();
  });

  test('cancel stops the tree (CANCELLED) and the next call works', async () => {
    const before = await nextCallWorks();
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const err = await rejection(hostile('cancelme', undefined, { signal: ac.signal }));
    assert.equal(err.code, 'CANCELLED', err.message);
    assert.equal(alive(before), false);
    await nextCallWorks();
  });

  test('secrets bound to a call reach ctx.secrets, not the environment', async () => {
    const out = await f.call('hostile', { action: 'secret' }, { secrets: { API_TOKEN: 'tok-123456789' } });
    assert.deepEqual(JSON.parse(out.text), { names: ['API_TOKEN'] });
  });
});
