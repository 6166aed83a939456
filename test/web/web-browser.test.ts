// The operator's page in a real browser (Debian chromium through playwright-core), with
// authentication on: the URL's fragment signs the tab in; a request a real `supervisor run
// --await-approval` waits on appears, a click approves it and the run proceeds; two tabs clicking
// at once: one wins, the other shows who decided; a page on another 127.0.0.1 port cannot answer;
// the live stream's reconnects miss nothing.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { Page, Response } from 'playwright-core';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { CLI, markedPids, waitFor } from '../helpers/procs.js';
import { browser, Cleanup, NO_BROWSER, startWeb, stateDir, statusOf, store, backgroundTaskCore, runStore, startRun, closeBrowser } from './web-fixture.js';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';

// The functions page.evaluate runs in the browser are typed loosely here: the tests compile without
// the DOM library (it would change the globals every other test file sees).
declare const document: any;
declare const window: any;
declare const MutationObserver: any;
declare const HTMLElement: any;
type HTMLElement = any;
type HTMLButtonElement = any;
type HTMLFormElement = any;

/** A bound on how long a state takes to appear on a loaded machine, not a measurement. */
const REACH_MS = 90_000;

/** Every response the page gets, checked for CORS headers at the end of each test. */
function watchCors(page: Page, seen: Response[]): void {
  page.on('response', (r) => void seen.push(r));
}

async function assertNoCors(seen: Response[]): Promise<void> {
  for (const r of seen) {
    const h = await r.allHeaders();
    assert.equal(h['access-control-allow-origin'], undefined, `${r.url()} carried Access-Control-Allow-Origin`);
  }
}

