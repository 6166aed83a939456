// A session's transcript and a task's log, one suite run once per engine (issue 21): this machine's
// SQLite store, and the PostgreSQL control plane (a real throwaway cluster) holding what a run
// copied there (decision 127). On both, a run writes through the host's SessionStore and TaskStore
// (the writer's checks: store/session-store.test.ts); on PostgreSQL the run's own copy path (the
// ChainShipper and copyTaskLogs under its lease) then puts it on the control plane. Every read
// below is the same question asked of each engine, with the same answer expected: order, paging,
// turns, the exact content of a hostile message, the largest message allowed, another principal
// reading what a missing id reads, and session_search (scoping, bounds, snippets, hostile query
// text; the query language itself is compared across engines in search-query-both-engines.test.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Database } from '../../src/store/database.js';
import { readEventRows } from '../../src/store/event-chain.js';
import { MAX_MESSAGE_CONTENT_BYTES, SessionStore, readStoredMessages, type MessageRole } from '../../src/store/session-store.js';
import { SessionNotFoundError, StoreInputError } from '../../src/store/store-errors.js';
import { MAX_SEARCH_RESULTS, SearchQueryError, SessionSearch, type SessionSearchHit, type SessionSearchQuery } from '../../src/store/session-search.js';
import { TaskStore, type TaskLogChunk } from '../../src/store/task-store.js';
import {
  ChainShipper,
  ControlPlaneMember,
  copyTaskLogs,
  createOwnedSession,
  holdRunTask,
  migrateControlPlane,
  openPool,
  readCopiedMessages,
  readCopiedTaskLogs,
  searchCopiedMessages,
  type ControlPlanePool,
} from '../../src/control-plane/index.js';
import { ownProcessIdentity } from '../../src/process/own-identity.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';

/** A message as both engines hand it back. */
interface ReadMessage {
  seq: number;
  role: string;
  turn: number | null;
  content: unknown;
}

/** One engine's reads of what the host wrote; `undefined`: not the principal's (or no such id). */
interface Engine {
  messages(principal: string, sessionId: string, afterSeq?: number, limit?: number): Promise<ReadMessage[] | undefined>;
  taskLog(principal: string, taskId: string, afterSeq?: number, limit?: number): Promise<TaskLogChunk[] | undefined>;
  /** session_search's query on this engine; hits name sessions by the ids `publish` returned. */
  search(principal: string, q: SessionSearchQuery): Promise<SessionSearchHit[]>;
}

/** A host's store with one written session (and task), published to the engine under test. */
interface Published {
  engine: Engine;
  /** The id each engine knows the session by (the control plane's is `local@member`). */
  sessionId: string;
  taskId: string;
}

/** Several sessions (any principals), each published as `publish` does one. */
type PublishMany = (scripts: { principal: string; script: Script }[]) => Promise<{ engine: Engine; sessionIds: string[] }>;

/** What a run writes: messages in and out of turns, one task with a log. */
interface Script {
  messages: { turn: 0 | 1 | 2; role: MessageRole; content: unknown }[];
  log: { stream: 'stdout' | 'stderr' | 'note'; chunk: string }[];
}

const ALICE = { principal: 'alice' };

function writeHostStore(db: Database, script: Script, scope = ALICE): { sessionId: string; taskId: string } {
  const sessions = new SessionStore(db);
  const tasks = new TaskStore(db);
  const s = sessions.createSession(scope, { coreDir: '/core', coreRevision: 'r1', runtime: 'local' });
  const turns = new Map<number, string>();
  for (const m of script.messages) {
    if (m.turn !== 0 && !turns.has(m.turn)) {
      for (const [, id] of turns) sessions.endTurn(scope, id, 'completed');
      turns.clear();
      turns.set(m.turn, sessions.addTurn(scope, s.id).id);
    }
    sessions.addMessage(scope, s.id, { turnId: m.turn === 0 ? null : turns.get(m.turn)!, role: m.role, content: m.content });
  }
  const t = tasks.create(scope, { sessionId: s.id, kind: 'terminal', sourceTool: 'terminal', summary: 'echo' });
  tasks.appendLogs(script.log.map((l) => ({ taskId: t.id, ...l })));
  return { sessionId: s.id, taskId: t.id };
}

