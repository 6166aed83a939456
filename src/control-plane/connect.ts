// Opening the control plane: a URL checked before any connection is tried, a pool whose bigint
// columns come back as numbers (seq, epoch, at: all far below 2^53), and errors that say which
// URL failed and how to fix it — never the password.
import pg from 'pg';
import { ControlPlaneError } from './errors.js';

export type ControlPlanePool = pg.Pool;
export type Queryable = pg.Pool | pg.PoolClient;

const INT8_OID = 20;
const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID ? (v: string) => Number(v) : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format),
} as unknown as pg.CustomTypesConfig;

/** The URL with its password replaced, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** Throws ControlPlaneError('CONTROL_PLANE_URL') unless `url` is a postgres:// URL. */
export function checkUrl(url: string): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new ControlPlaneError('CONTROL_PLANE_URL', `the control-plane URL is not a URL; write it as postgres://user@host:5432/database`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new ControlPlaneError('CONTROL_PLANE_URL', `the control-plane URL ${redactUrl(url)} has scheme ${u.protocol}; use postgres://user@host:5432/database`);
  }
  if (!u.hostname && !u.searchParams.get('host')) {
    throw new ControlPlaneError('CONTROL_PLANE_URL', `the control-plane URL ${redactUrl(url)} names no host; use postgres://user@host:5432/database`);
  }
}

export interface PoolOptions {
  /** Connections this member keeps at most (default 4). */
  max?: number;
  /** How long a connection attempt may take (default 5000 ms). */
  connectTimeoutMs?: number;
  /** Name shown in pg_stat_activity.application_name. */
  applicationName?: string;
  /**
   * How long a transaction may sit idle between its statements before the server ends it and
   * releases its locks (default 1000 ms). A member paused or frozen inside a transaction (SIGSTOP,
   * a stalled VM) would otherwise hold its row locks for as long as its TCP connection lives, and
   * the sweep that reclaims it would wait on them forever. Our transactions send their statements
   * back to back, so a second of silence inside one means the client stalled.
   */
  idleInTransactionMs?: number;
}

/**
 * A pool on the control plane, after one round trip proved the server answers. A refused or
 * failing connection is a ControlPlaneError('CONTROL_PLANE_UNREACHABLE') naming the URL.
 */
export async function openPool(url: string, opts: PoolOptions = {}): Promise<ControlPlanePool> {
  checkUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.max ?? 4,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? 5000,
    application_name: opts.applicationName ?? 'supervisor',
    idle_in_transaction_session_timeout: opts.idleInTransactionMs ?? 1000,
    types,
  });
  // An idle connection the server ends (restart, pg_terminate_backend) must not crash the process;
  // the next query gets a fresh connection or a clear error.
  pool.on('error', () => {});
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => {});
    throw new ControlPlaneError('CONTROL_PLANE_UNREACHABLE', `cannot reach the control plane at ${redactUrl(url)}: ${(err as Error).message}; check that PostgreSQL runs there and accepts this user`, { cause: err });
  }
  return pool;
}

// deadlock_detected and serialization_failure: the server rolled the transaction back and says
// to run it again; anything else is the caller's to handle.
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 3;

/**
 * Runs `body` in one transaction on one pooled connection: committed if it returns, rolled back if
 * it throws. A deadlock or serialization failure runs it again (at most 3 times): `body` must only
 * touch the database, so running it again is safe.
 */
export async function inTransaction<T>(pool: ControlPlanePool, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transactionOnce(pool, body);
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has((err as { code?: string }).code ?? '')) throw err;
    }
  }
}

async function transactionOnce<T>(pool: ControlPlanePool, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  let broken: unknown;
  // A connection the server ends while we hold it (pg_terminate_backend, a restart) emits 'error'
  // besides failing the query in flight; unheard, that event would end the process. The failed
  // query is what reports it, and the connection is dropped on release.
  const onError = (err: Error): void => {
    broken = err;
  };
  c.on('error', onError);
  try {
    await c.query('BEGIN');
    const out = await body(c);
    await c.query('COMMIT');
    return out;
  } catch (err) {
    await c.query('ROLLBACK').catch((e: unknown) => (broken = e));
    throw err;
  } finally {
    // A connection whose rollback failed is in an unknown state: drop it rather than reuse it.
    c.off('error', onError);
    c.release(broken instanceof Error ? broken : undefined);
  }
}
