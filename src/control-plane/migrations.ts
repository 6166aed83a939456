// The control plane's schema, as numbered migrations applied in order, each in its own transaction
// (as the SQLite store does). Several members may start at once against a fresh database: an
// advisory lock makes one of them migrate while the others wait and then find nothing to do.
//
// Table names follow the SQLite store where the meaning is the same (sessions, tasks,
// runtime_events, chain_heads), so a later slice can move the rest of the store beside them.
// Timestamps the lease logic compares are the server's (clock_timestamp()), never a member's clock.
import { ControlPlaneError } from './errors.js';
import { inTransaction, type ControlPlanePool } from './connect.js';

export interface ControlPlaneMigration {
  version: number;
  name: string;
  sql: string;
}

export const CONTROL_PLANE_MIGRATIONS: readonly ControlPlaneMigration[] = [
  {
    version: 1,
    name: 'members',
    sql: `
      CREATE TABLE members (
        id text PRIMARY KEY,
        host_id text NOT NULL,
        boot_id text NOT NULL,
        pid integer NOT NULL,
        start_marker text NOT NULL,
        status text NOT NULL DEFAULT 'alive' CHECK (status IN ('alive', 'dead', 'left')),
        joined_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        heartbeat_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        lease_ms integer NOT NULL CHECK (lease_ms > 0),
        lease_expires_at timestamptz NOT NULL,
        ended_at timestamptz,
        end_reason text
      );
      CREATE INDEX members_alive_by_expiry ON members (lease_expires_at) WHERE status = 'alive';`,
  },
  {
    version: 2,
    name: 'sessions and the audit chain',
    sql: `
      CREATE TABLE sessions (
        id text PRIMARY KEY,
        owner_member text REFERENCES members (id),
        epoch bigint NOT NULL DEFAULT 1,
        status text NOT NULL CHECK (status IN ('running', 'ended', 'interrupted')),
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        ended_at timestamptz,
        end_reason text
      );
      CREATE INDEX sessions_running_by_owner ON sessions (owner_member) WHERE status = 'running';
      -- No foreign keys on the chain: audit verify must still see events whose session row was deleted.
      CREATE TABLE runtime_events (
        session_id text NOT NULL,
        seq bigint NOT NULL CHECK (seq >= 1),
        kind text NOT NULL,
        at bigint NOT NULL,
        payload text NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE TABLE chain_heads (
        session_id text PRIMARY KEY,
        seq bigint NOT NULL,
        hash text NOT NULL,
        updated_at bigint NOT NULL
      );`,
  },
  {
    version: 3,
    name: 'tasks as a work queue, with attempts',
    sql: `
      CREATE TABLE tasks (
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id),
        kind text NOT NULL,
        input text NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'interrupted')),
        owner_member text REFERENCES members (id),
        epoch bigint NOT NULL DEFAULT 0,
        attempts integer NOT NULL DEFAULT 0,
        rescues integer NOT NULL DEFAULT 0,
        max_rescues integer NOT NULL CHECK (max_rescues >= 0),
        result text,
        reason text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        claimed_at timestamptz,
        ended_at timestamptz
      );
      CREATE INDEX tasks_queued_in_order ON tasks (created_at, id) WHERE status = 'queued';
      CREATE INDEX tasks_running_by_owner ON tasks (owner_member) WHERE status = 'running';
      CREATE TABLE task_attempts (
        task_id text NOT NULL REFERENCES tasks (id),
        attempt integer NOT NULL,
        member_id text NOT NULL REFERENCES members (id),
        epoch bigint NOT NULL,
        status text NOT NULL CHECK (status IN ('running', 'succeeded', 'failed', 'interrupted')),
        started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        ended_at timestamptz,
        reason text,
        PRIMARY KEY (task_id, attempt)
      );`,
  },
  {
    // Approvals across hosts: the member whose session asks waits on LISTEN supervisor_approvals;
    // an operator on any member answers with a compare-and-swap on the pending row and a NOTIFY
    // in the same transaction (delivered only if it commits).
    version: 4,
    name: 'approvals across members',
    sql: `
      CREATE TABLE approvals (
        id text PRIMARY KEY,
        session_id text NOT NULL REFERENCES sessions (id),
        principal text NOT NULL,
        requested_by text NOT NULL REFERENCES members (id),
        tool text NOT NULL,
        capability text NOT NULL,
        summary text NOT NULL,
        preview text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'cancelled')),
        remember boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz NOT NULL,
        decided_at timestamptz,
        decided_by text
      );
      CREATE INDEX approvals_pending_by_principal ON approvals (principal, created_at) WHERE status = 'pending';`,
  },
  {
    // Operator commands across hosts: a session says whose it is (operators see only their own),
    // and a cancel asked on any member is a flag on the row, announced on supervisor_cancels.
    version: 5,
    name: 'session principals and cancels',
    sql: `
      ALTER TABLE sessions ADD COLUMN principal text;
      ALTER TABLE sessions ADD COLUMN cancel_requested_at timestamptz;
      ALTER TABLE sessions ADD COLUMN cancel_requested_by text;
      CREATE INDEX sessions_by_principal ON sessions (principal, created_at);`,
  },
  {
    // Finished rows leave the hot tables (archive.ts): the events of ended sessions, finished
    // tasks with their attempts, decided approvals. Same columns, keys and checks, no foreign keys
    // (an archived task's session row stays where it is). Sessions and chain heads stay: one small
    // row each, and the heads keep every chain appendable and verifiable.
    version: 6,
    name: 'archives of finished rows',
    sql: `
      CREATE TABLE runtime_events_archive (LIKE runtime_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
      CREATE TABLE tasks_archive (LIKE tasks INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
      CREATE TABLE task_attempts_archive (LIKE task_attempts INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);
      CREATE TABLE approvals_archive (LIKE approvals INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES);`,
  },
  {
    // The operator's live feed on the control plane (decision 125), as the SQLite store's migration
    // 10: one ordered row per request asked or decided and per session or task started or ended,
    // written by triggers so every member's writes feed it; ids, states and the principal only,
    // never text. Its seq is what a page's live stream resumes from; the archive sweep keeps the
    // newest OPERATOR_CHANGES_KEPT rows.
    version: 7,
    name: 'operator changes',
    sql: `
      CREATE TABLE operator_changes (
        seq bigserial PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('approval', 'session', 'task')),
        ref text NOT NULL,
        session_id text NOT NULL,
        principal text,
        status text NOT NULL,
        at bigint NOT NULL DEFAULT (extract(epoch FROM clock_timestamp()) * 1000)::bigint
      );
      CREATE INDEX operator_changes_by_principal ON operator_changes (principal, seq);
      CREATE FUNCTION operator_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status THEN
          RETURN NULL;
        END IF;
        IF TG_TABLE_NAME = 'approvals' THEN
          INSERT INTO operator_changes (kind, ref, session_id, principal, status) VALUES ('approval', NEW.id, NEW.session_id, NEW.principal, NEW.status);
        ELSIF TG_TABLE_NAME = 'sessions' THEN
          INSERT INTO operator_changes (kind, ref, session_id, principal, status) VALUES ('session', NEW.id, NEW.id, NEW.principal, NEW.status);
        ELSE
          INSERT INTO operator_changes (kind, ref, session_id, principal, status)
            VALUES ('task', NEW.id, NEW.session_id, (SELECT principal FROM sessions WHERE id = NEW.session_id), NEW.status);
        END IF;
        RETURN NULL;
      END $$;
      CREATE TRIGGER approvals_change AFTER INSERT OR UPDATE OF status ON approvals FOR EACH ROW EXECUTE FUNCTION operator_change();
      CREATE TRIGGER sessions_change AFTER INSERT OR UPDATE OF status ON sessions FOR EACH ROW EXECUTE FUNCTION operator_change();
      CREATE TRIGGER tasks_change AFTER INSERT OR UPDATE OF status ON tasks FOR EACH ROW EXECUTE FUNCTION operator_change();`,
  },
  {
    // A run's own background tasks on the control plane (decision 126): a task its member holds
    // from the start (never queued), listed from any member with what it runs, and cancelled from
    // any member by a flag on its row announced on supervisor_cancels; the member that holds it
    // stops it on its host. The archive gets the same columns in the same order (it is filled by
    // SELECT *).
    version: 8,
    name: 'run tasks and task cancels',
    sql: `
      ALTER TABLE tasks ADD COLUMN summary text, ADD COLUMN cancel_requested_at timestamptz, ADD COLUMN cancel_requested_by text;
      ALTER TABLE tasks_archive ADD COLUMN summary text, ADD COLUMN cancel_requested_at timestamptz, ADD COLUMN cancel_requested_by text;`,
  },
  {
    // A run's transcript and its tasks' logs, copied from the host's store (decision 127), so an
    // operator and session_search on any member read them. A message's copy is bound to its
    // anchored message.added event (the content's sha256), which audit verify --store checks. No
    // foreign keys: a copy outlives its session's or task's move to the archive. The search index
    // holds tsvector parts built by the supervisor's own tokenizer (store/search-query.ts), the
    // same one the SQLite index uses, so a query matches the same messages on both engines. A log
    // chunk is UTF-8 bytes: a task's output may hold NUL, which a text column refuses (a message's
    // canonical JSON escapes it).
    version: 9,
    name: 'run transcripts and task logs',
    sql: `
      CREATE TABLE session_messages (
        session_id text NOT NULL,
        seq integer NOT NULL CHECK (seq >= 1),
        message_id text NOT NULL,
        turn integer,
        role text NOT NULL,
        content text NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE TABLE message_search (
        session_id text NOT NULL,
        seq integer NOT NULL,
        part integer NOT NULL,
        doc tsvector NOT NULL,
        PRIMARY KEY (session_id, seq, part)
      );
      CREATE INDEX message_search_doc ON message_search USING gin (doc);
      CREATE TABLE task_logs (
        task_id text NOT NULL,
        seq integer NOT NULL CHECK (seq >= 1),
        stream text NOT NULL CHECK (stream IN ('stdout', 'stderr', 'note')),
        at bigint NOT NULL,
        chunk bytea NOT NULL,
        PRIMARY KEY (task_id, seq)
      );`,
  },
];

