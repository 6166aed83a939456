// The throwaway cluster the control-plane tests stand on: it answers, runs as a non-root user when
// the tests run as root, and leaves no process and no directory behind when stopped.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import pg from 'pg';
import { childrenOf, pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { alive } from '../helpers/procs.js';

const skip = pgUnavailableReason() ?? false;

describe('throwaway PostgreSQL cluster', { skip }, () => {
  let cluster: PgCluster;
  const started: PgCluster[] = [];
  before(async () => {
    cluster = await startPgCluster();
    started.push(cluster);
  });
  after(async () => {
    for (const c of started) await c.stop();
  });

  it('accepts connections on 127.0.0.1 and runs as a non-root user', async () => {
    const c = new pg.Client({ connectionString: cluster.url });
    await c.connect();
    try {
      const r = await c.query<{ v: string; fsync: string }>("SELECT current_setting('server_version') AS v, current_setting('fsync') AS fsync");
      assert.match(r.rows[0]!.v, /^\d+/);
      assert.equal(r.rows[0]!.fsync, 'off');
    } finally {
      await c.end();
    }
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${cluster.pid}/status`, 'utf8'))![1]);
    assert.notEqual(uid, 0, 'the postmaster must not run as root');
  });

  it('makes a separate database per caller', async () => {
    const url = await cluster.createDatabase('cluster_test_db');
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      assert.equal((await c.query<{ d: string }>('SELECT current_database() AS d')).rows[0]!.d, 'cluster_test_db');
    } finally {
      await c.end();
    }
  });

  it('stop ends the postmaster and every backend, and removes the data directory', async () => {
    const second = await startPgCluster();
    started.push(second);
    const held = new pg.Client({ connectionString: second.url });
    await held.connect();
    held.on('error', () => {}); // the backend goes away under it, on purpose
    const backends = childrenOf(second.pid);
    assert.ok(backends.length >= 2, `the postmaster has its workers and our backend, got ${backends.join(',')}`);
    // The postmaster runs in its data directory: the temp dir that stop() must remove.
    const cwd = readlinkSync(`/proc/${second.pid}/cwd`);
    await second.stop();
    await held.end().catch(() => {});
    assert.deepEqual([second.pid, ...backends].filter(alive), [], 'postmaster and backends are gone');
    assert.equal(existsSync(cwd), false, `${cwd} is removed`);
  });
});
