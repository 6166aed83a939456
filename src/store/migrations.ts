// Numbered migrations. Append only: a released migration is never edited, a change is a new number.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'spawns',
    sql: `
      CREATE TABLE spawns (
        spawn_id TEXT PRIMARY KEY,
        pid INTEGER NOT NULL,
        pgid INTEGER NOT NULL,
        sid INTEGER NOT NULL,
        platform TEXT NOT NULL,
        boot_id TEXT NOT NULL,
        start_marker TEXT NOT NULL,
        cgroup TEXT,
        command TEXT NOT NULL,
        owner_pid INTEGER NOT NULL,
        owner_start_marker TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','exited','timeout','cancelled','failed','interrupted')),
        exit_code INTEGER,
        signal TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        detail TEXT
      );
      CREATE INDEX spawns_status ON spawns(status);
    `,
  },
  {
    // Sessions and their audit chain. Every row holds durable (already redacted) views only.
    // The chain head lives in its own table: a chain alone cannot show that its newest rows were
    // deleted, the head's count and hash can.
    version: 2,
    name: 'sessions-audit',
    sql: `
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        principal TEXT NOT NULL,
        core_dir TEXT NOT NULL,
        core_revision TEXT NOT NULL,
        runtime TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','completed','failed','cancelled','interrupted')),
        created_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX sessions_principal ON sessions(principal, created_at);
      CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        status TEXT NOT NULL CHECK (status IN ('running','completed','failed','cancelled','interrupted')),
        UNIQUE (session_id, seq)
      );
      CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        turn_id TEXT REFERENCES turns(id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
        content TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        UNIQUE (session_id, seq)
      );
      CREATE TABLE approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        key TEXT NOT NULL,
        tool TEXT NOT NULL,
        capability TEXT NOT NULL,
        decision TEXT NOT NULL CHECK (decision IN ('allow','deny')),
        source TEXT NOT NULL,
        reason TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX approvals_session_key ON approvals(session_id, key, created_at);
      CREATE TABLE runtime_events (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        at INTEGER NOT NULL,
        payload TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID;
      CREATE TABLE chain_heads (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        hash TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    // Background tasks and their logs. A task belongs to a session (and so to its principal);
    // every read is principal-scoped. Logs are redacted chunks, bounded per task.
    version: 3,
    name: 'tasks',
    sql: `
      CREATE TABLE tasks (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        turn_id TEXT REFERENCES turns(id),
        kind TEXT NOT NULL,
        source_tool TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running','completed','failed','cancelled','interrupted')),
        summary TEXT NOT NULL,
        write_scope TEXT CHECK (write_scope IS NULL OR length(write_scope) > 0),
        spawn_id TEXT,
        owner_pid INTEGER NOT NULL,
        exit_code INTEGER,
        signal TEXT,
        reason TEXT,
        log_tail TEXT NOT NULL DEFAULT '',
        log_bytes INTEGER NOT NULL DEFAULT 0,
        result_ref TEXT,
        cancel_requested_at INTEGER,
        created_at INTEGER NOT NULL,
        ended_at INTEGER
      );
      CREATE INDEX tasks_session ON tasks(session_id, created_at);
      CREATE INDEX tasks_status ON tasks(status);
      -- Two active tasks may not share a non-empty write scope: the index refuses the second.
      CREATE UNIQUE INDEX tasks_active_write_scope ON tasks(write_scope) WHERE status = 'running' AND write_scope IS NOT NULL;
      CREATE TABLE task_logs (
        task_id TEXT NOT NULL REFERENCES tasks(id),
        seq INTEGER NOT NULL,
        stream TEXT NOT NULL CHECK (stream IN ('stdout','stderr','note')),
        at INTEGER NOT NULL,
        chunk TEXT NOT NULL,
        PRIMARY KEY (task_id, seq)
      ) WITHOUT ROWID;
    `,
  },
  {
    // Approval requests a run waits on while an operator answers from another terminal.
    version: 4,
    name: 'pending-approvals',
    sql: `
      CREATE TABLE pending_approvals (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        tool TEXT NOT NULL,
        capability TEXT NOT NULL,
        summary TEXT NOT NULL,
        preview TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','approved','denied','expired','cancelled')),
        remember INTEGER NOT NULL DEFAULT 0,
        owner_pid INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_at INTEGER
      );
      CREATE INDEX pending_approvals_status ON pending_approvals(status, created_at);
    `,
  },
  {
    // Full-text search over the stored history (session_search). The indexed text is every string
    // in a message's model view except its bookkeeping fields, taken from the already-redacted rows;
    // rowid is the message's rowid. Triggers keep it in step with messages, and the INSERT below
    // backfills the rows written before this migration.
    version: 5,
    name: 'message-search',
    sql: `
      CREATE VIRTUAL TABLE message_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
      CREATE VIEW message_search_text AS
        SELECT m.rowid AS rowid,
          CASE WHEN json_valid(m.content) THEN
            COALESCE((SELECT group_concat(j.value, char(10)) FROM json_tree(m.content) j
              WHERE j.type = 'text' AND COALESCE(j.key, '') NOT IN ('role', 'callId', 'id', 'tool_call_id', 'type')), '')
          ELSE m.content END AS body
        FROM messages m;
      INSERT INTO message_fts (rowid, body) SELECT rowid, body FROM message_search_text;
      CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO message_fts (rowid, body) SELECT rowid, body FROM message_search_text WHERE rowid = new.rowid;
      END;
      CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        DELETE FROM message_fts WHERE rowid = old.rowid;
        INSERT INTO message_fts (rowid, body) SELECT rowid, body FROM message_search_text WHERE rowid = new.rowid;
      END;
      CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        DELETE FROM message_fts WHERE rowid = old.rowid;
      END;
    `,
  },
  {
    // Every running row names its owner (the supervisor's pid and OS start marker), so any later
    // start can tell a live owner from a dead one and mark what it left interrupted, with a reason
    // (src/store/owner-reconcile.ts). Rows written before this migration have no marker: their
    // owner is judged by pid alone where that is all there is.
    // A write scope is a principal's claim: two running tasks of the same principal may not share
    // one; another principal's task neither blocks yours nor reveals that it exists.
    // pending_approvals is rebuilt because its status CHECK gains 'interrupted'.
    version: 6,
    name: 'owners-and-reasons',
    sql: `
      ALTER TABLE sessions ADD COLUMN owner_pid INTEGER;
      ALTER TABLE sessions ADD COLUMN owner_start_marker TEXT;
      ALTER TABLE sessions ADD COLUMN end_reason TEXT;
      ALTER TABLE tasks ADD COLUMN owner_start_marker TEXT;
      ALTER TABLE tasks ADD COLUMN principal TEXT;
      UPDATE tasks SET principal = (SELECT s.principal FROM sessions s WHERE s.id = tasks.session_id);
      DROP INDEX tasks_active_write_scope;
      CREATE UNIQUE INDEX tasks_active_write_scope ON tasks(principal, write_scope) WHERE status = 'running' AND write_scope IS NOT NULL;
      CREATE TABLE pending_approvals_v6 (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        tool TEXT NOT NULL,
        capability TEXT NOT NULL,
        summary TEXT NOT NULL,
        preview TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','approved','denied','expired','cancelled','interrupted')),
        remember INTEGER NOT NULL DEFAULT 0,
        owner_pid INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        decided_at INTEGER
      );
      INSERT INTO pending_approvals_v6 SELECT id, session_id, tool, capability, summary, preview, status, remember, owner_pid, created_at, expires_at, decided_at FROM pending_approvals;
      DROP TABLE pending_approvals;
      ALTER TABLE pending_approvals_v6 RENAME TO pending_approvals;
      CREATE INDEX pending_approvals_status ON pending_approvals(status, created_at);
    `,
  },
  {
    // A spawn may be recorded before its pid exists (decision 59): a `starting` row (spawn id,
    // cgroup, owner; pid, pgid and sid NULL; the owner's start marker as a lower bound of the
    // tree's start) is written before posix_spawn runs on a thread of its own, and completed with
    // the pid once it returns (a running row always has one; a starting row that failed or was
    // interrupted keeps NULL). Reconcile finds a dead owner's starting tree by its cgroup and its
    // SUPERVISOR_SPAWN_ID marker. The table is rebuilt because NOT NULL and the status CHECK change.
    version: 7,
    name: 'spawns-starting',
    sql: `
      CREATE TABLE spawns_v7 (
        spawn_id TEXT PRIMARY KEY,
        pid INTEGER,
        pgid INTEGER,
        sid INTEGER,
        platform TEXT NOT NULL,
        boot_id TEXT NOT NULL,
        start_marker TEXT NOT NULL,
        cgroup TEXT,
        command TEXT NOT NULL,
        owner_pid INTEGER NOT NULL,
        owner_start_marker TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('starting','running','exited','timeout','cancelled','failed','interrupted')),
        exit_code INTEGER,
        signal TEXT,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        detail TEXT,
        CHECK (status <> 'running' OR (pid IS NOT NULL AND pgid IS NOT NULL AND sid IS NOT NULL))
      );
      INSERT INTO spawns_v7 SELECT spawn_id, pid, pgid, sid, platform, boot_id, start_marker, cgroup, command, owner_pid, owner_start_marker, status, exit_code, signal, started_at, ended_at, detail FROM spawns;
      DROP TABLE spawns;
      ALTER TABLE spawns_v7 RENAME TO spawns;
      CREATE INDEX spawns_status ON spawns(status);
    `,
  },
  {
    // The task worker asks every 200 ms which of its running tasks an operator asked to cancel;
    // through the status index that visited every running task per tick (with 200 running, ~4 ms
    // of the supervisor's loop each time, issue 16). This index holds only the rows that answer.
    version: 8,
    name: 'tasks-cancel-requested',
    sql: `
      CREATE INDEX tasks_cancel_requested ON tasks(owner_pid) WHERE status = 'running' AND cancel_requested_at IS NOT NULL;
    `,
  },
  {
    // Delegation (issue 18): an agent.spawn task names the child session it runs and records its
    // requested and resolved scope, budget and evidence (JSON, redacted, bounded).
    version: 9,
    name: 'tasks-delegation',
    sql: `
      ALTER TABLE tasks ADD COLUMN child_session_id TEXT;
      ALTER TABLE tasks ADD COLUMN metadata TEXT;
      CREATE INDEX tasks_child_session ON tasks(child_session_id) WHERE child_session_id IS NOT NULL;
    `,
  },
  {
    // The operator's web page (issue 20). An answer names who gave it (a terminal's `supervisor
    // approvals`, or a `supervisor web` page), so whoever lost the compare-and-swap on a pending row
    // is told who won. operator_changes is the one ordered feed of what an operator's view shows
    // (a request asked or decided, a session or task started or ended): its seq is the SSE event id
    // a page resumes from (Last-Event-ID). Triggers write it, so every writer (a run, the terminal
    // commands, reconcile) feeds it without knowing the page exists; it holds ids and states only,
    // never text, and keeps the newest 10,000 rows (a page further behind reloads its lists).
    version: 10,
    name: 'operator-changes',
    sql: `
      ALTER TABLE pending_approvals ADD COLUMN decided_by TEXT;
      CREATE TABLE operator_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('approval','session','task')),
        ref TEXT NOT NULL,
        session_id TEXT NOT NULL,
        status TEXT NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE TRIGGER operator_changes_bound AFTER INSERT ON operator_changes WHEN new.seq > 10000 BEGIN
        DELETE FROM operator_changes WHERE seq <= new.seq - 10000;
      END;
      CREATE TRIGGER pending_approvals_change_insert AFTER INSERT ON pending_approvals BEGIN
        INSERT INTO operator_changes (kind, ref, session_id, status, at) VALUES ('approval', new.id, new.session_id, new.status, new.created_at);
      END;
      CREATE TRIGGER pending_approvals_change_status AFTER UPDATE OF status ON pending_approvals WHEN old.status IS NOT new.status BEGIN
        INSERT INTO operator_changes (kind, ref, session_id, status, at) VALUES ('approval', new.id, new.session_id, new.status, COALESCE(new.decided_at, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)));
      END;
      CREATE TRIGGER sessions_change_insert AFTER INSERT ON sessions BEGIN
        INSERT INTO operator_changes (kind, ref, session_id, status, at) VALUES ('session', new.id, new.id, new.status, new.created_at);
      END;
      CREATE TRIGGER sessions_change_status AFTER UPDATE OF status ON sessions WHEN old.status IS NOT new.status BEGIN
        INSERT INTO operator_changes (kind, ref, session_id, status, at) VALUES ('session', new.id, new.id, new.status, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
      CREATE TRIGGER tasks_change_insert AFTER INSERT ON tasks BEGIN
        INSERT INTO operator_changes (kind, ref, session_id, status, at) VALUES ('task', new.id, new.session_id, new.status, new.created_at);
      END;
      CREATE TRIGGER tasks_change_status AFTER UPDATE OF status ON tasks WHEN old.status IS NOT new.status BEGIN
        INSERT INTO operator_changes (kind, ref, session_id, status, at) VALUES ('task', new.id, new.session_id, new.status, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));
      END;
    `,
  },
  {
    // A cancel request addressed to one process tree (issue 20): an operator stops a foreground
    // call's tree (a long terminal command, an MCP server) from the page or `supervisor cancel
    // sp_…`. The request is three columns of the tree's own row, set once (compare-and-swap on
    // cancel_requested_at IS NULL while the tree runs); the owning supervisor polls for its own
    // trees' requests, stops the tree and appends the cancel to cancel_session_id's audit chain.
    version: 11,
    name: 'spawn-cancel-requests',
    sql: `
      ALTER TABLE spawns ADD COLUMN cancel_requested_at INTEGER;
      ALTER TABLE spawns ADD COLUMN cancel_requested_by TEXT;
      ALTER TABLE spawns ADD COLUMN cancel_session_id TEXT;
      CREATE INDEX spawns_cancel_requested ON spawns(owner_pid) WHERE status IN ('starting', 'running') AND cancel_requested_at IS NOT NULL;
    `,
  },
  {
    // Whose tree it is, written with the tree (decision 123). Sessions of several principals can
    // share one owning process (a library host, serve): the owner's pid and start marker no longer
    // tell whose a call's tree is, so a tree started for a principal says so itself. NULL: a tree
    // started outside any principal's session (exec, a probe), judged by its owner as before.
    version: 12,
    name: 'spawn-principal',
    sql: `
      ALTER TABLE spawns ADD COLUMN principal TEXT;
    `,
  },
];