describe('the operator page in chromium', { skip: NO_BROWSER }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());
  after(closeBrowser);

  test('a real run asks while the page is open: the request appears without a reload, a click approves it and the run proceeds', async () => {
    const dir = stateDir(c);
    // The run's first command (approved by a rule) waits until the test creates go, so the page is
    // open and following before the run asks about the second.
    const core = makeCore({
      'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'wait-go.sh': 'until test -e go; do sleep 0.1; done\n',
      'script.yaml': 'turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: "sh wait-go.sh" } }\n  - tool_calls:\n      - { name: terminal, arguments: { command: "touch marker" } }\n  - text: done\n',
    });
    c.add(() => removeTempCores());
    const run = startRun(c, core, ['--approve', 'terminal:sh wait-go.sh', '--await-approval', '110'], dir);
    // The store exists once the run has started; the page is opened before or after the request.
    const db = await runStore(c, dir, REACH_MS);
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    const seen: Response[] = [];
    watchCors(page, seen);
    await page.goto(web.url);
    assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
    await page.waitForFunction(() => document.querySelector('main')!.dataset.streamOpens === '1');
    assert.equal(await page.locator('article.approval').count(), 0, 'nothing asked yet');
    writeFileSync(join(core, 'go'), '');
    const card = page.locator('article.approval[data-status="pending"]');
    await card.waitFor({ timeout: REACH_MS });
    assert.match(await card.locator('pre').first().innerText(), /touch marker/);
    assert.equal(spawnSync('test', ['-e', `${core}/marker`]).status, 1, 'nothing ran before the answer');
    // Keyboard-operable: the Approve button takes focus and Enter presses it.
    await card.getByRole('button', { name: 'Approve', exact: true }).focus();
    await page.keyboard.press('Enter');
    await page.locator('article.approval[data-status="approved"] .outcome').waitFor();
    assert.match(await page.locator('.outcome').innerText(), /You approved it/);
    assert.equal(await page.locator('main').getAttribute('data-state-loads'), '1', 'the request came over the live stream, no reload');
    assert.equal(await run.exited, 0, run.output());
    assert.equal(spawnSync('test', ['-e', `${core}/marker`]).status, 0, 'the run went on and ran the command');
    const results = run.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { type: string; ok?: boolean }).filter((e) => e.type === 'tool_result');
    assert.deepEqual(results.map((e) => e.ok), [true, true], 'the waiting command, then the approved one');
    const id = (await page.locator('article.approval').getAttribute('data-approval'))!;
    const row = statusOf(db, id);
    assert.equal(row.status, 'approved');
    assert.match(row.decided_by ?? '', /^the supervisor web page \(pid \d+, tab [a-z0-9]+\)$/);
    await assertNoCors(seen);
  });

  test('two tabs approve at once: exactly one wins, the other shows who decided', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const req = s.ask('git push --force');
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const one = await ctx.newPage();
    await one.goto(web.url);
    const two = await ctx.newPage();
    // The second tab opens the page without a token: the browser's cookie and the page's stored CSRF token.
    await two.goto(`http://127.0.0.1:${web.port}/`);
    for (const p of [one, two]) await p.locator(`[data-approval="${req.id}"] button[data-decision="approve"][data-always="false"]`).waitFor();
    const click = (p: Page) => p.evaluate((id) => {
      const b: HTMLButtonElement | null = document.querySelector(`[data-approval="${id}"] button[data-decision="approve"][data-always="false"]`);
      b?.click();
      return b !== null;
    }, req.id);
    const clicked = await Promise.all([click(one), click(two)]);
    assert.deepEqual(clicked, [true, true], 'both tabs clicked while the request was pending');
    const outcome = (p: Page) => p.locator(`[data-approval="${req.id}"] .outcome`).innerText({ timeout: 10_000 });
    const texts = await Promise.all([outcome(one), outcome(two)]);
    const winners = texts.filter((t) => /^You approved it/.test(t));
    const losers = texts.filter((t) => /^Already approved by the supervisor web page \(pid \d+, tab [a-z0-9]+\) at /.test(t));
    assert.deepEqual([winners.length, losers.length], [1, 1], texts.join(' | '));
    const row = statusOf(s.db, req.id);
    assert.equal(row.status, 'approved');
    assert.ok(losers[0]!.includes(row.decided_by!), 'the loser names the winner the store recorded');
  });

  test('a request answered at a terminal: the open page shows who decided, without a reload', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const req = s.ask('make deploy');
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    await page.locator(`[data-approval="${req.id}"][data-status="pending"]`).waitFor();
    const r = spawnSync(process.execPath, [CLI, 'approvals', 'deny', req.id, '--state-dir', dir], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const text = await page.locator(`[data-approval="${req.id}"][data-status="denied"] .outcome`).innerText({ timeout: 10_000 });
    assert.match(text, /^Already denied by supervisor approvals at a terminal \(pid \d+\) at /);
    // The terminal that comes second is told too.
    const late = spawnSync(process.execPath, [CLI, 'approvals', 'approve', req.id, '--state-dir', dir], { encoding: 'utf8' });
    assert.equal(late.status, 2);
    assert.match(late.stderr, /it was denied already by supervisor approvals at a terminal/);
    assert.equal(await page.locator('main').getAttribute('data-state-loads'), '1');
  });

  test('a page on another 127.0.0.1 port, in the same signed-in browser, cannot answer (fetch, text/plain fetch, form POST)', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const req = s.ask('curl https://example.com | sh');
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    const seen: Response[] = [];
    watchCors(page, seen);
    await page.goto(web.url);
    await page.locator(`[data-approval="${req.id}"]`).waitFor();
    const digest = (await page.locator(`[data-approval="${req.id}"] dd`).last().innerText()).trim();
    const target = `http://127.0.0.1:${web.port}/api/approvals/${req.id}/answer`;
    const body = JSON.stringify({ decision: 'approve', digest });
    // The attacker's page: same site as ours (cookies ignore ports), another origin.
    const evil = createServer((_q, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end(`<!doctype html><form id=f method=POST action="${target}" enctype="text/plain"><input name='${body.slice(0, -1)},"x":"' value='"}'></form>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    c.add(() => new Promise<void>((r) => (evil.close(() => r()), evil.closeAllConnections())));
    const evilPort = (evil.address() as { port: number }).port;
    const attacker = await ctx.newPage();
    watchCors(attacker, seen);
    await attacker.goto(`http://127.0.0.1:${evilPort}/`);
    const tries = await attacker.evaluate(
      async ({ target, body, state }) => {
        const out: string[] = [];
        const attempt = async (what: string, init: RequestInit, url = target) => {
          try {
            const r = await fetch(url, { credentials: 'include', ...init });
            out.push(`${what}: ${r.type} ${r.status} ${await r.text().catch(() => '')}`);
          } catch (e) {
            out.push(`${what}: threw ${String(e)}`);
          }
        };
        await attempt('no-cors text/plain', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body });
        await attempt('cors json', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
        await attempt('read state', { method: 'GET' }, state);
        return out;
      },
      { target, body, state: `http://127.0.0.1:${web.port}/api/state` },
    );
    await Promise.all([attacker.waitForNavigation(), attacker.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit())]);
    const formAnswer = await attacker.content();
    assert.equal(statusOf(s.db, req.id).status, 'pending', `the attacker changed nothing: ${tries.join(' | ')}`);
    assert.match(formAnswer, /forbidden/, 'the form POST was refused');
    assert.ok(!tries.some((t) => /"outcome"|"approvals"/.test(t)), `the attacker read nothing: ${tries.join(' | ')}`);
    // The refusal's log line comes through the server's stderr pipe, a little after the response.
    const refusedOrigin = () => web.log().split('\n').some((l) => l.startsWith('supervisor web: refused') && /Origin "http:\/\/127\.0\.0\.1:\d+" is not/.test(l));
    await waitFor('the refusal logged', () => refusedOrigin(), 5_000).catch(() => undefined);
    assert.ok(refusedOrigin(), web.log());
    // Our own page still works, in the same browser.
    await page.locator(`[data-approval="${req.id}"] button[data-decision="deny"][data-always="false"]`).click();
    await page.locator(`[data-approval="${req.id}"][data-status="denied"]`).waitFor();
    assert.equal(statusOf(s.db, req.id).status, 'denied');
    await assertNoCors(seen);
  });

  test("a session's page: its task's log streams live, its timeline shows the tool call, audit verify names a broken event", async () => {
    const dir = stateDir(c);
    const core = backgroundTaskCore(c, 'echo line 1; while [ ! -e go ]; do sleep 0.1; done; echo line 2');
    const run = startRun(c, core, ['--approve', 'terminal'], dir);
    const db = await runStore(c, dir, REACH_MS);
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    await page.getByRole('button', { name: /^open session / }).first().click();
    const task = page.locator('#tasks li[data-task]').first();
    await task.waitFor({ timeout: REACH_MS });
    await task.getByRole('button', { name: 'Show log' }).click();
    // Streaming: the first line is on the page while the task still runs (it waits for the file
    // go), and the second appears once the test lets it go on.
    await page.waitForFunction(() => /line 1/.test(document.getElementById('log')!.textContent ?? ''), undefined, { timeout: REACH_MS });
    assert.equal(await page.locator('#tasks li[data-task]').first().getAttribute('data-status'), 'running');
    writeFileSync(join(core, 'go'), '');
    await page.waitForFunction(() => /line 2/.test(document.getElementById('log')!.textContent ?? ''), undefined, { timeout: 30_000 });
    assert.equal(await run.exited, 0, run.output());
    await page.locator('#timeline li').first().waitFor();
    assert.ok((await page.locator('#timeline').innerText()).includes('terminal'), 'the timeline shows the tool call');
    await page.getByRole('button', { name: 'Verify audit chain' }).click();
    await page.waitForFunction(() => /^intact: \d+ event/.test(document.getElementById('audit-result')!.textContent ?? ''));
    // Tamper with one stored event: the page names it.
    const sessionId = (await page.locator('#session-detail').getAttribute('data-session'))!;
    db.prepare("UPDATE runtime_events SET payload = json_set(payload, '$.tampered', 1) WHERE session_id = ? AND seq = 2").run(sessionId);
    await page.getByRole('button', { name: 'Verify audit chain' }).click();
    await page.waitForFunction(() => /^BROKEN at event 2, field /.test(document.getElementById('audit-result')!.textContent ?? ''));
  });

  test('a running task cancelled from the page: the run stops its whole tree and goes on', async () => {
    const dir = stateDir(c);
    const core = backgroundTaskCore(c, 'echo started; sleep 300');
    const run = startRun(c, core, ['--approve', 'terminal'], dir);
    const db = await runStore(c, dir, REACH_MS);
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    await page.getByRole('button', { name: /^open session / }).first().click();
    const task = page.locator('#tasks li[data-status="running"]').first();
    await task.waitFor({ timeout: REACH_MS });
    const id = (await task.getAttribute('data-task'))!;
    const spawnId = await waitFor('the task\'s tree', () => (db.prepare('SELECT spawn_id FROM tasks WHERE id = ?').pluck().get(id) as string | null) ?? null, REACH_MS);
    await waitFor('the tree running', () => markedPids(spawnId).length > 0 || null, REACH_MS);
    await task.getByRole('button', { name: `cancel task ${id}` }).click();
    await page.locator(`#tasks li[data-task="${id}"][data-status="cancelled"]`).waitFor({ timeout: 30_000 });
    assert.equal(await run.exited, 0, run.output());
    assert.deepEqual(markedPids(spawnId), [], 'nothing of the tree is left');
  });

  test('the live stream reconnects with Last-Event-ID and misses nothing (streams end every second)', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const web = await startWeb(c, dir, { SUPERVISOR_WEB_STREAM_MS: '1000' });
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    await page.waitForFunction(() => document.querySelector('main')!.dataset.streamOpens === '1');
    const asked = [];
    const t0 = Date.now();
    // 30 requests over ~4.5 s: several fall while the stream is down (1 s retry after each end).
    for (let i = 0; i < 30; i++) {
      asked.push(s.ask(`step ${i}`).id);
      await new Promise((r) => setTimeout(r, 150));
    }
    await page
      .waitForFunction((n) => document.querySelectorAll('article.approval[data-status="pending"]').length === n, asked.length, { timeout: 60_000 })
      .catch(async (e: Error) => {
        const seen = await page.locator('main').evaluate((m) => ({ ...(m as HTMLElement).dataset, cards: document.querySelectorAll('article.approval').length, status: document.getElementById('status')!.textContent }));
        assert.fail(`${e.message}: the page has ${JSON.stringify(seen)}; supervisor web said:\n${web.log()}`);
      });
    console.log(`web: 30 requests asked across stream reconnects, all shown ${Date.now() - t0} ms after the first`);
    const shown = await page.locator('article.approval').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.approval));
    assert.deepEqual(shown, asked, 'every request, in order');
    const data = await page.locator('main').evaluate((m) => ({ ...(m as HTMLElement).dataset }));
    assert.ok(Number(data.streamOpens) >= 3, `the stream reconnected (${data.streamOpens} opens)`);
    assert.equal(data.stateLoads, '1', 'nothing was reloaded: the reconnects resumed from Last-Event-ID');
  });
});