// Any constant works as long as nothing else in the database uses it: "supervisor" in ASCII.
const MIGRATION_LOCK = 0x7375706572;

/** Applies every migration the database lacks, in order; returns the versions applied now. */
export async function migrateControlPlane(pool: ControlPlanePool): Promise<number[]> {
  // Under the same lock as the migrations: two members racing on CREATE TABLE IF NOT EXISTS can
  // both pass the check and one then fails on the catalog's unique index (seen in the tests).
  await inTransaction(pool, async (c) => {
    await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await c.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
  });
  // A schema from a newer supervisor is refused before anything is touched.
  const newest = await pool.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_migrations');
  const known = CONTROL_PLANE_MIGRATIONS[CONTROL_PLANE_MIGRATIONS.length - 1]!.version;
  if ((newest.rows[0]?.v ?? 0) > known) {
    throw new ControlPlaneError('CONTROL_PLANE_TOO_NEW', `the control plane's schema is at version ${newest.rows[0]!.v}, newer than this supervisor knows (${known}); upgrade this supervisor`);
  }
  const applied: number[] = [];
  for (const m of CONTROL_PLANE_MIGRATIONS) {
    const ran = await inTransaction(pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const done = await c.query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (done.rowCount) return false;
      await c.query(m.sql);
      await c.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
      return true;
    });
    if (ran) applied.push(m.version);
  }
  return applied;
}
