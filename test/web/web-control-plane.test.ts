// The operator's page on the PostgreSQL control plane (`supervisor web --store`, decision 125), in
// Debian's chromium: a session of another machine (a member in this test process, as a run on
// another host would be) is listed with its host and pid, and the page says what it cannot show
// from there (trees, logs, delegations stay on their host). A request that member asks while the
// page is open arrives over the live stream (the control plane's feed, no reload); a click answers
// it on the control plane, where the asking member reads the answer and who gave it. The session's
// timeline is its chain there, and the audit check runs there; its task, held by that member, is
// listed and a click asks that member to cancel it. Another principal's session and request never
// reach the page.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ControlPlaneMember, appendAsOwner, createOwnedSession, getApproval, holdRunTask, migrateControlPlane, openPool, requestApproval, type ControlPlanePool } from '../../src/control-plane/index.js';
import { ownProcessIdentity } from '../../src/process/own-identity.js';
import { localPrincipal } from '../../src/session/principal.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { browser, Cleanup, closeBrowser, NO_BROWSER, startWeb } from './web-fixture.js';
import { waitForAsync } from '../helpers/procs.js';

declare const document: any;

/** A bound on how long a state takes to appear on a loaded machine, not a measurement. */
const REACH_MS = 60_000;

describe('the operator page on the control plane, in chromium', { skip: NO_BROWSER || pgUnavailableReason() || false, timeout: 180_000 }, () => {
  const c = new Cleanup();
  let cluster: PgCluster;
  let url: string;
  let pool: ControlPlanePool;
  let member: ControlPlaneMember;
  before(async () => {
    cluster = await startPgCluster();
    url = await cluster.createDatabase('cp_web');
    pool = await openPool(url);
    await migrateControlPlane(pool);
    member = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: 'build-host-7' }), { reclaimEveryMs: 0 });
  });
  afterEach(() => c.run());
  after(async () => {
    await closeBrowser();
    await member?.leave();
    await pool?.end();
    await cluster?.stop();
  });

  test("another machine's session and a request it asks while the page is open: listed with its host, answered by a click there", async () => {
    const me = localPrincipal();
    const lease = await createOwnedSession(member, { core: '/srv/cores/deploy', host: 'build-host-7' }, undefined, me);
    await appendAsOwner(member, lease, [{ kind: 'effect.requested', payload: { tool: 'terminal', command: 'make deploy' } }]);
    const foreign = await createOwnedSession(member, { core: '/srv/cores/other' }, undefined, 'local:someone-else');
    await requestApproval(member, foreign, { principal: 'local:someone-else', tool: 'terminal', capability: 'terminal.exec', summary: 'cat /etc/shadow', preview: '{}', ttlMs: 600_000 });

    const web = await startWeb(c, { store: url });
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(web.url);
    await page.waitForFunction(() => document.querySelector('main')!.dataset.streamOpens === '1', undefined, { timeout: REACH_MS });
    assert.match(await page.locator('#store-note').innerText(), /^control plane postgres:\/\/.*: process trees and delegations stay on the machine that runs them/);
    const row = page.locator(`tr[data-session="${lease.id}"]`);
    await row.waitFor({ timeout: REACH_MS });
    assert.match(await row.locator('td[data-label="status"]').innerText(), new RegExp(`^running on build-host-7 pid ${process.pid}$`));
    assert.equal(await page.locator('tr[data-session]').count(), 1, "another principal's session is not listed");
    assert.equal(await page.locator('article.approval').count(), 0, "another principal's request is not shown");

    // Asked on the other machine after the page loaded: it arrives over the live stream.
    const asked = await requestApproval(member, lease, { principal: me, tool: 'terminal', capability: 'terminal.exec', summary: 'make deploy', preview: JSON.stringify({ command: 'make deploy' }), ttlMs: 600_000 });
    const card = page.locator(`article.approval[data-approval="${asked.id}"][data-status="pending"]`);
    await card.waitFor({ timeout: REACH_MS });
    assert.match(await card.locator('pre').first().innerText(), /make deploy/);
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator(`article.approval[data-approval="${asked.id}"][data-status="approved"] .outcome`).waitFor({ timeout: REACH_MS });
    assert.equal(await page.locator('main').getAttribute('data-state-loads'), '1', 'the request came over the live stream, no reload');
    const answered = await getApproval(pool, asked.id);
    assert.equal(answered?.status, 'approved', 'the answer is on the control plane, where the asking member reads it');
    assert.match(answered?.decidedBy ?? '', /^the supervisor web page \(pid \d+, tab [a-z0-9]+\)$/);

    // The session's timeline is its chain on the control plane; the audit check runs there. Its
    // task (held by the member that runs it) is listed, and its cancel reaches that member's row.
    const held = await holdRunTask(member, lease, { id: 'tk_web_cp', kind: 'terminal', summary: 'make deploy --watch' });
    await page.getByRole('button', { name: `open session ${lease.id}` }).click();
    const task = page.locator(`#tasks li[data-task="${held.id}"][data-status="running"]`);
    await task.waitFor({ timeout: REACH_MS });
    assert.match(await task.innerText(), /make deploy --watch · build-host-7 pid \d+; attempt 1, rescued 0 of 0/);
    await task.getByRole('button', { name: `cancel task ${held.id}` }).click();
    const flagged = await waitForAsync('the cancel flag on the control plane', async () => (await pool.query<{ by: string | null }>('SELECT cancel_requested_by AS by FROM tasks WHERE id = $1', [held.id])).rows[0]?.by ?? null, REACH_MS);
    assert.match(flagged, /^the supervisor web page \(pid \d+, tab [a-z0-9]+\)$/);
    await page.locator('#timeline li').first().waitFor({ timeout: REACH_MS });
    assert.match(await page.locator('#timeline').innerText(), /effect\.requested[\s\S]*make deploy/);
    await page.getByRole('button', { name: 'Verify audit chain' }).click();
    await page.waitForFunction(() => /^intact: \d+ event/.test(document.getElementById('audit-result')!.textContent ?? ''), undefined, { timeout: REACH_MS });
    // Nothing host-local is claimed: no tree is listed from the control plane.
    assert.equal(await page.locator('#trees article').count(), 0);
  });
});