function sqliteEngine(db: Database): Engine {
  const sessions = new SessionStore(db);
  const tasks = new TaskStore(db);
  return {
    async messages(principal, id, afterSeq = 0, limit = 1000) {
      try {
        const turnSeq = new Map(db.prepare('SELECT id, seq FROM turns WHERE session_id = ?').all(id).map((r) => [(r as { id: string }).id, (r as { seq: number }).seq]));
        return sessions.listMessages({ principal }, id, { afterSeq, limit }).map((m) => ({ seq: m.seq, role: m.role, turn: m.turnId === null ? null : turnSeq.get(m.turnId)!, content: m.content }));
      } catch (err) {
        if (err instanceof SessionNotFoundError) return undefined;
        throw err;
      }
    },
    taskLog: async (principal, id, afterSeq = 0, limit = 1000) => tasks.logs({ principal }, id, { afterSeq, limit }),
    search: async (principal, q) => new SessionSearch(db).search({ principal }, q),
  };
}

function postgresEngine(pool: ControlPlanePool): Engine {
  return {
    async messages(principal, id, afterSeq, limit) {
      const rows = await readCopiedMessages(pool, principal, id, afterSeq, limit);
      return rows?.map((m) => ({ seq: m.seq, role: m.role, turn: m.turn, content: m.content }));
    },
    taskLog: (principal, id, afterSeq, limit) => readCopiedTaskLogs(pool, principal, id, afterSeq, limit),
    search: (principal, q) => searchCopiedMessages(pool, { principal }, q),
  };
}

const HOSTILE_TEXT = 'nul\u0000 bidi\u202Eevil\u202C emoji 🦜 cjk 漢字 quote\' "dq" back\\slash tab\t cr\r';

const said = (principal: string, ...texts: string[]) => ({ principal, script: { messages: texts.map((text) => ({ turn: 1 as const, role: 'user' as const, content: { role: 'user', content: text } })), log: [] } });

