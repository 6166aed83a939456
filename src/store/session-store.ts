// Sessions, turns, messages and approvals, scoped to the principal that owns them. Every write also
// appends a matching event to the session's audit chain in the same transaction, so the chain
// records the transcript's shape (who, what core, which turns, which approvals) even though these
// tables are not themselves hash-linked.
//
// Everything stored here is a durable view: callers pass values that are already redacted. The
// store hashes and keeps what it is given and never sees a raw secret.
import { createHash, randomBytes } from 'node:crypto';
import type { Database } from './database.js';
import { canonicalJson, CanonicalJsonError, parseCanonicalJson, type JsonValue } from './canonical-json.js';
import { appendEvent, appendPreparedEvent, deferWrite, flushDeferredWrites, prepareEvent, readEvents, type AppendedEvent, type StoredEvent } from './event-chain.js';
import { faultAfterCommit } from './fault-injection.js';
import { SessionEndedError, SessionNotFoundError, StoreInputError, TurnNotFoundError } from './store-errors.js';

/** Who is asking. Every owner-scoped read and write takes one; another principal's rows look absent. */
export interface PrincipalScope {
  readonly principal: string;
}

export type SessionStatus = 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
export type EndStatus = Exclude<SessionStatus, 'running'>;
export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';
export type ApprovalDecisionValue = 'allow' | 'deny';

export interface SessionRecord {
  id: string;
  principal: string;
  coreDir: string;
  coreRevision: string;
  runtime: string;
  status: SessionStatus;
  createdAt: number;
  endedAt: number | null;
  /** Why it ended as it did, when that is not obvious (e.g. its supervisor died). */
  endReason: string | null;
}

/** The supervisor process that runs a session: its pid and OS start marker (so a reused pid is not it). */
export interface SessionOwner {
  readonly pid: number;
  readonly startMarker: string;
}

export interface TurnRecord {
  id: string;
  sessionId: string;
  seq: number;
  startedAt: number;
  endedAt: number | null;
  status: SessionStatus;
}

export interface MessageRecord {
  id: string;
  sessionId: string;
  turnId: string | null;
  seq: number;
  role: MessageRole;
  /** The model view of the message: plain JSON, already redacted. */
  content: JsonValue;
  createdAt: number;
}

export interface ApprovalRecord {
  id: string;
  sessionId: string;
  /** The approval cache key hash (never the raw arguments it was derived from). */
  key: string;
  tool: string;
  capability: string;
  decision: ApprovalDecisionValue;
  /** Who decided, e.g. "policy", "cache", "prompt", "operator", "cli-rule", "non-interactive". */
  source: string;
  /** Redacted, human-readable. */
  reason: string | null;
  createdAt: number;
}

export interface SessionStoreOptions {
  /** Clock in epoch milliseconds (tests pin it). */
  now?: () => number;
}

/** Message content over this size is refused: the model view is bounded before it gets here. */
export const MAX_MESSAGE_CONTENT_BYTES = 4 * 1024 * 1024;
const END_STATUSES: readonly EndStatus[] = ['completed', 'failed', 'cancelled', 'interrupted'];
const ROLES: readonly MessageRole[] = ['system', 'user', 'assistant', 'tool'];
const DECISIONS: readonly ApprovalDecisionValue[] = ['allow', 'deny'];

const newId = (prefix: string): string => `${prefix}_${randomBytes(12).toString('hex')}`;

interface SessionRow {
  id: string;
  principal: string;
  core_dir: string;
  core_revision: string;
  runtime: string;
  status: SessionStatus;
  created_at: number;
  ended_at: number | null;
  end_reason: string | null;
}
interface TurnRow {
  id: string;
  session_id: string;
  seq: number;
  started_at: number;
  ended_at: number | null;
  status: SessionStatus;
}
interface MessageRow {
  id: string;
  session_id: string;
  turn_id: string | null;
  seq: number;
  role: MessageRole;
  content: string;
  created_at: number;
}
interface ApprovalRow {
  id: string;
  session_id: string;
  key: string;
  tool: string;
  capability: string;
  decision: ApprovalDecisionValue;
  source: string;
  reason: string | null;
  created_at: number;
}

