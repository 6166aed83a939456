#!/usr/bin/env node
// Screenshots of the operator's page for the docs (docs/images/web-*.png), at 1280 px and at a
// phone's 390 px: a throwaway state dir with a session and two waiting requests, a real
// `supervisor web`, Debian chromium through playwright-core. Run after `npm run build`.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const { openStore, SessionStore, PendingApprovalStore } = await import(join(root, 'dist/src/store/index.js'));
const { localPrincipal } = await import(join(root, 'dist/src/session/principal.js'));

const state = mkdtempSync(join(tmpdir(), 'web-shots-'));
const profile = mkdtempSync(join(tmpdir(), 'web-shots-chromium-'));
let web;
let context;
try {
  const db = openStore(join(state, 'supervisor.db'), { checkpointer: false });
  const principal = { principal: localPrincipal() };
  const sessions = new SessionStore(db);
  const s = sessions.createSession(principal, { coreDir: '/home/me/cores/release-bot', coreRevision: 'r1', runtime: 'local' });
  sessions.createSession(principal, { coreDir: '/home/me/cores/reviewer', coreRevision: 'r2', runtime: 'claude-code' });
  const approvals = new PendingApprovalStore(db);
  approvals.create({ sessionId: s.id, tool: 'terminal', capability: 'terminal.exec', summary: 'git push origin release/1.4', preview: '{"command": "git push origin release/1.4", "cwd": "."}', ttlMs: 600_000 });
  approvals.create({ sessionId: s.id, tool: 'web_extract', capability: 'net.fetch', summary: 'GET https://example.com/changelog', preview: '{"url": "https://example.com/changelog", "headers": {"authorization": "[redacted]"}}', ttlMs: 600_000 });
  db.close();
  web = spawn(process.execPath, [join(root, 'bin/supervisor.js'), 'web', '--json', '--state-dir', state], { stdio: ['ignore', 'pipe', 'inherit'] });
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
  await page.locator('article.approval').nth(1).waitFor();
  await page.screenshot({ path: join(root, 'docs/images/web-approvals-1280.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: join(root, 'docs/images/web-approvals-phone.png'), fullPage: true });
  console.log('wrote docs/images/web-approvals-1280.png and docs/images/web-approvals-phone.png');
} finally {
  await context?.close();
  web?.kill('SIGTERM');
  rmSync(profile, { recursive: true, force: true });
  rmSync(state, { recursive: true, force: true });
}
