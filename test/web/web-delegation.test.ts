// A session's delegation tree on the operator's page, in chromium with authentication on: a real
// `supervisor run` delegates root → middle → leaf (scripted models), the leaf waits on an approval;
// the root session's page shows middle with leaf nested under it, both running; the request is
// approved on the page, and the tree turns completed without a reload; a child's own session opens
// from the tree.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { waitFor } from '../helpers/procs.js';
import { browser, Cleanup, NO_BROWSER, startWeb, stateDir, runStore, startRun, closeBrowser } from './web-fixture.js';

declare const document: any;

/** A bound on how long a state takes to appear on a loaded machine, not a measurement. */
const REACH_MS = 90_000;
const j = (v: unknown): string => JSON.stringify(v);

describe('the delegation tree on the operator page', { skip: NO_BROWSER }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());
  after(closeBrowser);

  test('root → middle → leaf: nested and running while the leaf waits, completed after the page approves, without a reload', async () => {
    const dir = stateDir(c);
    const grants = ['agent.spawn', 'terminal.exec'];
    const def = (script: string): string => j({ description: 'd', toolsets: ['agents', 'terminal'], grants, model: { provider: 'scripted', script } });
    const core = makeCore({
      'agent.yaml': j({ name: 'root', toolsets: ['agents', 'terminal'], grants, approval: { default: 'auto' }, model: { provider: 'scripted', script: 'script.yaml' } }),
      'script.yaml': j({ turns: [{ tool_calls: [{ name: 'delegate_task', arguments: { agent: 'middle', task: 'go on' } }] }, { text: 'done' }] }),
      'agent/agents/middle.yaml': def('middle.yaml'),
      'middle.yaml': j({ turns: [{ tool_calls: [{ name: 'delegate_task', arguments: { agent: 'leaf', task: 'touch it' } }] }, { text: 'done' }] }),
      'agent/agents/leaf.yaml': def('leaf.yaml'),
      // The terminal asks; the run waits for an operator (--await-approval) while the tree is up.
      'leaf.yaml': j({ turns: [{ tool_calls: [{ name: 'terminal', arguments: { command: 'touch leaf-ran' } }] }, { text: 'done' }] }),
    });
    c.add(() => removeTempCores());
    const run = startRun(c, core, ['--await-approval', '110'], dir);
    const db = await runStore(c, dir, REACH_MS);
    await waitFor('the leaf asking', () => db.prepare("SELECT 1 FROM pending_approvals WHERE status = 'pending'").get(), REACH_MS);
    const [root, middle, leaf] = db.prepare('SELECT id FROM sessions ORDER BY created_at, rowid').pluck().all() as string[];
    assert.ok(root && middle && leaf, 'three sessions');

    const web = await startWeb(c, dir);
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    await page.getByRole('button', { name: `open session ${root}` }).click();
    const middleItem = page.locator(`#delegations > li[data-child-session="${middle}"]`);
    await middleItem.waitFor({ timeout: REACH_MS });
    const leafItem = middleItem.locator(`ul > li[data-child-session="${leaf}"]`);
    await leafItem.waitFor({ timeout: 30_000 });
    assert.equal(await middleItem.getAttribute('data-status'), 'running');
    assert.equal(await leafItem.getAttribute('data-status'), 'running');
    assert.match(await leafItem.innerText(), /^leaf running · depth 2 · task /);
    assert.match(await leafItem.innerText(), /tools: .*terminal/);
    assert.equal(await page.locator('#delegations > li').count(), 1, 'the leaf is nested under middle, not beside it');

    // The leaf's request is on the page with its chain; approving it lets the whole tree finish.
    const card = page.locator('article.approval[data-status="pending"]');
    await card.waitFor({ timeout: REACH_MS });
    assert.match(await card.innerText(), new RegExp(`${root} → ${middle} → ${leaf}`));
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator(`#delegations li[data-child-session="${leaf}"][data-status="completed"]`).waitFor({ timeout: REACH_MS });
    await page.locator(`#delegations > li[data-child-session="${middle}"][data-status="completed"]`).waitFor({ timeout: REACH_MS });
    assert.equal(await page.locator('main').getAttribute('data-state-loads'), '1', 'no reload');
    assert.equal(await run.exited, 0, run.output());

    // A child's own session opens from the tree, with its own delegation below it.
    await page.getByRole('button', { name: `open child session ${middle}` }).click();
    await page.waitForFunction((id) => document.getElementById('session-detail').dataset.session === id, middle);
    await page.locator(`#delegations > li[data-child-session="${leaf}"]`).waitFor({ timeout: 30_000 });
  });
});
