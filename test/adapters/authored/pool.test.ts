// Pool recycling and sizing: a worker is replaced after its quota of calls and when it grows past
// the memory limit; calls in parallel get their own warm workers up to the pool size, then wait.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { alive } from '../../helpers/procs.js';
import { openHostFixture } from './host-fixture.js';

// The host's pid as the supervisor sees it: inside its own pid namespace every host is the same number.
const pidOf = (out: { detail: Readonly<Record<string, unknown>> }): number => out.detail.workerPid as number;

describe('tool-host pool', { skip: process.platform !== 'linux' && 'the hostile suite runs on Linux CI' }, () => {
  test('max calls per worker: the worker is replaced after its quota', async () => {
    const f = await openHostFixture({ maxCallsPerWorker: 2 });
    try {
      const a = pidOf(await f.call('hostile', { action: 'ok' }));
      assert.equal(pidOf(await f.call('hostile', { action: 'ok' })), a);
      const c = pidOf(await f.call('hostile', { action: 'ok' }));
      assert.notEqual(c, a);
      assert.equal(alive(a), false);
      const pool = f.hosts.pools()[0]!;
      assert.equal(pool.stats.retired['max-calls'], 1);
    } finally {
      await f.close();
    }
  });

  test('a worker over the memory limit is replaced after its call', async () => {
    const f = await openHostFixture({ rssMb: 1 });
    try {
      const a = pidOf(await f.call('hostile', { action: 'ok' }));
      const b = pidOf(await f.call('hostile', { action: 'ok' }));
      assert.notEqual(a, b);
      assert.ok((f.hosts.pools()[0]!.stats.retired.memory ?? 0) >= 1);
    } finally {
      await f.close();
    }
  });

  test('parallel calls use up to pool_size warm workers, then wait for one', async () => {
    const f = await openHostFixture({ poolSize: 2 });
    try {
      const outs = await Promise.all([1, 2, 3, 4].map(() => f.call('hostile', { action: 'ok' })));
      const pids = new Set(outs.map((o) => pidOf(o)));
      assert.equal(pids.size, 2, [...pids].join(','));
      const pool = f.hosts.pools()[0]!;
      assert.equal(pool.stats.started, 2);
      assert.equal(pool.pids().length, 2);
    } finally {
      await f.close();
    }
  });

  test('closing the supervisor leaves no worker, and a call afterwards fails cleanly', async () => {
    const f = await openHostFixture();
    const pid = pidOf(await f.call('hostile', { action: 'ok' }));
    await f.supervisor.close();
    assert.equal(alive(pid), false);
    await assert.rejects(f.call('hostile', { action: 'ok' }), (err: { code?: string; message: string }) => {
      assert.equal(err.code, 'ADAPTER_FAILED', err.message);
      return true;
    });
    await f.close();
  });
});
