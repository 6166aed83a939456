// doctor's `controlPlane` line: what a run with --store would find there, found by trying it. It
// reaches the server, reads the schema's version against this supervisor's, proves that a NOTIFY
// reaches a LISTEN (approvals and cancels are delivered that way; a pooler in transaction mode
// drops them), and reports the role: the control plane's boundary is its database role, and a
// superuser role can reach past its tables (COPY … TO PROGRAM runs commands on the server's host).
// It writes nothing: no migration, no member.
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { openPool, redactUrl } from './connect.js';
import { CONTROL_PLANE_MIGRATIONS } from './migrations.js';

export interface ControlPlaneFinding {
  ok: boolean;
  detail: string;
  version?: string;
}

/** How long the NOTIFY may take to arrive before the probe calls it lost. */
const NOTIFY_WAIT_MS = 3000;

export async function probeControlPlane(url: string): Promise<ControlPlaneFinding> {
  const where = redactUrl(url);
  let pool;
  try {
    pool = await openPool(url, { max: 1, applicationName: 'supervisor-doctor' });
  } catch (err) {
    return { ok: false, detail: `${where}: ${(err as Error).message}` };
  }
  try {
    const server = (await pool.query<{ v: string }>("SELECT current_setting('server_version') AS v")).rows[0]!.v;
    const schema = await schemaState(pool);
    const role = (await pool.query<{ name: string; super: boolean }>('SELECT current_user AS name, rolsuper AS super FROM pg_roles WHERE rolname = current_user')).rows[0]!;
    const notify = await notifyArrives(url, pool);
    const problems = [
      ...(schema.tooNew ? [schema.text] : []),
      ...(notify ? [] : [`a NOTIFY did not reach a LISTEN within ${NOTIFY_WAIT_MS} ms (a pooler in transaction mode drops them): answers and cancels would wait for the 2 s re-poll`]),
      ...(role.super ? [`the role ${role.name} is a superuser: the control plane's boundary is its role, and a superuser reaches past its tables (COPY … TO PROGRAM runs commands on the server's host); give the supervisors a role that owns only the control plane's database`] : []),
    ];
    const facts = `${where}: ${schema.tooNew ? '' : `${schema.text}; `}LISTEN/NOTIFY ${notify ? 'delivered' : 'NOT delivered'}; role ${role.name}${role.super ? ' (superuser)' : ''}`;
    return { ok: problems.length === 0, version: `PostgreSQL ${server}`, detail: problems.length === 0 ? facts : `${facts}. ${problems.join('; ')}` };
  } catch (err) {
    return { ok: false, detail: `${where}: ${(err as Error).message}` };
  } finally {
    await pool.end().catch(() => undefined);
  }
}

async function schemaState(pool: pg.Pool): Promise<{ text: string; tooNew: boolean }> {
  const known = CONTROL_PLANE_MIGRATIONS[CONTROL_PLANE_MIGRATIONS.length - 1]!.version;
  const exists = (await pool.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t")).rows[0]!.t;
  const at = exists ? ((await pool.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations')).rows[0]!.v ?? 0) : 0;
  if (at > known) return { tooNew: true, text: `the schema is at version ${at}, newer than this supervisor knows (${known}): upgrade this supervisor` };
  if (at === known) return { tooNew: false, text: `schema at version ${at} (current)` };
  return { tooNew: false, text: at === 0 ? `no schema yet (the first run creates it, version ${known})` : `schema at version ${at}; the next run migrates it to ${known}` };
}

/** A LISTEN on a connection of its own, a NOTIFY from the pool: true when it arrives in time. */
async function notifyArrives(url: string, pool: pg.Pool): Promise<boolean> {
  const channel = `supervisor_doctor_${randomBytes(6).toString('hex')}`;
  const listener = new pg.Client({ connectionString: url, application_name: 'supervisor-doctor-listen', connectionTimeoutMillis: 5000 });
  listener.on('error', () => undefined);
  try {
    await listener.connect();
    await listener.query(`LISTEN ${channel}`);
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), NOTIFY_WAIT_MS);
      listener.on('notification', (n) => {
        if (n.channel !== channel) return;
        clearTimeout(timer);
        resolve(true);
      });
    });
    await pool.query('SELECT pg_notify($1, $2)', [channel, 'probe']);
    return await heard;
  } catch {
    return false;
  } finally {
    await listener.end().catch(() => undefined);
  }
}