const sessionOf = (r: SessionRow): SessionRecord => ({
  id: r.id,
  principal: r.principal,
  coreDir: r.core_dir,
  coreRevision: r.core_revision,
  runtime: r.runtime,
  status: r.status,
  createdAt: r.created_at,
  endedAt: r.ended_at,
  endReason: r.end_reason ?? null,
});
const turnOf = (r: TurnRow): TurnRecord => ({ id: r.id, sessionId: r.session_id, seq: r.seq, startedAt: r.started_at, endedAt: r.ended_at, status: r.status });
const messageOf = (r: MessageRow): MessageRecord => {
  const parsed = parseCanonicalJson(r.content);
  return { id: r.id, sessionId: r.session_id, turnId: r.turn_id, seq: r.seq, role: r.role, content: parsed.ok ? parsed.value : r.content, createdAt: r.created_at };
};
const approvalOf = (r: ApprovalRow): ApprovalRecord => ({
  id: r.id,
  sessionId: r.session_id,
  key: r.key,
  tool: r.tool,
  capability: r.capability,
  decision: r.decision,
  source: r.source,
  reason: r.reason,
  createdAt: r.created_at,
});

function text(field: string, value: unknown, max: number): string {
  if (typeof value !== 'string' || value.length === 0) throw new StoreInputError(field, 'must be a non-empty string');
  if (value.length > max) throw new StoreInputError(field, `is ${value.length} characters, over the limit of ${max}`);
  return value;
}

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T)) throw new StoreInputError(field, `${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  return value as T;
}

function ownerOf(owner: SessionOwner | undefined): { ownerPid: number; ownerStartMarker: string | null } {
  if (owner === undefined) return { ownerPid: process.pid, ownerStartMarker: null };
  if (!Number.isSafeInteger(owner.pid) || owner.pid <= 0) throw new StoreInputError('owner.pid', 'must be a positive integer');
  return { ownerPid: owner.pid, ownerStartMarker: text('owner.startMarker', owner.startMarker, 256) };
}

/**
 * The scope's principal, checked the one way every store and the control plane check it: a
 * non-empty string of at most 256 characters without NUL (PostgreSQL's text cannot hold one, so a
 * NUL would be a database error there and an empty answer here; it is an input error on both).
 */
export function principalOf(scope: PrincipalScope): string {
  const principal = text('principal', (scope as PrincipalScope | undefined)?.principal, 256);
  if (principal.includes('\u0000')) throw new StoreInputError('principal', 'must not contain NUL');
  return principal;
}

export class SessionStore {
  private readonly now: () => number;
  private readonly q;

  constructor(private readonly db: Database, options: SessionStoreOptions = {}) {
    this.now = options.now ?? Date.now;
    this.q = {
      owned: db.prepare('SELECT * FROM sessions WHERE id = ? AND principal = ?'),
      exists: db.prepare('SELECT 1 FROM sessions WHERE id = ?'),
      insertSession: db.prepare(`INSERT INTO sessions (id, principal, core_dir, core_revision, runtime, status, created_at, owner_pid, owner_start_marker)
        VALUES (@id, @principal, @coreDir, @coreRevision, @runtime, 'running', @createdAt, @ownerPid, @ownerStartMarker)`),
      endSession: db.prepare('UPDATE sessions SET status = ?, ended_at = ? WHERE id = ?'),
      resume: db.prepare("UPDATE sessions SET status = 'running', ended_at = NULL, end_reason = NULL, owner_pid = ?, owner_start_marker = ? WHERE id = ?"),
      list: db.prepare('SELECT * FROM sessions WHERE principal = ? ORDER BY created_at DESC, id LIMIT ?'),
      listByStatus: db.prepare('SELECT * FROM sessions WHERE principal = ? AND status = ? ORDER BY created_at DESC, id LIMIT ?'),
      nextTurnSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session_id = ?').pluck(),
      insertTurn: db.prepare("INSERT INTO turns (id, session_id, seq, started_at, status) VALUES (?, ?, ?, ?, 'running')"),
      ownedTurn: db.prepare('SELECT t.* FROM turns t JOIN sessions s ON s.id = t.session_id WHERE t.id = ? AND s.principal = ?'),
      runningTurns: db.prepare("SELECT * FROM turns WHERE session_id = ? AND status = 'running' ORDER BY seq"),
      endTurn: db.prepare('UPDATE turns SET status = ?, ended_at = ? WHERE id = ?'),
      nextMessageSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?').pluck(),
      insertMessage: db.prepare('INSERT INTO messages (id, session_id, turn_id, seq, role, content, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      messages: db.prepare('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?'),
      insertApproval: db.prepare(`INSERT INTO approvals (id, session_id, key, tool, capability, decision, source, reason, created_at)
        VALUES (@id, @sessionId, @key, @tool, @capability, @decision, @source, @reason, @createdAt)`),
      findApproval: db.prepare('SELECT * FROM approvals WHERE session_id = ? AND key = ? ORDER BY created_at DESC, rowid DESC LIMIT 1'),
    };
  }

  /**
   * Starts a session for `scope.principal`; its chain opens with a `session.created` event. The
   * owner is the supervisor that runs it: a later start that finds it dead marks the session
   * interrupted (owner-reconcile.ts). Without one, only the pid of this process is recorded.
   */
  createSession(scope: PrincipalScope, init: { coreDir: string; coreRevision: string; runtime: string; owner?: SessionOwner }): SessionRecord {
    const principal = principalOf(scope);
    const row: SessionRow = {
      id: newId('se'),
      principal,
      core_dir: text('coreDir', init?.coreDir, 4096),
      core_revision: text('coreRevision', init?.coreRevision, 256),
      runtime: text('runtime', init?.runtime, 64),
      status: 'running',
      created_at: this.now(),
      ended_at: null,
      end_reason: null,
    };
    const owner = ownerOf(init.owner);
    const payload = { principal, core_dir: row.core_dir, core_revision: row.core_revision, runtime: row.runtime };
    this.write(() => {
      this.q.insertSession.run({ id: row.id, principal, coreDir: row.core_dir, coreRevision: row.core_revision, runtime: row.runtime, createdAt: row.created_at, ...owner });
      appendPreparedEvent(this.db, row.id, 'session.created', prepareEvent('session.created', payload, row.created_at), row.created_at, true);
    });
    return sessionOf(row);
  }

  /**
   * Takes over a session another machine ran, from its copy on the control plane (decision 129):
   * created here under the same id, running, owned by `owner`, its chain opened by
   * `session.created` naming the copy it came from and that copy's head; then each message of the
   * copy in order, through the same checks and with the same `message.added` (and so the same
   * content digest) as a message written here. The copied messages carry no turns here. All of it
   * in one transaction, or nothing. An id this store holds already is refused.
   */
  importSession(
    scope: PrincipalScope,
    init: {
      id: string;
      coreDir: string;
      coreRevision: string;
      runtime: string;
      owner?: SessionOwner;
      importedFrom: { session: string; head: string | null };
      messages: readonly { role: MessageRole; content: unknown }[];
    },
  ): SessionRecord {
    const principal = principalOf(scope);
    const id = text('id', init?.id, 64);
    if (!/^se_[0-9a-f]{24}$/.test(id)) throw new StoreInputError('id', `${JSON.stringify(id)} is not a session id (se_ and 24 hex digits)`);
    const row: SessionRow = {
      id,
      principal,
      core_dir: text('coreDir', init.coreDir, 4096),
      core_revision: text('coreRevision', init.coreRevision, 256),
      runtime: text('runtime', init.runtime, 64),
      status: 'running',
      created_at: this.now(),
      ended_at: null,
      end_reason: null,
    };
    const owner = ownerOf(init.owner);
    const from = { session: text('importedFrom.session', init.importedFrom?.session, 256), head: init.importedFrom.head };
    const payload = { principal, core_dir: row.core_dir, core_revision: row.core_revision, runtime: row.runtime, imported_from: { ...from, messages: init.messages.length } };
    // Each message is checked before anything is written, as addMessage checks it.
    const writes = init.messages.map((m) => this.messageWrite(scope, id, m));
    this.write(() => {
      if (this.q.exists.get(id)) throw new StoreInputError('id', `session ${id} is in this store already; resume it here (supervisor run --resume ${id})`);
      this.q.insertSession.run({ id, principal, coreDir: row.core_dir, coreRevision: row.core_revision, runtime: row.runtime, createdAt: row.created_at, ...owner });
      appendPreparedEvent(this.db, id, 'session.created', prepareEvent('session.created', payload, row.created_at), row.created_at, true);
      for (const write of writes) write();
    });
    return sessionOf(row);
  }

  /** The session, or undefined if it does not exist or belongs to another principal (indistinguishable). */
  getSession(scope: PrincipalScope, sessionId: string): SessionRecord | undefined {
    const r = this.q.owned.get(sessionId, principalOf(scope)) as SessionRow | undefined;
    return r && sessionOf(r);
  }

  /** The principal's sessions, newest first (at most `limit`, default 100, max 1000). */
  listSessions(scope: PrincipalScope, opts: { status?: SessionStatus; limit?: number } = {}): SessionRecord[] {
    const principal = principalOf(scope);
    const limit = Math.min(Math.max(1, Math.floor(opts.limit ?? 100)), 1000);
    const rows = opts.status
      ? this.q.listByStatus.all(principal, oneOf('status', opts.status, ['running', ...END_STATUSES]), limit)
      : this.q.list.all(principal, limit);
    return (rows as SessionRow[]).map(sessionOf);
  }

  /** Ends the session, and with the same status any turn still running; appends `session.ended`. */
  endSession(scope: PrincipalScope, sessionId: string, status: EndStatus): SessionRecord {
    const st = oneOf('status', status, END_STATUSES);
    const at = this.now();
    return this.write(() => {
      const s = this.running(scope, sessionId);
      for (const t of this.q.runningTurns.all(s.id) as TurnRow[]) this.closeTurn(t, st, at);
      this.q.endSession.run(st, at, s.id);
      this.event(s.id, 'session.ended', { status: st }, at);
      return { ...s, status: st, endedAt: at };
    });
  }

  /**
   * Resumes an ended session of this principal: it runs again, its chain gets `session.resumed`
   * with the core revision it resumes under. A session of another principal reads as missing.
   */
  resumeSession(scope: PrincipalScope, sessionId: string, init: { coreRevision: string; owner?: SessionOwner }): SessionRecord {
    const at = this.now();
    const revision = text('coreRevision', init?.coreRevision, 256);
    const owner = ownerOf(init.owner);
    return this.write(() => {
      const s = this.getSession(scope, sessionId);
      if (!s) throw new SessionNotFoundError(sessionId);
      if (s.status === 'running') throw new StoreInputError('sessionId', `session ${sessionId} is running already (another run holds it, or one that died: supervisor reconcile)`);
      this.q.resume.run(owner.ownerPid, owner.ownerStartMarker, s.id);
      this.event(s.id, 'session.resumed', { previous_status: s.status, core_revision: revision }, at);
      return { ...s, status: 'running' as const, endedAt: null, endReason: null };
    });
  }

  /** Opens the next turn (seq 1, 2, …); appends `turn.started`. */
  addTurn(scope: PrincipalScope, sessionId: string): TurnRecord {
    const at = this.now();
    const id = newId('tu');
    return this.write(() => {
      const s = this.running(scope, sessionId);
      const seq = this.q.nextTurnSeq.get(s.id) as number;
      this.q.insertTurn.run(id, s.id, seq, at);
      this.event(s.id, 'turn.started', { turn_id: id, seq }, at);
      return { id, sessionId: s.id, seq, startedAt: at, endedAt: null, status: 'running' as const };
    });
  }

  /** Ends a running turn; appends `turn.ended`. */
  endTurn(scope: PrincipalScope, turnId: string, status: EndStatus): TurnRecord {
    const st = oneOf('status', status, END_STATUSES);
    const at = this.now();
    return this.write(() => {
      const t = this.ownedTurn(scope, turnId);
      if (t.status !== 'running') throw new SessionEndedError(`turn ${t.id}`, t.status);
      this.closeTurn(t, st, at);
      return { ...turnOf(t), status: st, endedAt: at };
    });
  }

  /**
   * Appends a message (the model view only, already redacted) to a running session, optionally in
   * one of its running turns. The chain gets `message.added` with the content's sha256, not the content.
   */
  addMessage(scope: PrincipalScope, sessionId: string, m: { turnId?: string | null; role: MessageRole; content: unknown }): MessageRecord {
    return this.write(this.messageWrite(scope, sessionId, m));
  }

  /**
   * addMessage, committed with the connection's next group commit (or before any later write or
   * read on it) instead of now. The content is checked at once: bad input throws here, before
   * anything is queued. Resolves with the record once committed; rejects as addMessage throws.
   */
  addMessageDeferred(scope: PrincipalScope, sessionId: string, m: { turnId?: string | null; role: MessageRole; content: unknown }): Promise<MessageRecord> {
    return deferWrite(this.db, this.messageWrite(scope, sessionId, m));
  }

  /** The checks of a message done now, and the write to run inside a transaction. */
  private messageWrite(scope: PrincipalScope, sessionId: string, m: { turnId?: string | null; role: MessageRole; content: unknown }): () => MessageRecord {
    const role = oneOf('role', m?.role, ROLES);
    let content: string;
    try {
      content = canonicalJson(m.content);
    } catch (err) {
      if (err instanceof CanonicalJsonError) throw new StoreInputError(`content${err.path.slice(1)}`, err.reason, { cause: err });
      throw err;
    }
    const bytes = Buffer.byteLength(content, 'utf8');
    if (bytes > MAX_MESSAGE_CONTENT_BYTES) throw new StoreInputError('content', `${bytes} bytes is over the ${MAX_MESSAGE_CONTENT_BYTES}-byte limit for one message`);
    const digest = createHash('sha256').update(content, 'utf8').digest('hex');
    const at = this.now();
    const id = newId('ms');
    return () => {
      const s = this.running(scope, sessionId);
      let turnId: string | null = null;
      if (m.turnId !== undefined && m.turnId !== null) {
        const t = this.ownedTurn(scope, m.turnId);
        if (t.session_id !== s.id) throw new TurnNotFoundError(m.turnId);
        if (t.status !== 'running') throw new SessionEndedError(`turn ${t.id}`, t.status);
        turnId = t.id;
      }
      const seq = this.q.nextMessageSeq.get(s.id) as number;
      this.q.insertMessage.run(id, s.id, turnId, seq, role, content, at);
      this.event(s.id, 'message.added', { message_id: id, turn_id: turnId, seq, role, content_sha256: digest }, at);
      return { id, sessionId: s.id, turnId, seq, role, content: JSON.parse(content) as JsonValue, createdAt: at };
    };
  }

  /** The session's messages in order, after `afterSeq` (default 0), at most `limit` (default 1000). */
  listMessages(scope: PrincipalScope, sessionId: string, opts: { afterSeq?: number; limit?: number } = {}): MessageRecord[] {
    flushDeferredWrites(this.db);
    const s = this.owned(scope, sessionId);
    const limit = Math.min(Math.max(1, Math.floor(opts.limit ?? 1000)), 10_000);
    return (this.q.messages.all(s.id, opts.afterSeq ?? 0, limit) as MessageRow[]).map(messageOf);
  }

  /** Records an approval decision (reason already redacted); appends `approval.recorded` with the same fields. */
  recordApproval(
    scope: PrincipalScope,
    sessionId: string,
    a: { key: string; tool: string; capability: string; decision: ApprovalDecisionValue; source: string; reason?: string | null },
  ): ApprovalRecord {
    const rec: ApprovalRecord = {
      id: newId('ap'),
      sessionId,
      key: text('key', a?.key, 256),
      tool: text('tool', a.tool, 256),
      capability: text('capability', a.capability, 512),
      decision: oneOf('decision', a.decision, DECISIONS),
      source: text('source', a.source, 64),
      reason: a.reason === undefined || a.reason === null ? null : text('reason', a.reason, 4096),
      createdAt: this.now(),
    };
    return this.write(() => {
      rec.sessionId = this.running(scope, sessionId).id;
      this.q.insertApproval.run(rec);
      this.event(
        rec.sessionId,
        'approval.recorded',
        { approval_id: rec.id, key: rec.key, tool: rec.tool, capability: rec.capability, decision: rec.decision, source: rec.source, reason: rec.reason },
        rec.createdAt,
      );
      return rec;
    });
  }

  /** The newest approval recorded in this session under `key`, if any. */
  findApproval(scope: PrincipalScope, sessionId: string, key: string): ApprovalRecord | undefined {
    const s = this.owned(scope, sessionId);
    const r = this.q.findApproval.get(s.id, key) as ApprovalRow | undefined;
    return r && approvalOf(r);
  }

  /** appendEvent, after checking that the session belongs to `scope` (ended sessions included: late events still get audited). */
  appendEvent(scope: PrincipalScope, sessionId: string, kind: string, payload: unknown, at: number = this.now()): AppendedEvent {
    const s = this.owned(scope, sessionId);
    return appendEvent(this.db, s.id, kind, payload, at);
  }

  /** The session's chain events in seq order (at most `limit`, default 1000). */
  listEvents(scope: PrincipalScope, sessionId: string, opts: { afterSeq?: number; limit?: number } = {}): StoredEvent[] {
    return readEvents(this.db, this.owned(scope, sessionId).id, opts);
  }

  private owned(scope: PrincipalScope, sessionId: string): SessionRecord {
    const s = typeof sessionId === 'string' ? this.getSession(scope, sessionId) : undefined;
    if (!s) throw new SessionNotFoundError(String(sessionId));
    return s;
  }

  private running(scope: PrincipalScope, sessionId: string): SessionRecord {
    const s = this.owned(scope, sessionId);
    if (s.status !== 'running') throw new SessionEndedError(`session ${s.id}`, s.status);
    return s;
  }

  private ownedTurn(scope: PrincipalScope, turnId: string): TurnRow {
    const t = typeof turnId === 'string' ? (this.q.ownedTurn.get(turnId, principalOf(scope)) as TurnRow | undefined) : undefined;
    if (!t) throw new TurnNotFoundError(String(turnId));
    return t;
  }

  private closeTurn(t: TurnRow, status: EndStatus, at: number): void {
    this.q.endTurn.run(status, at, t.id);
    this.event(t.session_id, 'turn.ended', { turn_id: t.id, seq: t.seq, status }, at);
  }

  private event(sessionId: string, kind: string, payload: unknown, at: number): void {
    appendPreparedEvent(this.db, sessionId, kind, prepareEvent(kind, payload, at), at);
  }

  // IMMEDIATE: the row and its chain event are written under one write lock, or not at all.
  private write<T>(fn: () => T): T {
    // Deferred writes (an effect's events, earlier messages) land first, in their own commit.
    flushDeferredWrites(this.db);
    const result = this.db.transaction(fn).immediate();
    faultAfterCommit(this.db);
    return result;
  }
}

/** A message as its run copies it to the control plane: the stored canonical text and its turn's number. */
export interface StoredMessage {
  id: string;
  seq: number;
  /** The turn's number in its session (1, 2, …), or null for a message outside any turn. */
  turn: number | null;
  role: MessageRole;
  /** The canonical JSON the store holds (its sha256 is the chain's content_sha256). */
  content: string;
  createdAt: number;
}

/**
 * The session's committed messages with seq in (afterSeq, throughSeq], in order, at most `limit`,
 * unscoped: for the run that wrote them (its copy to the control plane, decision 127).
 */
export function readStoredMessages(db: Database, sessionId: string, o: { afterSeq: number; throughSeq: number; limit: number }): StoredMessage[] {
  const rows = db
    .prepare(
      `SELECT m.id, m.seq, t.seq AS turn, m.role, m.content, m.created_at AS createdAt
         FROM messages m LEFT JOIN turns t ON t.id = m.turn_id
        WHERE m.session_id = ? AND m.seq > ? AND m.seq <= ? ORDER BY m.seq LIMIT ?`,
    )
    .all(sessionId, o.afterSeq, o.throughSeq, o.limit) as StoredMessage[];
  return rows;
}