function transcriptSuite(engineName: string, publish: (script: Script) => Promise<Published>, publishMany: PublishMany): void {
  it(`${engineName}: search finds only the principal's sessions, in either scope; the session scope stays in its session`, async () => {
    const { engine, sessionIds } = await publishMany([said('alice', 'the secret plan mentions marmalade'), said('alice', 'marmalade again, second session'), said('bob', 'bob also likes marmalade')]);
    const [a1, a2, b1] = sessionIds as [string, string, string];
    assert.deepEqual(new Set((await engine.search('alice', { query: 'marmalade' })).map((h) => h.sessionId)), new Set([a1, a2]));
    assert.deepEqual((await engine.search('alice', { query: 'marmalade', sessionId: a1 })).map((h) => [h.sessionId, h.turn, h.role]), [[a1, 1, 'user']]);
    // Naming bob's session gives what a missing session gives: nothing.
    assert.deepEqual(await engine.search('alice', { query: 'marmalade', sessionId: b1 }), []);
    assert.deepEqual(await engine.search('alice', { query: 'marmalade', sessionId: 'se_missing' }), []);
    assert.deepEqual((await engine.search('bob', { query: 'marmalade' })).map((h) => h.sessionId), [b1]);
    assert.deepEqual(await engine.search('mallory', { query: 'marmalade' }), []);
    // Other spellings of alice are other principals.
    for (const p of ['Alice', 'alice ', ' alice', 'ALICE', 'al\u200bice']) assert.deepEqual(await engine.search(p, { query: 'marmalade' }), [], JSON.stringify(p));
    // A NUL in a principal is an input error on both engines (PostgreSQL's text cannot hold one).
    await assert.rejects(engine.search('alice\u0000', { query: 'marmalade' }), (err: unknown) => err instanceof StoreInputError && /principal: must not contain NUL/.test(err.message));
    await assert.rejects(engine.messages('alice\u0000', a1), StoreInputError);
    await assert.rejects(engine.taskLog('alice\u0000', 'tk_x'), StoreInputError);
    await assert.rejects(engine.search('', { query: 'marmalade' }), StoreInputError);
    assert.deepEqual((await engine.search('alice', { query: '"secret plan" NOT bob' })).map((h) => [h.sessionId, h.snippet]), [[a1, 'the [secret plan] mentions marmalade']]);
  });

  it(`${engineName}: search is bounded: at most MAX_SEARCH_RESULTS hits, snippets of a few hundred characters`, async () => {
    const long = `${'filler '.repeat(2000)}needle ${'filler '.repeat(2000)}`;
    const { engine } = await publishMany([said('carol', ...Array.from({ length: 40 }, () => long))]);
    assert.equal((await engine.search('carol', { query: 'needle', limit: 1000 })).length, MAX_SEARCH_RESULTS);
    assert.equal((await engine.search('carol', { query: 'needle' })).length, 10);
    assert.equal((await engine.search('carol', { query: 'needle', limit: -5 })).length, 1);
    for (const h of await engine.search('carol', { query: 'needle' })) {
      assert.ok(h.snippet.length <= 400, `snippet of ${h.snippet.length} characters`);
      assert.match(h.snippet, /^…filler .*\[needle\].* filler…$/);
    }
  });

  it(`${engineName}: hostile query text is the same SearchQueryError, or the same answer, and the engine keeps answering`, async () => {
    const { engine, sessionIds } = await publishMany([said('dave', 'hello world from the history', 'café crème at https://example.test/x?y=1')]);
    for (const q of ['"unbalanced', 'NEAR(', '(((', ')', 'AND OR', 'NOT', '*', "'; DROP TABLE session_messages; --", 'foo: hello', 'principal: alice', 'session_id: x', '\u0000']) {
      await assert.rejects(engine.search('dave', { query: q }), (err: unknown) => err instanceof SearchQueryError && /not a valid full-text query/.test(err.message), `query ${JSON.stringify(q)}`);
    }
    // One parser for both engines: the same words, naming where the query went wrong.
    await assert.rejects(engine.search('dave', { query: '"unbalanced' }), /unbalanced double quote at character 1/);
    for (const q of ['a\u0000b', '\u202e', 'x'.repeat(256), '^hello', 'body: hello', 'SELECT * FROM sessions', 'hello\' OR 1=1']) {
      await assert.doesNotReject(engine.search('dave', { query: q }), `query ${JSON.stringify(q.slice(0, 20))}`);
    }
    assert.deepEqual((await engine.search('dave', { query: 'CAFE creme' })).map((h) => h.snippet), ['[café] [crème] at https://example.test/x?y=1'], 'case and accents fold alike');
    assert.deepEqual((await engine.search('dave', { query: 'hist*' })).map((h) => h.snippet), ['hello world from the [history]']);
    assert.deepEqual((await engine.search('dave', { query: 'NEAR(hello history, 3)' })).map((h) => h.sessionId), [sessionIds[0]]);
    assert.deepEqual(await engine.search('dave', { query: 'NEAR(hello history, 2)' }), []);
    for (const q of ['', '   ', 'x'.repeat(257), 42 as never]) await assert.rejects(engine.search('dave', { query: q }), StoreInputError);
    assert.equal((await engine.search('dave', { query: '"hello world"' })).length, 1, 'still answering');
  });

  it(`${engineName}: messages come back in order with their turns and their exact content; paging by seq`, async () => {
    const script: Script = {
      messages: [
        { turn: 0, role: 'system', content: { text: 'you are a test' } },
        { turn: 1, role: 'user', content: { text: 'run ls', parts: [{ b: 2, a: 1 }] } },
        { turn: 1, role: 'assistant', content: { role: 'assistant', content: 'ok', toolCalls: [{ id: 'c1', name: 'terminal', arguments: { command: 'ls' } }] } },
        { turn: 1, role: 'tool', content: { role: 'tool', callId: 'c1', content: HOSTILE_TEXT } },
        { turn: 2, role: 'user', content: 'a plain string message' },
        { turn: 2, role: 'assistant', content: { n: 1.5, big: 9007199254740991, neg: -0, empty: {}, list: [null, true, false] } },
      ],
      log: [],
    };
    const p = await publish(script);
    const all = await p.engine.messages('alice', p.sessionId);
    assert.deepEqual(all!.map((m) => [m.seq, m.role, m.turn]), [
      [1, 'system', null],
      [2, 'user', 1],
      [3, 'assistant', 1],
      [4, 'tool', 1],
      [5, 'user', 2],
      [6, 'assistant', 2],
    ]);
    assert.deepEqual(all!.map((m) => m.content), script.messages.map((m) => JSON.parse(JSON.stringify(m.content))), 'every value as written, the hostile text included');
    assert.deepEqual((await p.engine.messages('alice', p.sessionId, 2, 3))!.map((m) => m.seq), [3, 4, 5]);
    assert.deepEqual(await p.engine.messages('alice', p.sessionId, 6), []);
  });

  it(`${engineName}: another principal reads exactly what a missing id reads`, async () => {
    const p = await publish({ messages: [{ turn: 1, role: 'user', content: 'secret plans' }], log: [{ stream: 'stdout', chunk: 'secret output\n' }] });
    assert.equal(await p.engine.messages('mallory', p.sessionId), undefined);
    assert.equal(await p.engine.messages('mallory', 'se_no_such_session'), undefined);
    assert.equal(await p.engine.messages('alice', 'se_no_such_session'), undefined);
    assert.equal(await p.engine.taskLog('mallory', p.taskId), undefined);
    assert.equal(await p.engine.taskLog('mallory', 'tk_no_such_task'), undefined);
    assert.equal(await p.engine.taskLog('alice', 'tk_no_such_task'), undefined);
    // Another principal's spelling of alice's ids does not reach them either.
    assert.equal(await p.engine.messages('Alice', p.sessionId), undefined);
    assert.equal(await p.engine.messages('alice ', p.sessionId), undefined);
  });

  it(`${engineName}: a task's log comes back chunk by chunk, each stream kept, paged by seq`, async () => {
    const log: Script['log'] = [
      { stream: 'stdout', chunk: 'first line\n' },
      { stream: 'stderr', chunk: 'a warning\n' },
      { stream: 'stdout', chunk: `${HOSTILE_TEXT}\n` },
      { stream: 'note', chunk: 'the task was cancelled' },
      ...Array.from({ length: 40 }, (_, i) => ({ stream: 'stdout' as const, chunk: `line ${i}\n` })),
    ];
    const p = await publish({ messages: [], log });
    const chunks = (await p.engine.taskLog('alice', p.taskId))!;
    assert.deepEqual(chunks.map((c) => [c.seq, c.stream, c.chunk]), log.map((l, i) => [i + 1, l.stream, l.chunk]));
    assert.deepEqual((await p.engine.taskLog('alice', p.taskId, 40, 10))!.map((c) => c.seq), [41, 42, 43, 44]);
    assert.deepEqual((await p.engine.taskLog('alice', p.taskId, 2, 2))!.map((c) => c.chunk), [`${HOSTILE_TEXT}\n`, 'the task was cancelled']);
  });

  it(`${engineName}: the largest message the store takes comes back whole`, async () => {
    // Canonical JSON of a string adds its two quotes: the biggest content the store accepts.
    const big = 'x'.repeat(MAX_MESSAGE_CONTENT_BYTES - 2);
    const p = await publish({ messages: [{ turn: 1, role: 'tool', content: big }, { turn: 1, role: 'assistant', content: 'after the big one' }], log: [] });
    const read = (await p.engine.messages('alice', p.sessionId))!;
    assert.equal(read.length, 2);
    assert.equal((read[0]!.content as string).length, big.length);
    assert.equal(read[0]!.content, big);
    assert.equal(read[1]!.content, 'after the big one');
  });
}

