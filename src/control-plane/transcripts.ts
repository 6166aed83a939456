// A run's transcript and its tasks' logs on the control plane (decision 127). The host's store stays
// the record: the run writes every message and log chunk there first, on its own synchronous path,
// and copies what committed to the control plane under its session's lease (one fenced
// transaction per batch), as it copies its chain (decision 124). A copy is never changed: the
// same (session, seq) or (task, seq) copied again (a batch whose commit was not acknowledged) is
// the same row, so it is skipped. Readers on any member see only their own principal's copies.
//
// A message's copy is bound to its chain: the run copies a message only after the message.added
// event that names it is anchored there, and `checkCopies` (copy-check.ts) checks every copy's content
// against that event's sha256, so a host cannot show operators a transcript its chain does not
// vouch for.
import type { StoredMessage, TaskLogChunk, TaskStream } from '../store/index.js';
import { parseCanonicalJson } from '../store/canonical-json.js';
import { principalOf } from '../store/session-store.js';
import { inTransaction, type Queryable } from './connect.js';
import { fenceRow, type Lease } from './leases.js';
import type { ControlPlaneMember } from './member.js';
import { messageSearchDocuments } from './message-search.js';

/** A message as an operator (or session_search) on any member reads it. */
export interface CopiedMessage {
  messageId: string;
  sessionId: string;
  seq: number;
  turn: number | null;
  role: string;
  content: unknown;
  createdAt: number;
}

/** Copies messages of the lease's session, in one transaction under the lease. */
export async function copyMessages(member: ControlPlaneMember, lease: Lease, messages: readonly StoredMessage[]): Promise<void> {
  if (messages.length === 0) return;
  member.assertWritable();
  await inTransaction(member.pool, async (c) => {
    await fenceRow(c, lease);
    for (const m of messages) {
      const r = await c.query(
        `INSERT INTO session_messages (session_id, seq, message_id, turn, role, content, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (session_id, seq) DO NOTHING`,
        [lease.id, m.seq, m.id, m.turn, m.role, m.content, m.createdAt],
      );
      if (!r.rowCount) continue; // copied before: its search parts are there too
      const docs = messageSearchDocuments(m.content);
      for (let part = 0; part < docs.length; part++) {
        await c.query('INSERT INTO message_search (session_id, seq, part, doc) VALUES ($1, $2, $3, $4::tsvector)', [lease.id, m.seq, part, docs[part]]);
      }
    }
  });
}

/**
 * Copies log chunks of one of the session's tasks, under the session's lease. The task must be
 * held in that session (the run's task mirror holds it first); chunks of any other task are refused.
 */
export async function copyTaskLogs(member: ControlPlaneMember, lease: Lease, taskId: string, chunks: readonly TaskLogChunk[]): Promise<void> {
  if (chunks.length === 0) return;
  member.assertWritable();
  await inTransaction(member.pool, async (c) => {
    await fenceRow(c, lease);
    const held = await c.query('SELECT 1 FROM tasks WHERE id = $1 AND session_id = $2', [taskId, lease.id]);
    if (!held.rowCount) throw new Error(`task ${taskId} is not held in session ${lease.id}; its logs were not copied`);
    await c.query(
      `INSERT INTO task_logs (task_id, seq, stream, at, chunk)
       SELECT $1, x.seq, x.stream, x.at, x.chunk FROM unnest($2::int[], $3::text[], $4::bigint[], $5::bytea[]) AS x(seq, stream, at, chunk)
       ON CONFLICT (task_id, seq) DO NOTHING`,
      // Bytes, not text: a task's output may hold NUL, which PostgreSQL's text refuses.
      [taskId, chunks.map((x) => x.seq), chunks.map((x) => x.stream), chunks.map((x) => x.at), chunks.map((x) => Buffer.from(x.chunk, 'utf8'))],
    );
  });
}

type MessageRow = { session_id: string; seq: number; message_id: string; turn: number | null; role: string; content: string; created_at: string };

const messageOf = (r: MessageRow): CopiedMessage => {
  const parsed = parseCanonicalJson(r.content);
  return { messageId: r.message_id, sessionId: r.session_id, seq: r.seq, turn: r.turn, role: r.role, content: parsed.ok ? parsed.value : r.content, createdAt: Number(r.created_at) };
};

/** The principal's session's copied messages after `afterSeq`, in order; undefined: not the principal's session. */
export async function readCopiedMessages(q: Queryable, principal: string, sessionId: string, afterSeq = 0, limit = 1000): Promise<CopiedMessage[] | undefined> {
  principalOf({ principal });
  const owned = await q.query('SELECT 1 FROM sessions WHERE id = $1 AND principal = $2', [sessionId, principal]);
  if (!owned.rowCount) return undefined;
  const r = await q.query<MessageRow>('SELECT * FROM session_messages WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [sessionId, afterSeq, clampLimit(limit)]);
  return r.rows.map(messageOf);
}

type LogRow = { seq: number; stream: TaskStream; at: string; chunk: Buffer };

/**
 * The principal's task's copied log after `afterSeq`, in order; undefined: no such task of the
 * principal's (another principal's reads as missing). A task moved to the archive keeps its log.
 */
export async function readCopiedTaskLogs(q: Queryable, principal: string, taskId: string, afterSeq = 0, limit = 1000): Promise<TaskLogChunk[] | undefined> {
  principalOf({ principal });
  const owned = await q.query(
    `SELECT 1 FROM (SELECT session_id FROM tasks WHERE id = $1 UNION ALL SELECT session_id FROM tasks_archive WHERE id = $1) t
       JOIN sessions s ON s.id = t.session_id AND s.principal = $2`,
    [taskId, principal],
  );
  if (!owned.rowCount) return undefined;
  const r = await q.query<LogRow>('SELECT seq, stream, at, chunk FROM task_logs WHERE task_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [taskId, afterSeq, clampLimit(limit)]);
  return r.rows.map((x) => ({ seq: x.seq, stream: x.stream, at: Number(x.at), chunk: x.chunk.toString('utf8') }));
}

function clampLimit(limit: number): number {
  return Math.min(Math.max(1, Math.floor(limit)), 10_000);
}
