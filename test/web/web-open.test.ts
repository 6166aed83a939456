// `supervisor web --open`, proved with a real opener: $BROWSER names a script that records what it
// was started with (its arguments, the file it was given, that file's mode) the way a browser
// would receive it. The token is in no process's arguments: the opener gets a 0600 launch file in a
// 0700 directory, which redirects to the printed URL; Debian's chromium, given that file, lands on
// the page signed in, the launch file is then gone and the token is spent.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { alive, waitFor } from '../helpers/procs.js';
import { browser, Cleanup, NO_BROWSER, signIn, startWeb, stateDir, store, closeBrowser } from './web-fixture.js';

declare const document: any;

/** Every process's command line now, NUL-separated arguments joined by spaces. */
function allCommandLines(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      out.push(readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' '));
    } catch {
      // gone
    }
  }
  return out;
}

describe('supervisor web --open', { skip: NO_BROWSER }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());
  after(closeBrowser);

  test('$BROWSER is started with a 0600 launch file, not the token; chromium given the file signs in; the file is then removed', async () => {
    const dir = stateDir(c);
    store(c, dir);
    const record = join(dir, 'opened');
    const opener = join(dir, 'record-browser.sh');
    // A stand-in browser: records its arguments, its own command line, and the file it was given;
    // it stays alive a little, as a browser would, so the test can look at every process meanwhile.
    writeFileSync(
      opener,
      `#!/bin/sh\nfor a in "$@"; do f="$a"; done\nstat -c %a "$f" > "${record}.mode"\nstat -c %a "$(dirname "$f")" > "${record}.dirmode"\ncat "$f" > "${record}.html"\ntr '\\0' ' ' < /proc/$$/cmdline > "${record}.cmdline"\necho $$ > "${record}.pid"\nprintf '%s\\n' "$@" > "${record}.tmp" && mv "${record}.tmp" "${record}.args"\nsleep 2\n`,
    );
    chmodSync(opener, 0o700);
    const web = await startWeb(c, dir, { BROWSER: `${opener} --new-window %s` }, ['--open']);
    await waitFor('the opener', () => existsSync(`${record}.args`), 30_000);
    const args = readFileSync(`${record}.args`, 'utf8').trimEnd().split('\n');
    assert.equal(args.length, 2, args.join(' | '));
    assert.equal(args[0], '--new-window', "%s in $BROWSER is where the file goes");
    const file = args[1]!;
    assert.match(file, new RegExp(`^${dir}/web-open-[^/]+/open\\.html$`));
    assert.equal(readFileSync(`${record}.mode`, 'utf8').trim(), '600');
    assert.equal(readFileSync(`${record}.dirmode`, 'utf8').trim(), '700');
    assert.ok(!readFileSync(`${record}.cmdline`, 'utf8').includes(web.token), "the token is not in the opener's arguments");
    // While the opener runs, no process on the machine has the token in its command line.
    assert.deepEqual(allCommandLines().filter((l) => l.includes(web.token)), []);
    const html = readFileSync(`${record}.html`, 'utf8');
    assert.ok(html.includes(`<meta http-equiv="refresh" content="0;url=${web.url}">`), html);
    assert.ok(html.includes('<meta name="referrer" content="no-referrer">'));

    // A real browser, given what the opener was given, lands on the page signed in.
    const ctx = await browser(c);
    const page = await ctx.newPage();
    await page.goto(`file://${file}`);
    await page.waitForFunction(() => document.querySelector('main')?.dataset.streamOpens === '1', undefined, { timeout: 30_000 });
    assert.equal(new URL(page.url()).origin, `http://127.0.0.1:${web.port}`);
    assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
    await waitFor('the launch file removed after the sign-in', () => !existsSync(dirname(file)), 10_000);
    await assert.rejects(signIn(web), /sign-in failed: 403/, 'the token is spent');
    // The stand-in browser ends on its own (it sleeps 2 s); nothing the test started outlives it.
    const openerPid = Number(readFileSync(`${record}.pid`, 'utf8'));
    await waitFor('the opener gone', () => !alive(openerPid), 10_000);
  });

  test('an opener that cannot start: one line on stderr, the server serves on', async () => {
    const dir = stateDir(c);
    store(c, dir);
    const web = await startWeb(c, dir, { BROWSER: join(dir, 'no-such-browser') }, ['--open']);
    await waitFor('the line', () => /supervisor web: could not start .*no-such-browser .*open the printed URL yourself/.test(web.log()), 10_000);
    assert.equal((await signIn(web)).csrf.length, 43, 'the printed URL still signs in');
  });
});