describe('transcripts and task logs on both engines', () => {
  const dirs: string[] = [];
  const hostStore = (): Database => {
    const dir = mkdtempSync(join(tmpdir(), 'sv-transcript-'));
    dirs.push(dir);
    return openStore(join(dir, 'supervisor.db'));
  };
  const opened: Database[] = [];
  after(() => {
    for (const db of opened) if (db.open) db.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('SQLite (this machine)', () => {
    const opening = (): Database => {
      const db = hostStore();
      opened.push(db);
      return db;
    };
    transcriptSuite(
      'sqlite',
      async (script) => {
        const db = opening();
        return { engine: sqliteEngine(db), ...writeHostStore(db, script) };
      },
      async (many) => {
        const db = opening();
        return { engine: sqliteEngine(db), sessionIds: many.map((m) => writeHostStore(db, m.script, { principal: m.principal }).sessionId) };
      },
    );
  });

  const skip = pgUnavailableReason() ?? false;
  describe('PostgreSQL (the control plane)', { skip }, () => {
    let cluster: PgCluster;
    let pool: ControlPlanePool;
    let member: ControlPlaneMember;
    before(async () => {
      cluster = await startPgCluster();
      pool = await openPool(await cluster.createDatabase('cp_transcripts_suite'));
      await migrateControlPlane(pool);
      member = await ControlPlaneMember.join(pool, ownProcessIdentity(), { onFenced: () => undefined });
    });
    after(async () => {
      await member?.leave('the suite ended').catch(() => undefined);
      await pool?.end().catch(() => undefined);
      await cluster?.stop();
    });

    /**
     * The run's own copy path: its session on the control plane, the chain and the messages it
     * vouches for shipped by the ChainShipper, the task held and its log copied under the lease.
     */
    const copyRun = async (db: Database, ids: { sessionId: string; taskId: string }, principal: string, by = member, withTask = true): Promise<string> => {
      const lease = await createOwnedSession(by, { local_session: ids.sessionId }, `${ids.sessionId}@${by.id}`, principal);
      let lost: string | null = null;
      const shipper = new ChainShipper({
        member: by,
        lease,
        localSession: ids.sessionId,
        read: (afterSeq, limit) => readEventRows(db, ids.sessionId, { afterSeq, limit }),
        readMessages: (afterSeq, throughSeq, limit) => readStoredMessages(db, ids.sessionId, { afterSeq, throughSeq, limit }),
        onLost: (why) => void (lost = why),
      });
      await shipper.stop();
      assert.equal(lost, null);
      if (!withTask) return lease.id;
      await holdRunTask(by, lease, { id: ids.taskId, kind: 'terminal', summary: 'echo' });
      const chunks = new TaskStore(db).logs({ principal }, ids.taskId, { limit: 10_000 })!;
      await copyTaskLogs(by, lease, ids.taskId, chunks);
      return lease.id;
    };

    it('postgres: a session copied again by a later run (its resume, another member) is one hit per message, from the newest copy', async () => {
      const db = hostStore();
      const later = await ControlPlaneMember.join(pool, ownProcessIdentity(), { onFenced: () => undefined });
      try {
        const ids = writeHostStore(db, said('erin', 'the quokka ran', 'the quokka slept').script, { principal: 'erin' });
        const first = await copyRun(db, ids, 'erin');
        const second = await copyRun(db, ids, 'erin', later, false);
        assert.notEqual(first, second);
        assert.equal((await readCopiedMessages(pool, 'erin', first))!.length, 2, 'both copies hold the whole transcript');
        assert.equal((await readCopiedMessages(pool, 'erin', second))!.length, 2);
        const hits = await searchCopiedMessages(pool, { principal: 'erin' }, { query: 'quokka' });
        assert.deepEqual(hits.map((h) => h.sessionId), [second, second]);
        assert.deepEqual(new Set(hits.map((h) => h.snippet)), new Set(['the [quokka] ran', 'the [quokka] slept']));
      } finally {
        db.close();
        await later.leave('the test ended');
      }
    });

    transcriptSuite(
      'postgres',
      async (script) => {
        const db = hostStore();
        try {
          const ids = writeHostStore(db, script);
          return { engine: postgresEngine(pool), sessionId: await copyRun(db, ids, ALICE.principal), taskId: ids.taskId };
        } finally {
          db.close();
        }
      },
      async (many) => {
        const db = hostStore();
        try {
          const sessionIds: string[] = [];
          for (const m of many) sessionIds.push(await copyRun(db, writeHostStore(db, m.script, { principal: m.principal }), m.principal));
          return { engine: postgresEngine(pool), sessionIds };
        } finally {
          db.close();
        }
      },
    );
  });
});
