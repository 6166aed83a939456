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
];
