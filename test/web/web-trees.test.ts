// The live process trees on the operator's page, in chromium with authentication on: a real
// `supervisor run` holds a real background task whose tree has a setsid escapee; the open page
// lists the tree's processes (the pids the kernel has, the escapee marked), a click on its Cancel
// stops it, the tree leaves the page without a reload, and every one of its processes is gone.
// `supervisor ps` lists the same tree from the same view.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { alive, CLI, markedPids, waitFor } from '../helpers/procs.js';
import { browser, Cleanup, NO_BROWSER, startWeb, stateDir, backgroundTaskCore, foregroundCore, raw, runStore, signIn, startRun, closeBrowser, type LiveRun } from './web-fixture.js';
import type { Database } from '../../src/store/index.js';
import { readStat } from '../../src/process/linux/procfs.js';

declare const document: any;

/** A bound on how long a state takes to appear on a loaded machine, not a measurement. */
const REACH_MS = 90_000;

describe('live process trees on the operator page', { skip: NO_BROWSER }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());
  after(closeBrowser);

  test('a task tree with an escapee is listed live; Cancel stops it and it leaves the open page; its processes are gone', async () => {
    const dir = stateDir(c);
    const core = backgroundTaskCore(c, 'setsid sleep 301 & sleep 302');
    const run = startRun(c, core, ['--approve', 'terminal'], dir);
    const db = await runStore(c, dir, REACH_MS);
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);

    const spawnId = await waitFor("the task's tree", () => (db.prepare("SELECT spawn_id FROM tasks WHERE status = 'running' AND spawn_id IS NOT NULL").pluck().get() as string | undefined) ?? null, REACH_MS);
    const taskId = db.prepare('SELECT id FROM tasks WHERE spawn_id = ?').pluck().get(spawnId) as string;
    // Both sleeps run: the leader's shell, its sleep, and the setsid'd sleep in a session of its own.
    const pids = await waitFor('both sleeps', () => {
      const p = markedPids(spawnId);
      return p.filter((pid) => readStat(pid)?.name === 'sleep').length === 2 ? p : null;
    }, REACH_MS);
    const card = page.locator(`article.tree[data-spawn="${spawnId}"]`);
    await card.waitFor({ timeout: REACH_MS });
    // The page shows what the kernel has: every marked pid (a read taken while the shell was still
    // forking may show a passing process; the next one, a second later, shows the settled tree).
    const expected = [...pids].sort((a, b) => a - b).join(',');
    await page
      .waitForFunction(
        ([id, want]) => [...document.querySelectorAll(`article.tree[data-spawn="${id}"] tr[data-pid]`)].map((r: any) => Number(r.dataset.pid)).sort((a: number, b: number) => a - b).join(',') === want,
        [spawnId, expected] as const,
        { timeout: 30_000 },
      )
      .catch(async (err: unknown) => assert.fail(`the page shows ${await card.innerText()}; the kernel has ${expected} (${String(err)})`));
    // The escapee is marked: the one sleep that runs in a session other than the leader's.
    const escapees = await card.locator('tr[data-escapee="true"]').evaluateAll((rows: any[]) => rows.map((r) => Number(r.dataset.pid)));
    assert.equal(escapees.length, 1, `one escapee: ${escapees.join(', ')}`);
    const leader = pids.find((pid) => readStat(pid)!.name === 'sh')!;
    assert.equal(readStat(escapees[0]!)!.name, 'sleep');
    assert.notEqual(readStat(escapees[0]!)!.session, readStat(leader)!.session, 'the escapee left the leader\'s session');
    for (const pid of pids.filter((p) => p !== escapees[0])) assert.equal(readStat(pid)!.session, readStat(leader)!.session, `pid ${pid} is in the leader's session`);
    assert.match(await card.locator('td[data-label="command"]').first().innerText(), /\S/);
    assert.match(await card.innerText(), new RegExp(`task ${taskId}`));

    // CPU time (and, from the second read on, the share of a core) and resident memory, from /proc.
    await page.waitForFunction(() => / \(\d+%\)$/.test(document.querySelector('article.tree td[data-label="CPU"]')?.textContent ?? ''), undefined, { timeout: 30_000 });
    for (const cell of await card.locator('td[data-label="CPU"]').allInnerTexts()) assert.match(cell, /^\d+\.\d\d s( \(\d+%\))?$/);
    for (const cell of await card.locator('td[data-label="RSS"]').allInnerTexts()) assert.match(cell, /^\d+\.\d MiB$/);

    // `supervisor ps --json` shows the same tree from the same view (src/operator/live-trees.ts).
    const ps = spawnSync(process.execPath, [CLI, 'ps', '--json', '--state-dir', dir], { encoding: 'utf8' });
    assert.equal(ps.status, 0, ps.stderr);
    const listed = (JSON.parse(ps.stdout) as { trees: { spawnId: string; taskId: string; processes: { pid: number; escapee: boolean }[] }[] }).trees.find((t) => t.spawnId === spawnId);
    assert.equal(listed?.taskId, taskId);
    assert.deepEqual(listed.processes.map((p) => p.pid).sort((a, b) => a - b), [...pids].sort((a, b) => a - b));
    assert.deepEqual(listed.processes.filter((p) => p.escapee).map((p) => p.pid), escapees);
    const text = spawnSync(process.execPath, [CLI, 'ps', '--state-dir', dir], { encoding: 'utf8' }).stdout;
    assert.match(text, new RegExp(`^${spawnId}  sh  running  session \\S+  task ${taskId}  owner pid \\d+$`, 'm'));
    assert.match(text, new RegExp(`^ +${escapees[0]}  sleep .* ESCAPEE$`, 'm'));

    const loads = await page.locator('#app').getAttribute('data-state-loads');
    await card.getByRole('button', { name: new RegExp(`^cancel tree ${spawnId}`) }).click();
    await card.waitFor({ state: 'detached', timeout: 30_000 });
    assert.equal(await page.locator('#app').getAttribute('data-state-loads'), loads, 'the page was not reloaded');
    assert.deepEqual(markedPids(spawnId), [], 'nothing of the tree is left');
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);
    assert.equal(await run.exited, 0, run.output());
  });

  /** The call's own tree (no task) of a run started on `dir` and its pids, once both sleeps run. */
  async function callTree(db: Database): Promise<{ spawnId: string; pids: number[] }> {
    const spawnId = await waitFor("the call's tree", () => (db.prepare("SELECT s.spawn_id FROM spawns s LEFT JOIN tasks t ON t.spawn_id = s.spawn_id WHERE s.status = 'running' AND t.id IS NULL AND s.command LIKE '%sh'").pluck().get() as string | undefined) ?? null, REACH_MS);
    const pids = await waitFor('both sleeps', () => {
      const p = markedPids(spawnId);
      return p.filter((pid) => readStat(pid)?.name === 'sleep').length === 2 ? p : null;
    }, REACH_MS);
    return { spawnId, pids };
  }

  /** The run's output as JSON events (what `supervisor run --json` printed). */
  const eventsOf = (run: LiveRun): { type: string; tool?: string; isError?: boolean; view?: { output?: string } }[] =>
    run.output().trim().split('\n').flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });

  test("a running call's tree with an escapee has a Cancel: it leaves the open page, its processes are gone, the call returns cancelled and the run ends", async (t) => {
    const dir = stateDir(c);
    const run = startRun(c, foregroundCore(c, 'setsid sleep 303 & sleep 304'), ['--approve', 'terminal'], dir);
    const db = await runStore(c, dir, REACH_MS);
    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    const { spawnId, pids } = await callTree(db);
    const card = page.locator(`article.tree[data-spawn="${spawnId}"]`);
    await card.waitFor({ timeout: REACH_MS });
    const expected = [...pids].sort((a, b) => a - b).join(',');
    await page
      .waitForFunction(
        ([id, want]) => [...document.querySelectorAll(`article.tree[data-spawn="${id}"] tr[data-pid]`)].map((r: any) => Number(r.dataset.pid)).sort((a: number, b: number) => a - b).join(',') === want,
        [spawnId, expected] as const,
        { timeout: 30_000 },
      )
      .catch(async (err: unknown) => assert.fail(`the page shows ${await card.innerText()}; the kernel has ${expected} (${String(err)})`));
    assert.equal((await card.locator('tr[data-escapee="true"]').count()), 1, 'the setsid sleep is marked');
    assert.doesNotMatch(await card.innerText(), /task tk_/, "a call's tree, not a task's");

    const loads = await page.locator('#app').getAttribute('data-state-loads');
    const clicked = Date.now();
    await card.getByRole('button', { name: `cancel tree ${spawnId} (a running call's)` }).click();
    await card.waitFor({ state: 'detached', timeout: 30_000 });
    // A figure, not a bound: the owner's poll (200 ms), the ladder, and the page's next read (1 s).
    t.diagnostic(`click -> card gone: ${Date.now() - clicked} ms`);
    assert.equal(await page.locator('#app').getAttribute('data-state-loads'), loads, 'the page was not reloaded');
    assert.deepEqual(markedPids(spawnId), [], 'nothing of the tree is left');
    for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} is gone`);

    // The run goes on: the call returned a cancelled result, the model's next turn ended the run.
    assert.equal(await run.exited, 0, run.output());
    const result = eventsOf(run).find((e) => e.type === 'tool_result' && e.tool === 'terminal');
    assert.equal(result?.isError, true);
    assert.match(result?.view?.output ?? '', /^\[cancelled\]/);
    const by = db.prepare("SELECT json_extract(payload, '$.requested_by') FROM runtime_events WHERE kind = 'tree.cancelled' AND json_extract(payload, '$.spawn_id') = ?").pluck().all(spawnId) as string[];
    assert.equal(by.length, 1, 'one audit record of the cancel');
    assert.match(by[0]!, /^the supervisor web page \(pid \d+, tab [a-z0-9]+\)$/);
  });

  test("a cancel of a call's tree without the page's CSRF token, from a foreign Origin, as text/plain or to a forged Host is refused (403) and the tree runs on", async () => {
    const dir = stateDir(c);
    const run = startRun(c, foregroundCore(c, 'setsid sleep 305 & sleep 306'), ['--approve', 'terminal'], dir);
    const db = await runStore(c, dir, REACH_MS);
    const web = await startWeb(c, dir);
    const { spawnId, pids } = await callTree(db);
    const { headers } = await signIn(web);
    const path = `/api/trees/${spawnId}/cancel`;
    const { 'x-supervisor-csrf': _csrf, ...noCsrf } = headers;
    const attempts: [string, Record<string, string>][] = [
      ['no CSRF header (the cookie alone)', noCsrf],
      ['a foreign Origin', { ...headers, origin: 'http://evil.example' }],
      ['a same-site page on another port', { ...headers, origin: 'http://127.0.0.1:1' }],
      ['no Origin', Object.fromEntries(Object.entries(headers).filter(([k]) => k !== 'origin'))],
      ['text/plain (no preflight)', { ...headers, 'content-type': 'text/plain' }],
      ['a rebinding Host', { ...headers, host: `evil.example:${web.port}` }],
      ['a cross-site fetch', { ...headers, 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [what, h] of attempts) {
      const r = await raw(web.port, 'POST', path, h, '{}');
      assert.equal(r.status, 403, `${what}: ${r.status} ${r.body}`);
      assert.equal(r.headers['access-control-allow-origin'], undefined);
    }
    // Spellings of the id that are not one: refused before the store is asked.
    for (const id of ['SP_0123456789ABCDEF01234567', `${spawnId}x`, 'sp_%2e%2e']) {
      const r = await raw(web.port, 'POST', `/api/trees/${id}/cancel`, headers, '{}');
      assert.ok(r.status === 400 || r.status === 404, `${id}: ${r.status} ${r.body}`);
    }
    // What the attacker got: no request stored, the run's tree untouched.
    assert.equal(db.prepare('SELECT cancel_requested_at FROM spawns WHERE spawn_id = ?').pluck().get(spawnId), null);
    for (const pid of pids) assert.equal(alive(pid), true, `pid ${pid} still runs`);
    assert.equal(db.prepare('SELECT status FROM spawns WHERE spawn_id = ?').pluck().get(spawnId), 'running');

    // The page's own request, with every header it sends, is what stops it (and ends the test's processes).
    const ok = await raw(web.port, 'POST', path, headers, '{}');
    assert.equal(ok.status, 200, ok.body);
    assert.equal(await run.exited, 0, run.output());
    assert.deepEqual(markedPids(spawnId), []);
    const ended = await raw(web.port, 'POST', path, headers, '{}');
    assert.equal(ended.status, 409, ended.body);
    assert.match((JSON.parse(ended.body) as { message: string }).message, /ended already \(cancelled/);
  });
});
