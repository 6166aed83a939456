// The page's live stream when its store stops answering for a while (a control plane restarted):
// one log line when the looks start failing and one when they work again, not one per tick, and a
// change made during the outage still reaches an open stream once the store answers. The stream
// is real (an SSE response on 127.0.0.1 over a real SQLite store); the outage is the store's feed
// throwing, as a pool with its server gone does.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get, type Server } from 'node:http';
import { join } from 'node:path';
import { openStore, PendingApprovalStore, SessionStore } from '../../src/store/index.js';
import { sqliteOperatorStore, type OperatorStore } from '../../src/operator/operator-store.js';
import { LiveStreams } from '../../src/web/live-stream.js';
import { tempDir, waitFor } from '../helpers/procs.js';

test('an outage of the feed is reported once and its end once; a change made meanwhile arrives after it', async () => {
  const dir = tempDir('live-outage-');
  after(() => dir.remove());
  const db = openStore(join(dir.path, 'supervisor.db'), { checkpointer: false });
  after(() => db.close());
  const session = new SessionStore(db).createSession({ principal: 'p' }, { coreDir: '/c', coreRevision: 'r', runtime: 'local' });
  const local = sqliteOperatorStore(db, 'p', dir.path);
  let down = false;
  const gone = (): never => {
    throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  };
  const store: OperatorStore = {
    ...local,
    feedHead: () => (down ? Promise.reject(gone()) : local.feedHead()),
    changesAfter: (seq, limit) => (down ? Promise.reject(gone()) : local.changesAfter(seq, limit)),
  };
  const reports: (string | null)[] = [];
  const streams = await LiveStreams.start(store, { pollMs: 10, maxStreamMs: 60_000, heartbeatMs: 60_000, maxStreams: 4, onError: (e) => reports.push(e === null ? null : (e as Error).message) });
  after(() => streams.close());
  const server: Server = createServer((_req, res) => void streams.open(res, 0, {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  after(() => server.close());
  const port = (server.address() as { port: number }).port;
  let received = '';
  const req = get({ host: '127.0.0.1', port, path: '/' }, (res) => res.on('data', (d: Buffer) => (received += d.toString())));
  req.on('error', () => undefined);
  after(() => req.destroy());
  await waitFor('the stream open', () => received.includes('retry:'), 5_000);

  down = true;
  const asked = new PendingApprovalStore(db).create({ sessionId: session.id, tool: 'terminal', capability: 'terminal.exec', summary: 'ls', preview: '{}', ttlMs: 60_000 });
  await new Promise((r) => setTimeout(r, 300)); // about 30 failed looks
  assert.deepEqual(reports, ['connect ECONNREFUSED 127.0.0.1:5432'], 'one line for the outage');
  assert.ok(!received.includes(asked.id), 'nothing could be sent while the feed was down');
  down = false;
  await waitFor('the change made during the outage', () => received.includes(asked.id), 5_000);
  assert.deepEqual(reports, ['connect ECONNREFUSED 127.0.0.1:5432', null], 'and one when it is back');
});
