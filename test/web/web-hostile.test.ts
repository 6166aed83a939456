// The page's gate against requests a hostile page (or a rebound DNS name) makes a browser send, at
// the HTTP level where every header is the attacker's choice: each is refused with 403 and a log
// line, the pending request stays pending, and no response carries a CORS header.
import { afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Cleanup, raw, signIn, startWeb, stateDir, statusOf, store, type RawResponse } from './web-fixture.js';
import { SessionStore, SpawnRecordStore } from '../../src/store/index.js';
import { waitFor } from '../helpers/procs.js';

describe('supervisor web refuses what a hostile page or a rebound name sends', { skip: process.platform !== 'linux' && 'POSIX test fixtures' }, () => {
  const c = new Cleanup();
  afterEach(() => c.run());

  test('foreign Host, missing or foreign Origin, text/plain, missing CSRF, replayed or wrong token, a token in the query: 403 each, nothing changes', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const req = s.ask('touch marker');
    const web = await startWeb(c, dir);
    const seen: RawResponse[] = [];
    const send = async (method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawResponse> => {
      const r = await raw(web.port, method, path, headers, body);
      seen.push(r);
      return r;
    };
    const own = `127.0.0.1:${web.port}`;
    const origin = `http://${own}`;
    const json = 'application/json';
    // A wrong token first: it is refused, and the right one still works once.
    assert.equal((await send('POST', '/api/session', { host: own, origin, 'content-type': json }, JSON.stringify({ token: 'A'.repeat(43) }))).status, 403);
    // The token exchange itself obeys the gate: no Origin, a foreign Origin, text/plain.
    assert.equal((await send('POST', '/api/session', { host: own, 'content-type': json }, JSON.stringify({ token: web.token }))).status, 403);
    assert.equal((await send('POST', '/api/session', { host: own, origin: 'http://evil.example', 'content-type': json }, JSON.stringify({ token: web.token }))).status, 403);
    assert.equal((await send('POST', '/api/session', { host: own, origin, 'content-type': 'text/plain' }, JSON.stringify({ token: web.token }))).status, 403);
    const me = await signIn(web);
    assert.equal((await send('POST', '/api/session', { host: own, origin, 'content-type': json }, JSON.stringify({ token: web.token }))).status, 403, 'a replayed one-time token');
    const answer = `/api/approvals/${req.id}/answer`;
    const body = JSON.stringify({ decision: 'approve', digest: (JSON.parse((await send('GET', `/api/approvals/${req.id}`, me.headers)).body) as { digest: string }).digest });
    const without = (h: string): Record<string, string> => Object.fromEntries(Object.entries(me.headers).filter(([k]) => k !== h));
    const refused: [string, Record<string, string>][] = [
      ['no Origin (a request the MCP Inspector let through)', without('origin')],
      ['a foreign Origin', { ...me.headers, origin: 'http://127.0.0.1:1' }],
      ['a rebound DNS name (foreign Host)', { ...me.headers, host: `attacker.example:${web.port}` }],
      ['text/plain (a "simple" request with no preflight)', { ...me.headers, 'content-type': 'text/plain' }],
      ['no CSRF header', without('x-supervisor-csrf')],
      ['a wrong CSRF header', { ...me.headers, 'x-supervisor-csrf': 'x'.repeat(43) }],
      ['no cookie', without('cookie')],
      ['Sec-Fetch-Site same-site (another port of 127.0.0.1)', { ...me.headers, 'sec-fetch-site': 'same-site' }],
      ['Sec-Fetch-Site cross-site', { ...me.headers, 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [what, headers] of refused) {
      const r = await send('POST', answer, headers, body);
      assert.equal(r.status, 403, `${what}: ${r.status} ${r.body}`);
      assert.equal(statusOf(s.db, req.id).status, 'pending', `${what}: the request is still pending`);
    }
    // Reads: the token in the query string is no credential; a foreign Host and a missing CSRF are refused.
    assert.equal((await send('GET', `/api/state?token=${web.token}`, { host: own })).status, 403);
    assert.equal((await send('GET', '/api/state', { ...me.headers, host: `localhost:${web.port}` })).status, 403);
    assert.equal((await send('GET', '/api/state', without('x-supervisor-csrf'))).status, 403);
    assert.equal((await send('GET', '/', { host: `attacker.example:${web.port}` })).status, 403);
    assert.equal((await send('GET', '/api/events', { host: own })).status, 403, 'the live stream needs the cookie');
    assert.equal((await send('OPTIONS', answer, { host: own, origin: 'http://evil.example', 'access-control-request-method': 'POST' })).status, 403, 'no preflight is ever granted');
    assert.equal((await send('POST', '/api/tasks/tk_0/cancel', without('origin'), '{}')).status, 403, 'a cancel passes the same gate');
    assert.equal(statusOf(s.db, req.id).status, 'pending');
    // The legitimate request, for contrast: it passes and decides.
    const ok = await send('POST', answer, me.headers, body);
    assert.equal(ok.status, 200, ok.body);
    assert.equal(statusOf(s.db, req.id).status, 'approved');
    for (const r of seen) {
      const cors = Object.keys(r.headers).filter((h) => h.startsWith('access-control-'));
      assert.deepEqual(cors, [], `no CORS header, ever (status ${r.status})`);
    }
    // Log lines arrive through the server's stderr pipe, a little after their responses.
    const refusedLines = () => web.log().trim().split('\n').filter((l) => l.startsWith('supervisor web: refused'));
    const refusedCount = seen.filter((r) => r.status === 403).length;
    await waitFor('a log line per refusal', () => refusedLines().length >= refusedCount, 5_000).catch(() => undefined);
    const lines = refusedLines();
    assert.equal(lines.length, refusedCount, `one log line per refusal:\n${web.log()}`);
    assert.ok(!web.log().includes(web.token), 'the token never reaches the log');
  });

  test('two answers at once (two tabs, or a tab and a terminal): exactly one wins, the other is told who decided', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const req = s.ask('rm -rf build');
    const web = await startWeb(c, dir);
    const me = await signIn(web);
    const digest = (JSON.parse((await raw(web.port, 'GET', `/api/approvals/${req.id}`, me.headers)).body) as { digest: string }).digest;
    const post = (decision: string, tab: string) => raw(web.port, 'POST', `/api/approvals/${req.id}/answer`, me.headers, JSON.stringify({ decision, digest, tab }));
    const [a, b] = await Promise.all([post('approve', 'taba'), post('deny', 'tabb')]);
    assert.deepEqual([a.status, b.status].sort(), [200, 409]);
    const loser = JSON.parse((a.status === 409 ? a : b).body) as { message: string; approval: { status: string; decidedBy: string } };
    const row = statusOf(s.db, req.id);
    assert.equal(loser.approval.status, row.status);
    assert.match(loser.message, new RegExp(`it was ${row.status} already by the supervisor web page \\(pid \\d+, tab tab[ab]\\)`));
    assert.equal(row.decided_by, loser.approval.decidedBy);
    // A stale digest (the request is not what was shown) answers nothing.
    const other = s.ask('ls');
    const stale = await raw(web.port, 'POST', `/api/approvals/${other.id}/answer`, me.headers, JSON.stringify({ decision: 'approve', digest: digest }));
    assert.equal(stale.status, 412);
    assert.equal(statusOf(s.db, other.id).status, 'pending');
  });

  test("another principal's session, its delegations and its trees read as absent", async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const owner = { pid: 4242, startMarker: 'linux:boot:1' };
    const theirs = new SessionStore(s.db).createSession({ principal: 'mallory' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local', owner });
    new SpawnRecordStore(s.db).insert({ spawnId: 'sp_mallory', pid: 4243, pgid: 4243, sid: 4243, platform: 'linux', bootId: 'boot', startMarker: 'linux:boot:2', cgroup: null, command: '/bin/sh', ownerPid: owner.pid, ownerStartMarker: owner.startMarker, startedAt: Date.now() });
    const web = await startWeb(c, dir);
    const { headers } = await signIn(web);
    for (const view of ['timeline', 'audit', 'delegations']) {
      const r = await raw(web.port, 'GET', `/api/sessions/${theirs.id}/${view}`, headers);
      assert.equal(r.status, 404, `${view}: ${r.body}`);
      assert.equal(r.body, JSON.stringify({ error: `no session ${theirs.id} of yours` }));
    }
    // The same id spelt another way (every byte percent-encoded, the case changed) reads the same:
    // absent; a path smuggled in by encoding (once or twice) is refused before any store read.
    const encoded = [...theirs.id].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    for (const spelling of [encoded, encoded.toUpperCase(), theirs.id.toUpperCase()]) {
      const r = await raw(web.port, 'GET', `/api/sessions/${spelling}/timeline`, headers);
      assert.equal(r.status, 404, `${spelling}: ${r.body}`);
    }
    for (const smuggled of ['..%2F..%2Fetc%2Fpasswd', '%252E%252E%252Fx', `${theirs.id}%00`, '%E0%A4%A']) {
      const r = await raw(web.port, 'GET', `/api/sessions/${smuggled}/timeline`, headers);
      assert.equal(r.status, 400, `${smuggled}: ${r.status} ${r.body}`);
    }
    const mine = await raw(web.port, 'GET', `/api/sessions/${s.sessionId}/delegations`, headers);
    assert.deepEqual(JSON.parse(mine.body), { delegations: [] });
    const mineEncoded = await raw(web.port, 'GET', `/api/sessions/${[...s.sessionId].map((ch) => `%${ch.charCodeAt(0).toString(16)}`).join('')}/delegations`, headers);
    assert.equal(mineEncoded.status, 200, 'the control: the own id percent-encoded is the own session');
    const trees = await raw(web.port, 'GET', '/api/trees', headers);
    assert.deepEqual(JSON.parse(trees.body), { trees: [] }, "mallory's tree is not listed");
    // The new reads are behind the same gate: no CSRF token, or a rebound Host, is a 403.
    const noCsrf = Object.fromEntries(Object.entries(headers).filter(([k]) => k !== 'x-supervisor-csrf'));
    for (const path of ['/api/trees', `/api/sessions/${s.sessionId}/delegations`]) {
      assert.equal((await raw(web.port, 'GET', path, noCsrf)).status, 403, `${path} without the CSRF token`);
      assert.equal((await raw(web.port, 'GET', path, { ...headers, host: `evil.example:${web.port}` })).status, 403, `${path} with a rebound Host`);
    }
  });

  test('the live stream resumes after Last-Event-ID: every change after it, in order, and nothing before', async () => {
    const dir = stateDir(c);
    const s = store(c, dir);
    const web = await startWeb(c, dir);
    const me = await signIn(web);
    const first = s.ask('one');
    const state = JSON.parse((await raw(web.port, 'GET', '/api/state', me.headers)).body) as { seq: number };
    const later = [s.ask('two'), s.ask('three'), s.ask('four')];
    const events = await readEvents(web.port, { host: `127.0.0.1:${web.port}`, cookie: me.cookie, 'last-event-id': String(state.seq) }, 3);
    assert.deepEqual(
      events.map((e) => e.ref),
      later.map((r) => r.id),
    );
    assert.ok(!events.some((e) => e.ref === first.id));
    assert.deepEqual(events.map((e) => e.id), events.map((_, i) => state.seq + 1 + i), 'event ids are the feed sequence');
  });
});

/** Reads `n` change events of /api/events with the given headers, then closes. */
function readEvents(port: number, headers: Record<string, string>, n: number): Promise<{ id: number; ref: string }[]> {
  return new Promise((resolve, reject) => {
    import('node:http').then(({ request }) => {
      const req = request({ host: '127.0.0.1', port, path: '/api/events', headers }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`events: ${res.statusCode}`));
        let buf = '';
        const out: { id: number; ref: string }[] = [];
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const id = /^id: (\d+)$/m.exec(block);
            const data = /^data: (.*)$/m.exec(block);
            if (id && data && /^event: change$/m.test(block)) out.push({ id: Number(id[1]), ref: (JSON.parse(data[1]!) as { ref: string }).ref });
          }
          if (out.length >= n) {
            req.destroy();
            resolve(out);
          }
        });
      });
      req.on('error', (e) => (e.message.includes('aborted') || (e as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(e)));
      req.setTimeout(10_000, () => reject(new Error('events: timed out')));
      req.end();
    }, reject);
  });
}
