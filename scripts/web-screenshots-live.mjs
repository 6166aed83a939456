#!/usr/bin/env node
// Screenshots of the operator's page with a live run (docs/images/web-trees-*.png): a real
// `supervisor run` whose root agent holds a background task (a shell with a setsid escapee) and
// delegates to a child agent, so the page shows the live process tree and the session's delegation
// tree; at 1280 px and at a phone's 390 px. Debian chromium through playwright-core; everything it
// starts is stopped at the end (the run by SIGTERM, then `supervisor reconcile`). Run after
// `npm run build`.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'bin/supervisor.js');
const state = mkdtempSync(join(tmpdir(), 'web-shots-live-'));
const core = mkdtempSync(join(tmpdir(), 'web-shots-core-'));
const profile = mkdtempSync(join(tmpdir(), 'web-shots-chromium-'));
const j = (v) => JSON.stringify(v);
const files = {
  'agent.yaml': j({ name: 'release-bot', toolsets: ['agents', 'terminal', 'tasks'], grants: ['agent.spawn', 'terminal.exec', 'task.read'], approval: { default: 'auto' }, model: { provider: 'scripted', script: 'root.yaml' } }),
  // The root starts a build in the background, delegates a review, then waits on its build.
  'root.yaml': j({
    turns: [
      { tool_calls: [{ name: 'terminal', arguments: { command: 'setsid sleep 120 & sleep 121', background: true } }] },
      { tool_calls: [{ name: 'delegate_task', arguments: { agent: 'reviewer', task: 'list the tasks' } }] },
      { tool_calls: [{ name: 'yield_until', arguments: { timeout_seconds: 100 } }] },
      { text: 'done' },
    ],
  }),
  'agent/agents/reviewer.yaml': j({ description: 'reviews', toolsets: ['tasks'], grants: ['task.read'], model: { provider: 'scripted', script: 'reviewer.yaml' } }),
  'reviewer.yaml': j({ turns: [{ tool_calls: [{ name: 'task_list', arguments: {} }] }, { text: 'one build running' }] }),
};
for (const [name, text] of Object.entries(files)) {
  mkdirSync(dirname(join(core, name)), { recursive: true });
  writeFileSync(join(core, name), text);
}
let run;
let web;
let context;
try {
  run = spawn(process.execPath, [cli, 'run', core, '--approve', 'terminal', '--state-dir', state], { stdio: 'ignore' });
  // The store exists and the task's tree runs before the page is opened.
  const { openStore } = await import(join(root, 'dist/src/store/index.js'));
  let db;
  for (let i = 0; i < 600 && !db; i++) {
    try {
      db = openStore(join(state, 'supervisor.db'), { checkpointer: false });
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  for (let i = 0; i < 600 && !db.prepare("SELECT 1 FROM tasks WHERE spawn_id IS NOT NULL AND status = 'running'").get(); i++) await new Promise((r) => setTimeout(r, 100));
  const rootSession = db.prepare('SELECT id FROM sessions ORDER BY created_at, rowid').pluck().get();
  db.close();
  web = spawn(process.execPath, [cli, 'web', '--json', '--state-dir', state], { stdio: ['ignore', 'pipe', 'inherit'] });
  const { url } = JSON.parse(await new Promise((r) => web.stdout.once('data', (d) => r(String(d).split('\n')[0]))));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await context.newPage();
  mkdirSync(join(root, 'docs/images'), { recursive: true });
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.goto(url);
  await page.locator('article.tree tr[data-escapee="true"]').waitFor({ timeout: 60_000 });
  await page.getByRole('button', { name: `open session ${rootSession}` }).click();
  await page.locator('#delegations > li[data-status="completed"]').waitFor({ timeout: 60_000 });
  await page.screenshot({ path: join(root, 'docs/images/web-trees-1280.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(root, 'docs/images/web-trees-phone.png'), fullPage: true });
  console.log('wrote docs/images/web-trees-1280.png and docs/images/web-trees-phone.png');
} finally {
  await context?.close();
  web?.kill('SIGTERM');
  if (run && run.exitCode === null) {
    const gone = new Promise((r) => run.once('exit', r));
    run.kill('SIGTERM');
    await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
    if (run.exitCode === null && run.signalCode === null) run.kill('SIGKILL');
  }
  // Whatever the run could not stop itself is stopped by its records.
  spawnSync(process.execPath, [cli, 'reconcile', '--state-dir', state], { stdio: 'ignore' });
  rmSync(profile, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
  rmSync(core, { recursive: true, force: true });
}
