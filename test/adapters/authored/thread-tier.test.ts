// The thread tier: tools the operator marked trusted (the fixture core's agent.yaml) run on worker
// threads inside one trusted tool host, a supervised child process. What it must still do: keep
// the supervisor's environment out, stop a runaway call (terminating its thread, or the whole host
// when the thread cannot be reached), survive the host dying, and serve the next call.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { alive, markedPids } from '../../helpers/procs.js';
import { openHostFixture, rejection, type HostFixture } from './host-fixture.js';

interface Where {
  pid: number;
  threadId: number;
  isMainThread: boolean;
  envKeys: string[];
}
/** What the fixture's `span` action reports: its thread and when it ran, by the host's clock. */
interface Span {
  threadId: number;
  start: number;
  end: number;
}
const where = async (f: HostFixture): Promise<Where> => JSON.parse((await f.call('trusty', { action: 'where' })).text) as Where;

/** Whether something accepts connections on 127.0.0.1:port right now. */
const listening = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

describe('thread tier', { skip: process.platform !== 'linux' && 'the hostile suite runs on Linux CI' }, () => {
  test('a trusted tool runs on a worker thread of a separate host process, without the supervisor environment', async () => {
    process.env.THREAD_TIER_TEST_PROVIDER_KEY = 'sk-must-not-reach-the-host';
    const f = await openHostFixture();
    try {
      const w = await where(f);
      assert.notEqual(w.pid, process.pid);
      assert.equal(w.isMainThread, false);
      assert.ok(w.threadId > 0);
      assert.equal(w.envKeys.includes('THREAD_TIER_TEST_PROVIDER_KEY'), false, w.envKeys.join(','));
      assert.equal(f.hosts.threadHost()?.pid(), w.pid);
      const out = await f.call('trusty', { action: 'where' });
      assert.equal(out.detail.tier, 'thread');
      assert.equal(out.detail.hostPid, w.pid);
      // The process-tier pool was never involved.
      assert.deepEqual(f.hosts.pools(), []);
    } finally {
      delete process.env.THREAD_TIER_TEST_PROVIDER_KEY;
      await f.close();
    }
  });

  test('log and progress lines reach the supervisor before the result; errors, capabilities and secrets behave as in the process tier', async () => {
    const f = await openHostFixture();
    try {
      const talk = await f.call('trusty', { action: 'talk' });
      assert.equal(talk.text, '"talked"');
      assert.deepEqual(talk.detail.logs, ['info: line 0', 'info: line 1', 'info: line 2']);
      assert.deepEqual(talk.detail.progress, { done: 3, total: 3 });
      assert.equal((await f.call('trusty', { action: 'require', arg: 'fixture.read' })).text, '"allowed"');
      const dispatch = await f.call('trusty', { action: 'require', arg: 'tool.call:trusty' });
      assert.equal(dispatch.isError, true);
      assert.match(dispatch.text, /^\[TOOL_CAPABILITY_DENIED\] 'tool\.call:trusty' is this tool's dispatch capability/);
      const thrown = await f.call('trusty', { action: 'throws' });
      assert.equal(thrown.text, '[FIXTURE_BROKE] it broke');
      const bigint = await f.call('trusty', { action: 'unserializable' });
      assert.match(bigint.text, /^\[TOOL_RESULT_INVALID\]/);
      const secret = await f.call('trusty', { action: 'secret' }, { secrets: { API_TOKEN: 'tok-123' } });
      assert.deepEqual(JSON.parse(secret.text), { secrets: { API_TOKEN: 'tok-123' } });
      // The next call gets none: bindings are per call.
      assert.deepEqual(JSON.parse((await f.call('trusty', { action: 'secret' })).text), { secrets: {} });
    } finally {
      await f.close();
    }
  });

  test('a thread that loops forever is terminated at the deadline; the host stays and the next call runs on a fresh thread', async () => {
    const f = await openHostFixture();
    try {
      const before = await where(f);
      const t0 = Date.now();
      // The supervisor's deadline is a timer in this process: a loaded machine fires it late. A
      // timer of the same length started here measures that lateness, which the bound allows for.
      let lateMs = 0;
      const sameTimer = new Promise<void>((r) => setTimeout(() => r(void (lateMs = Date.now() - t0 - 400)), 400));
      const out = await f.call('trusty', { action: 'loop' }, { deadlineMs: 400 });
      await sameTimer;
      const tookMs = Date.now() - t0;
      assert.equal(out.isError, true);
      assert.match(out.text, /^\[TIMEOUT\] the tool ran past its deadline of \d+ ms; the thread that ran it was terminated/);
      assert.ok(tookMs - lateMs < 400 + 450, `stopped in ${tookMs} ms, ${lateMs} ms of it this process's timers firing late`);
      const after = await where(f);
      assert.equal(after.pid, before.pid);
      // Both threads: the one that looped is gone, so whichever serves now is not looping.
      const next = await f.call('trusty', { action: 'talk' });
      assert.equal(next.text, '"talked"');
    } finally {
      await f.close();
    }
  });

  test('a cancel aborts ctx.signal and terminates the thread: CANCELLED, and the next call works', async () => {
    const f = await openHostFixture();
    try {
      await where(f);
      const ac = new AbortController();
      const p = f.call('trusty', { action: 'sleep', arg: 30_000 }, { signal: ac.signal });
      setTimeout(() => ac.abort(), 150);
      const err = await rejection(p);
      assert.equal(err.code, 'CANCELLED');
      assert.match(err.message, /cancelled; the thread that ran it was terminated/);
      assert.equal((await f.call('trusty', { action: 'talk' })).text, '"talked"');
    } finally {
      await f.close();
    }
  });

  test('a thread stuck where termination cannot reach (a blocking wait on a child) gets the whole host tree stopped, its child included', async () => {
    const f = await openHostFixture({ graceMs: 300 });
    try {
      const first = await where(f);
      const out = await f.call('trusty', { action: 'stuck', arg: 60 }, { deadlineMs: 300 });
      assert.match(out.text, /^\[TIMEOUT\] .*its thread did not stop within 300 ms, so the trusted tool host's whole tree was stopped/);
      assert.equal(alive(first.pid), false);
      const live = new Set(f.supervisor.liveTrees().map((t) => t.spawnId));
      // The `sleep 60` the thread waited on carried the host's marker: nothing of that tree is left.
      for (const id of f.spawnIds()) if (!live.has(id)) assert.deepEqual(markedPids(id), [], `tree ${id}`);
      const next = await where(f);
      assert.notEqual(next.pid, first.pid);
      assert.equal(f.hosts.threadHost()?.stats.started, 2);
    } finally {
      await f.close();
    }
  });

  test('a tool that kills the trusted host fails its call with ADAPTER_FAILED; the supervisor and the next call are fine', async () => {
    const f = await openHostFixture();
    try {
      const first = await where(f);
      const err = await rejection(f.call('trusty', { action: 'killhost' }));
      assert.equal(err.code, 'ADAPTER_FAILED');
      assert.match(err.message, /the trusted tool host was killed by SIGKILL/);
      const next = await where(f);
      assert.notEqual(next.pid, first.pid);
    } finally {
      await f.close();
    }
  });

  test('runaway allocation ends only its thread (heap limit per thread); process.exit ends only its thread', async () => {
    const f = await openHostFixture();
    try {
      const first = await where(f);
      const oom = await f.call('trusty', { action: 'allocate' });
      assert.equal(oom.isError, true);
      assert.match(oom.text, /^\[ERR_WORKER_OUT_OF_MEMORY\]/);
      const exit = await f.call('trusty', { action: 'exit' });
      assert.match(exit.text, /^\[THREAD_FAILED\] the tool's thread failed: worker exited with code: 3/);
      const next = await where(f);
      assert.equal(next.pid, first.pid);
    } finally {
      await f.close();
    }
  });

  test('a call that leaves an interval or a listening socket running loses its thread (leaked-resources); the next call runs on a fresh thread', async () => {
    const f = await openHostFixture();
    try {
      const first = await where(f);
      for (const [action, kind] of [
        ['linger', 'Timeout'],
        ['listen', 'TCPServerWrap'],
      ] as const) {
        const out = await f.call('trusty', { action });
        assert.equal(out.isError, false, out.text);
        const left = JSON.parse(out.text) as { threadId: number; port?: number };
        // The call itself succeeds; its detail says the thread was ended and why.
        assert.equal(out.detail.retired, 'leaked-resources', JSON.stringify(out.detail));
        assert.ok((out.detail.leftRunning as string[]).includes(kind), JSON.stringify(out.detail));
        // No later call shares that thread's event loop (threads 2: try more calls than threads).
        for (let i = 0; i < 4; i++) {
          const w = await where(f);
          assert.notEqual(w.threadId, left.threadId, `call ${i} ran on the thread ${action} left work on`);
          assert.equal(w.pid, first.pid, 'only the thread is replaced, not the host');
        }
        assert.equal((await f.call('trusty', { action: 'talk' })).text, '"talked"');
        if (left.port !== undefined) {
          // Ending the thread closed its server.
          let open = true;
          for (let i = 0; i < 50 && open; i++) {
            open = await listening(left.port);
            if (open) await new Promise((r) => setTimeout(r, 20));
          }
          assert.equal(open, false, `the server the tool left on port ${left.port} still accepts connections`);
        }
      }
      assert.equal(f.hosts.threadHost()?.stats.retired['leaked-resources'], 2);
      assert.equal(f.hosts.threadHost()?.stats.started, 1);
    } finally {
      await f.close();
    }
  });

  test('a well-behaved call keeps its thread: the check is not "always recycle"', async () => {
    const f = await openHostFixture();
    try {
      const a = await where(f);
      // A tool that cleans up its own interval and server leaves nothing behind.
      const tidy = await f.call('trusty', { action: 'tidy' });
      assert.equal(tidy.detail.retired, undefined, JSON.stringify(tidy.detail));
      assert.equal((JSON.parse(tidy.text) as { threadId: number }).threadId, a.threadId);
      for (let i = 0; i < 5; i++) {
        const out = await f.call('trusty', { action: 'where' });
        assert.equal(out.detail.retired, undefined);
        assert.equal((JSON.parse(out.text) as Where).threadId, a.threadId, 'sequential calls reuse the warm thread');
      }
      assert.deepEqual(f.hosts.threadHost()?.stats.retired, {});
    } finally {
      await f.close();
    }
  });

  test('calls beyond the threads wait their turn; cancelling a waiting call touches no running thread', async () => {
    const f = await openHostFixture();
    try {
      await where(f);
      const three = (await Promise.all([0, 1, 2].map(() => f.call('trusty', { action: 'span', arg: 300 })))).map((o) => JSON.parse(o.text) as Span);
      // The third call started on a thread only once one of the first two had ended.
      const [first, second, third] = [...three].sort((x, y) => x.start - y.start);
      assert.ok(third!.start >= Math.min(first!.end, second!.end), `three 300 ms calls on two threads: the third did not wait: ${JSON.stringify(three)}`);
      const threadsBefore = new Set<number>();
      // Long enough that the waiting call's answer can only come from the cancel, not from a freed thread.
      let busyEnded = false;
      const busy = Promise.all([f.call('trusty', { action: 'sleep', arg: 3_000 }), f.call('trusty', { action: 'sleep', arg: 3_000 })]).finally(() => (busyEnded = true));
      const ac = new AbortController();
      const waiting = f.call('trusty', { action: 'sleep', arg: 500 }, { signal: ac.signal });
      setTimeout(() => ac.abort(), 50);
      const err = await rejection(waiting);
      assert.equal(err.code, 'CANCELLED');
      assert.match(err.message, /the call was cancelled; it had not started: every thread was busy/);
      assert.equal(busyEnded, false, 'the waiting call was answered at its cancel, while both threads were still busy');
      assert.deepEqual((await busy).map((o) => o.text), ['"slept"', '"slept"']);
      // Both threads served on: the two calls that follow run on threads that existed before.
      for (const o of [await f.call('trusty', { action: 'where' }), await f.call('trusty', { action: 'where' })]) threadsBefore.add((JSON.parse(o.text) as Where).threadId);
      assert.ok([...threadsBefore].every((id) => id <= 2), `a thread was replaced: ${[...threadsBefore].join(', ')}`);
    } finally {
      await f.close();
    }
  });

  test('calls run concurrently, one per thread (tool_hosts.threads: 2)', async () => {
    const f = await openHostFixture();
    try {
      await where(f);
      const [a, b] = (await Promise.all([f.call('trusty', { action: 'span', arg: 400 }), f.call('trusty', { action: 'span', arg: 400 })])).map((o) => JSON.parse(o.text) as Span);
      // Two threads, and each call was running while the other was: concurrent by the host's own
      // clock, whatever the machine's load made of the wall time around them.
      assert.notEqual(a!.threadId, b!.threadId);
      assert.ok(a!.start < b!.end && b!.start < a!.end, `not concurrent: ${JSON.stringify([a, b])}`);
    } finally {
      await f.close();
    }
  });
});
