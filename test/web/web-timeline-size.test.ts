// A session of 10,000 events in the operator's page (Debian chromium, signed in): the timeline holds
// every one, and the page's JS heap stays bounded; the load time is printed. No wall-time bound, so
// it runs in the parallel group (web-latency.test.ts holds the 500 ms bound, alone).
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { browser, Cleanup, NO_BROWSER, startWeb, stateDir, store, closeBrowser } from './web-fixture.js';
import { SessionStore } from '../../src/store/index.js';
import { localPrincipal } from '../../src/session/principal.js';

// page.waitForFunction's function runs in the browser; the tests compile without the DOM library.
declare const document: any;

describe('the operator page in chromium: a long timeline', { skip: NO_BROWSER }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());
  after(closeBrowser);

  test("a session of 10,000 events: the page's timeline holds them all; its heap and load time", async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const sessions = new SessionStore(s.db);
    const scope = { principal: localPrincipal() };
    s.db.transaction(() => {
      for (let i = 0; i < 10_000; i++) sessions.appendEvent(scope, s.sessionId, 'effect.completed', { tool: 'terminal', action: `echo step ${i}`, output: `step ${i} `.repeat(20) });
    })();
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Performance.enable');
    const heap = async () => Object.fromEntries(((await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] }).metrics.map((m) => [m.name, m.value]));
    await cdp.send('HeapProfiler.collectGarbage');
    const before = await heap();
    const t0 = Date.now();
    await page.getByRole('button', { name: `open session ${s.sessionId}` }).click();
    await page.waitForFunction(() => document.querySelectorAll('#timeline li').length === 10_001, undefined, { timeout: 120_000 });
    const loadMs = Date.now() - t0;
    await cdp.send('HeapProfiler.collectGarbage');
    const after = await heap();
    const mb = (v: number | undefined) => ((v ?? 0) / 1024 / 1024).toFixed(1);
    console.log(`web: a 10,000-event timeline loaded in ${loadMs} ms; JS heap ${mb(before.JSHeapUsedSize)} -> ${mb(after.JSHeapUsedSize)} MB, DOM nodes ${before.Nodes} -> ${after.Nodes}`);
    assert.ok((after.JSHeapUsedSize ?? 0) < 256 * 1024 * 1024, `JS heap ${mb(after.JSHeapUsedSize)} MB`);
  });
});
