// A throwaway PostgreSQL cluster for one test file: Debian's server binaries (decision 0100), a data
// directory in a mkdtemp dir, a free port on 127.0.0.1, the unix socket inside the temp dir, no
// fsync. initdb refuses to run as root, so when the tests run as root (CI) the cluster runs as
// `nobody` (Node's spawn uid/gid; no runuser or su in between, so the postmaster is our own child
// and its pid is the one we stop).
//
// initdb costs ~2.8 s of wall time here; copying a finished data directory costs ~0.1 s. So the
// first file on a machine builds a template once (initdb into a temp dir, then an atomic rename
// into place) and every cluster starts from a copy of it (`cp -a`, which keeps the owner).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
  /** The postmaster's pid (leader of its own process group). */
  readonly pid: number;
  /** A fresh database in this cluster; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Immediate shutdown, then SIGKILL of the whole group if anything is left; removes the data dir. */
  stop(): Promise<void>;
}

/** Where Debian puts the server binaries; SUPERVISOR_TEST_PG_BIN overrides. */
export function pgBinDir(): string | null {
  const override = process.env.SUPERVISOR_TEST_PG_BIN;
  if (override) return existsSync(join(override, 'postgres')) ? override : null;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(base, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : null;
}

/** Why the tests cannot start a cluster here, or null when they can. */
export function pgUnavailableReason(): string | null {
  return pgBinDir() === null ? 'no PostgreSQL server binaries (apt-get install postgresql; .ci/run does)' : null;
}

/** root runs the cluster as nobody (initdb refuses root); anyone else runs it as themselves. */
function clusterUser(): { uid: number; gid: number } | null {
  return process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : null;
}

function run(bin: string, args: string[], user: { uid: number; gid: number } | null): void {
  const r = spawnSync(bin, args, { encoding: 'utf8', ...(user ?? {}), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout}`);
}

function ownedTempDir(prefix: string, user: { uid: number; gid: number } | null): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  if (user) chownSync(dir, user.uid, user.gid);
  return dir;
}

/** The machine's template data directory, built once (rename makes the first finished one win). */
function templateDir(bin: string, user: { uid: number; gid: number } | null): string {
  const version = spawnSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim().replace(/\W+/g, '-');
  const target = join(tmpdir(), `supervisor-pg-template-${version}-${process.getuid?.() ?? 0}`);
  if (existsSync(join(target, 'data', 'PG_VERSION'))) return target;
  const staging = ownedTempDir('supervisor-pg-template-', user);
  run(join(bin, 'initdb'), ['-D', join(staging, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N'], user);
  try {
    renameSync(staging, target);
  } catch {
    // Another test file finished its template first: use that one.
    rmSync(staging, { recursive: true, force: true });
  }
  return target;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}) before accepting connections:\n${log()}`);
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 20 s: ${(err as Error).message}\n${log()}`);
      await sleep(50);
    } finally {
      await c.end().catch(() => {});
    }
  }
}

/**
 * Live children of `pid` (the postmaster's backends and workers). Each backend calls setsid(), so
 * the postmaster's process group does not hold them: they are found by parent pid.
 */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === pid && state !== 'Z') out.push(Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

/** SIGKILL to each pid that is still a postgres process (a pid reused meanwhile is left alone). */
function killAll(pids: readonly number[]): void {
  for (const p of pids) {
    try {
      if (!readFileSync(`/proc/${p}/cmdline`, 'latin1').includes('postgres')) continue;
      process.kill(p, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

const live = new Set<number>();
// A test file that dies before its after() must not leave a postmaster behind.
process.once('exit', () => {
  for (const pid of live) killAll([...childrenOf(pid), pid]);
});

/** Starts a throwaway cluster; the caller stops it in after(). */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error(pgUnavailableReason()!);
  const user = clusterUser();
  const template = templateDir(bin, user);
  const dir = ownedTempDir('supervisor-pg-', user);
  const data = join(dir, 'data');
  run('cp', ['-a', join(template, 'data'), data], null);
  const port = await freePort();
  let stderr = '';
  const child = spawn(
    join(bin, 'postgres'),
    ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
    { detached: true, stdio: ['ignore', 'ignore', 'pipe'], ...(user ?? {}), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } },
  );
  child.stderr!.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-8000);
  });
  const pid = child.pid!;
  live.add(pid);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let stopped: Promise<void> | undefined;
  const stopOnce = async (): Promise<void> => {
    const backends = childrenOf(pid);
    if (child.exitCode === null && child.signalCode === null) {
      // SIGQUIT is pg_ctl's "-m immediate": the postmaster tells every backend to quit at once.
      try {
        process.kill(pid, 'SIGQUIT');
      } catch {
        /* gone */
      }
      await Promise.race([exited, sleep(5000)]);
    }
    // Anything still there (a backend stuck past the postmaster's own 5 s SIGKILL) dies now.
    killAll([...backends, ...childrenOf(pid)]);
    live.delete(pid);
    child.stderr!.destroy();
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = (): Promise<void> => (stopped ??= stopOnce());
  try {
    await waitReady(url, child, () => stderr);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url,
    port,
    pid,
    async createDatabase(name: string): Promise<string> {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name ${JSON.stringify(name)}: use lower-case letters, digits and _`);
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name} TEMPLATE template0`);
      } finally {
        await c.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop,
  };
}
