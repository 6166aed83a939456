// One query language, two engines (decision 128): the same ~40 messages are indexed in a real
// store's message_fts (SQLite, FTS5) and, as tsvector parts from tsvectorDocuments, in a table on a
// real throwaway PostgreSQL; every query must find the same set of messages on both, and hostile
// query text must be a SearchQueryError (or a correct answer) on both, with both still answering.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type Database } from '../../src/store/database.js';
import { SessionStore } from '../../src/store/session-store.js';
import { SearchQueryError, SessionSearch } from '../../src/store/session-search.js';
import { parseSearchQuery, searchableText, searchTokens, snippetOf, toFts5, toPartsQuery, toTsquery, tsvectorDocuments, PART_OVERLAP_TOKENS } from '../../src/store/search-query.js';
import { pgUnavailableReason, startPgCluster, type PgCluster } from '../helpers/pg-cluster.js';
import { mulberry32 } from '../redaction/redaction-helpers.js';

const alice = { principal: 'alice' };

/** Distinct tokens t0 … t8999, with markers placed so phrases straddle the first part boundary (8192 tokens). */
function longMessage(): string {
  const words = Array.from({ length: 9000 }, (_, i) => `t${i}`);
  words[0] = 'beginning';
  words[8191] = 'alpha'; // last token of part 0
  words[8192] = 'omega'; // first token after it: only part 1 (which starts 128 earlier) holds both
  words[8185] = 'left';
  words[8196] = 'right'; // NEAR(left right, 10) straddles the boundary too
  words[8999] = 'ending';
  return words.join(' ');
}

/** Message content as the runtime stores it: strings, model messages, tool calls and results. */
const CORPUS: unknown[] = [
  'the pelican report is ready',
  { role: 'user', content: 'Café au lait and crème brûlée at the CAFE' },
  { role: 'user', content: 'cafe\u0301 with a decomposed accent' },
  { role: 'user', content: 'Die Straße ist groß; STRASSE auch' },
  { role: 'user', content: 'Ο Σωκράτης είπε ΟΔΟΣ και οδός' },
  { role: 'user', content: '日本語のテキストを検索する 中文 搜索' },
  { role: 'user', content: 'party 🎉 time with emoji 👍🏽' },
  { role: 'user', content: 'version 2.0.1 released on 2024-05-01, build 12345' },
  { role: 'user', content: 'call snake_case_function with kebab-case-arg' },
  { role: 'user', content: 'mail alice@example.com or visit https://example.com/docs?page=2' },
  { role: 'user', content: `${'x'.repeat(3000)} tail` },
  { role: 'user', content: `${'supercalifragilistic'.repeat(150)} and more` },
  { role: 'user', content: `${'buffalo '.repeat(300)}end` },
  { role: 'user', content: longMessage() },
  { role: 'user', content: 'apple one two three four five six seven eight nine ten eleven banana' },
  { role: 'user', content: 'banana then apple' },
  { role: 'user', content: 'Hello World' },
  { role: 'user', content: 'hello, world! and world hello' },
  { role: 'user', content: 'The quick brown fox jumps over the lazy dog' },
  { role: 'assistant', content: 'running it', toolCalls: [{ id: 'call_9', name: 'terminal', arguments: { command: 'grep -r needle /srv/haystack' } }] },
  { role: 'tool', callId: 'call_9', content: 'haystack/needle.txt: found', ok: true },
  { role: 'user', content: 'naïve coöperation résumé' },
  { role: 'user', content: 'Ünïcödé ÅNGSTRÖM' },
  { role: 'user', content: "it's a quote ' and a backslash \\ in C:\\Users\\alice" },
  { role: 'user', content: 'SELECT * FROM sessions; DROP TABLE messages; --' },
  { role: 'user', content: 'private use \ue000 char and zero\u200bwidth' },
  { role: 'user', content: 'Türkçe İstanbul ıi' },
  { role: 'user', content: 'numbers 1 2 3 4 5 and ½ ² ٣' },
  { role: 'user', content: 'prefix test: international internationalization intern internal' },
  { role: 'user', content: 'Crème fraîche recipe' },
  { role: 'user', content: 'résumé of the meeting' },
  { role: 'user', content: 'NOT AND OR near NEAR words as text' },
  { role: 'user', content: 'ΣΊΣΥΦΟΣ in upper case Greek' },
  { role: 'user', content: 'mixed 日本 and english words' },
  { role: 'user', content: 'the lazy cat sleeps' },
  { role: 'user', content: 'apple banana cherry' },
  { role: 'user', content: 'banana split' },
  { role: 'user', content: 'cherry pie and apple pie' },
  { role: 'assistant', content: 'first string ends here', toolCalls: [{ id: 'call_10', name: 'write', arguments: { text: 'second begins' } }] },
  { role: 'user', content: 'ß ss SS 한국어 텍스트' },
  { role: 'user', content: '🎉🎉🎉' },
  { role: 'user', content: `${'one two three four five six seven. '.repeat(3)}Eight nine ten needle eleven twelve: ${'more words here. '.repeat(10)}` },
];

const QUERIES = [
  // words, case and accent variants
  'pelican', 'cafe', 'café', 'CAFÉ', 'creme', 'Crème', 'straße', 'strasse', 'STRASSE', 'ss', 'οδοσ', 'ΟΔΟΣ', 'σισυφοσ', 'ΣΊΣΥΦΟΣ',
  'résumé', 'RESUME', 'angstrom', 'Ångström', 'unicode', 'istanbul', 'İstanbul', '日本', '日本語のテキストを検索する', '한국어',
  '12345', '2024', 'needle', 'haystack', 'call_9', 'terminal', 'assistant', 'end', 'tail', 'beginning', 'ending',
  // phrases
  '"hello world"', '"world hello"', '"quick brown"', '"brown quick"', '"alice example com"', 'alice@example.com', 'snake_case_function',
  'kebab-case-arg', '"2 0 1"', '"here second"', '"buffalo end"', '"buffalo buffalo buffalo"', '"alpha omega"', '"it s"', '"C:\\Users"',
  // prefixes
  'intern*', 'inter*', 'internationali*', '日本*', 'caf*', 'xxxxxxxx*', 'supercali*', '"quick br"*', 'pel *', 't899*',
  // booleans and precedence
  'apple AND banana', 'apple OR cherry', 'apple NOT banana', '(apple OR cherry) NOT pie', 'apple banana NOT split',
  'cherry OR banana NOT split', 'apple OR banana AND cherry', '(apple OR banana) AND cherry', 'beginning AND ending', 'beginning NOT ending',
  'ending NOT (pelican OR beginning)', 'more NOT needle', 'NEAR(needle more, 3)', 'hello world', 'body:pelican', 'body: pelican OR cafe',
  // NEAR
  'NEAR(apple banana)', 'NEAR(apple banana, 11)', 'NEAR(apple banana, 10)', 'NEAR(banana apple, 2)', 'NEAR(banana apple, 1)',
  'NEAR("quick brown" lazy, 3)', 'NEAR("quick brown" lazy, 2)', 'NEAR(lazy "quick brown", 3)', 'NEAR(fox dog, 0)', 'NEAR(hello world, 0)',
  'NEAR(alpha omega, 0)', 'NEAR(left right, 10)', 'NEAR(left right, 9)', 'NEAR(appl* banan*, 0)', 'NEAR(pie pie, 3)', 'NEAR(buffalo end, 0)',
  // terms with no token
  '🎉', 'pelican OR 🎉', 'pelican 🎉',
];

const HOSTILE = [
  '"unbalanced', '"', '""', ')(', '(', ')', 'NEAR(', 'NEAR(a)', 'NEAR(a b c)', 'NEAR(a b, 65)', 'NEAR(a b, -1)', 'NEAR(a OR b)',
  'body:x', 'foo:x', '{rank}: x', '^x', '*', 'x**', 'AND', 'OR x', 'NOT x', 'x NOT', "'; DROP TABLE docs; --",
  "' OR 1=1 --", "'", '\\', "\\'", '\u0000', 'a\u0000b', '&|!<->', "x' & 'y", ':*', '!x', '<-> x', "'x':*",
  'AND OR NOT '.repeat(23), `${'('.repeat(128)}${')'.repeat(128)}`, `${'('.repeat(120)}x${')'.repeat(120)}`,
  // The largest tsquery the language makes: NEAR of two 32-token phrases at distance 64 (~100 KB).
  `NEAR("${'a b c d e f g h '.repeat(4).trim()}" "${'a b c d e f g h '.repeat(4).trim()}", 64)`,
  Array.from({ length: 65 }, () => 'a').join(' '), Array.from({ length: 64 }, () => 'pie').join(' '),
  '\u202e', '\ud800', '\udc00x', 'x\ud800y', 'pelican\u202e', 'SELECT * FROM sessions', "pg_sleep(10)", '$1::tsquery',
];


const VOCABULARY = ['apple', 'banana', 'cherry', 'pie', 'split', 'the', 'quick', 'brown', 'lazy', 'dog', 'hello', 'world', 'buffalo',
  'end', 'café', 'Crème', 'straße', 'ΟΔΟΣ', 'needle', 'haystack', 'more', 'words', 'here', 'alpha', 'omega', 'left', 'right', 'intern', 'x'];

/** Random queries in the documented syntax over words the corpus holds. */
function randomQueries(count: number, seed: number): string[] {
  const next = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const word = (): string => {
    const w = pick(VOCABULARY);
    return next() < 0.2 ? `${w.slice(0, 1 + Math.floor(next() * w.length))}*` : w;
  };
  const term = (): string => (next() < 0.25 ? `"${word().replace('*', '')} ${word().replace('*', '')}"${next() < 0.3 ? '*' : ''}` : word());
  const expr = (depth: number): string => {
    const r = next();
    if (depth > 2 || r < 0.35) return term();
    if (r < 0.5) return `NEAR(${term()} ${term()}, ${Math.floor(next() * 12)})`;
    if (r < 0.6) return `(${expr(depth + 1)})`;
    return `${expr(depth + 1)} ${pick(['AND', 'OR', 'NOT', ''])} ${expr(depth + 1)}`.replace(/ {2}/, ' ');
  };
  return Array.from({ length: count }, () => expr(0));
}

/** Random strings over the syntax's own characters: what a confused or hostile model might send. */
function randomNoise(count: number, seed: number): string[] {
  const next = mulberry32(seed);
  const atoms = ['"', '(', ')', ',', '*', ':', '^', '+', '-', "'", '\\', ' ', 'AND', 'OR', 'NOT', 'NEAR', 'body', 'a', 'pie', '1', 'é', '🎉', '\u0000', '\u202e', '\ud800', '{', '}'];
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(next() * 12) }, () => atoms[Math.floor(next() * atoms.length)]!).join(''));
}

describe('one search language on SQLite and PostgreSQL', { skip: pgUnavailableReason() ?? false, timeout: 300_000 }, () => {
  let dir: string;
  let db: Database;
  let search: SessionSearch;
  let cluster: PgCluster;
  let client: pg.Client;
  /** SQLite rowid of messages → corpus index; session id → corpus index. */
  const byRowid = new Map<number, number>();
  const bySession = new Map<string, number>();
  const multiPart = new Set<number>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sv-search-both-'));
    db = openStore(join(dir, 'supervisor.db'), { checkpointer: false });
    const store = new SessionStore(db);
    search = new SessionSearch(db);
    CORPUS.forEach((content, i) => {
      const s = store.createSession(alice, { coreDir: '/core', coreRevision: 'r1', runtime: 'local' });
      const m = store.addMessage(alice, s.id, { role: 'user', content });
      byRowid.set((db.prepare('SELECT rowid FROM messages WHERE id = ?').get(m.id) as { rowid: number }).rowid, i);
      bySession.set(s.id, i);
    });
    cluster = await startPgCluster();
    client = new pg.Client({ connectionString: await cluster.createDatabase('search_both') });
    await client.connect();
    await client.query('CREATE TABLE docs (id int NOT NULL, part int NOT NULL, doc tsvector NOT NULL, PRIMARY KEY (id, part))');
    await client.query('CREATE INDEX docs_doc ON docs USING gin (doc)');
    // PostgreSQL gets what SQLite indexed: the stored content, through the shared extraction.
    const rows = db.prepare('SELECT rowid, content FROM messages').all() as { rowid: number; content: string }[];
    for (const r of rows) {
      const id = byRowid.get(r.rowid)!;
      const parts = tsvectorDocuments(searchableText(r.content));
      if (parts.length > 1) multiPart.add(id);
      for (const [part, doc] of parts.entries()) await client.query('INSERT INTO docs VALUES ($1, $2, $3::tsvector)', [id, part, doc]);
    }
  });
  after(async () => {
    await client?.end();
    await cluster?.stop();
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Message ids FTS5 matches, exactly as SessionSearch's statement asks (without its limit). */
  function sqliteIds(query: string): number[] {
    const match = toFts5(parseSearchQuery(query));
    if (match === null) return [];
    const rows = db.prepare('SELECT rowid FROM message_fts WHERE message_fts MATCH ?').pluck().all(match) as number[];
    return rows.map((r) => byRowid.get(r)!).sort((a, b) => a - b);
  }

  /** Message ids PostgreSQL matches over the parts: leaves per part, AND / OR / NOT per message. */
  async function pgIds(query: string): Promise<number[]> {
    const plan = toPartsQuery(parseSearchQuery(query));
    if (plan === null) return [];
    const sql = `SELECT id FROM docs WHERE id IN (SELECT id FROM docs WHERE doc @@ $1::tsquery)
                  GROUP BY id HAVING ${plan.condition((i) => `bool_or(doc @@ $${i + 2}::tsquery)`)} ORDER BY id`;
    return (await client.query<{ id: number }>(sql, [plan.candidate, ...plan.leaves])).rows.map((r) => r.id);
  }

  /** The single-tsquery form, over the messages that fit one part. */
  async function pgSinglePartIds(query: string): Promise<number[]> {
    const tsquery = toTsquery(parseSearchQuery(query));
    if (tsquery === null) return [];
    const rows = await client.query<{ id: number }>('SELECT id FROM docs WHERE doc @@ $1::tsquery AND id <> ALL($2::int[]) ORDER BY id', [tsquery, [...multiPart]]);
    return rows.rows.map((r) => r.id);
  }

  it('both engines index the same text, and the long messages really span several parts', () => {
    const view = db.prepare('SELECT m.content, v.body FROM messages m JOIN message_search_text v ON v.rowid = m.rowid').all() as { content: string; body: string }[];
    assert.equal(view.length, CORPUS.length);
    for (const r of view) assert.equal(searchableText(r.content), r.body);
    assert.ok(multiPart.has(12), 'the 300-buffalo message is split (256 positions per lexeme)');
    assert.ok(multiPart.has(13), 'the 9000-token message is split');
    // The straddling phrase is whole only in part 1, and only thanks to the overlap.
    const parts = tsvectorDocuments(longMessage());
    assert.ok(parts[0]!.includes("'alpha':8192") && !parts[0]!.includes("'omega'"));
    assert.ok(parts[1]!.includes(`'alpha':${PART_OVERLAP_TOKENS}`) && parts[1]!.includes(`'omega':${PART_OVERLAP_TOKENS + 1}`));
  });

  it(`${QUERIES.length} queries find the same messages on both engines`, async () => {
    const differences: string[] = [];
    let nonEmpty = 0;
    for (const q of QUERIES) {
      const want = sqliteIds(q);
      const got = await pgIds(q);
      if (JSON.stringify(want) !== JSON.stringify(got)) differences.push(`${q}: sqlite ${JSON.stringify(want)} postgres ${JSON.stringify(got)}`);
      const single = await pgSinglePartIds(q);
      const wantSingle = want.filter((id) => !multiPart.has(id));
      if (JSON.stringify(wantSingle) !== JSON.stringify(single)) differences.push(`${q} (one tsquery): sqlite ${JSON.stringify(wantSingle)} postgres ${JSON.stringify(single)}`);
      if (want.length > 0) nonEmpty++;
    }
    assert.deepEqual(differences, []);
    assert.ok(nonEmpty >= QUERIES.length - 15, `only ${nonEmpty} queries matched anything: the corpus tests too little`);
  });

  it('the answers are the documented ones (not merely equal)', async () => {
    const expect: [string, number[]][] = [
      ['café', [1, 2]],
      ['strasse', [3]],
      ['ss', [39]],
      ['"alpha omega"', [13]],
      ['NEAR(left right, 10)', [13]],
      ['NEAR(left right, 9)', []],
      ['beginning AND ending', [13]],
      ['beginning NOT ending', []],
      ['"buffalo end"', [12]],
      ['NEAR(apple banana, 11)', [14, 15, 35]],
      ['NEAR(apple banana, 10)', [15, 35]],
      ['cherry OR banana NOT split', [14, 15, 35, 37]],
      ['call_9', []],
      ['xxxxxxxx*', [10]],
      ['"here second"', [38]],
    ];
    for (const [q, ids] of expect) {
      assert.deepEqual(sqliteIds(q), ids, `sqlite ${q}`);
      assert.deepEqual(await pgIds(q), ids, `postgres ${q}`);
    }
    // SessionSearch (the tool's path) agrees, within its result limit.
    assert.deepEqual(search.search(alice, { query: 'NEAR(apple banana, 11)', limit: 20 }).map((h) => bySession.get(h.sessionId)).sort((a, b) => a! - b!), [14, 15, 35]);
  });

  it('snippets made for PostgreSQL (snippetOf) are the ones FTS5 snippet() makes, for every query (listed and random) and message it matched', (t) => {
    const bodies = new Map((db.prepare('SELECT rowid, body FROM message_search_text').all() as { rowid: number; body: string }[]).map((r) => [r.rowid, r.body]));
    const differences: string[] = [];
    let compared = 0;
    for (const q of [...QUERIES, ...randomQueries(400, 128)]) {
      let parsed: ReturnType<typeof parseSearchQuery>;
      try {
        parsed = parseSearchQuery(q);
      } catch {
        continue; // the random test asserts these are SearchQueryErrors
      }
      const match = toFts5(parsed);
      if (match === null) continue;
      const rows = db.prepare(`SELECT rowid, snippet(message_fts, 0, '[', ']', '…', 16) AS snippet FROM message_fts WHERE message_fts MATCH ?`).all(match) as { rowid: number; snippet: string }[];
      for (const r of rows) {
        const ours = snippetOf(bodies.get(r.rowid)!, parsed, { maxChars: Number.MAX_SAFE_INTEGER });
        if (ours !== r.snippet) differences.push(`${q} in message ${byRowid.get(r.rowid)}:\n  fts5 ${JSON.stringify(r.snippet.slice(0, 200))}\n  ours ${JSON.stringify(ours.slice(0, 200))}`);
        compared++;
      }
    }
    assert.deepEqual(differences, []);
    assert.ok(compared > 500, `${compared} snippets compared`);
    t.diagnostic(`${compared} snippets compared`);
  });

  it('400 random queries in the syntax find the same messages on both engines (seeded)', async (t) => {
    const differences: string[] = [];
    let nonEmpty = 0;
    for (const q of randomQueries(400, 128)) {
      let want: number[];
      try {
        want = sqliteIds(q);
      } catch (err) {
        // The generator can exceed no bound but NEAR's two terms; anything else is a bug.
        assert.ok(err instanceof SearchQueryError, `${q}: ${(err as Error).message}`);
        continue;
      }
      const got = await pgIds(q);
      if (JSON.stringify(want) !== JSON.stringify(got)) differences.push(`${q}: sqlite ${JSON.stringify(want)} postgres ${JSON.stringify(got)}`);
      if (want.length > 0) nonEmpty++;
    }
    assert.deepEqual(differences, []);
    assert.ok(nonEmpty > 100, `${nonEmpty} random queries matched something`);
    t.diagnostic(`${nonEmpty} of 400 random queries matched something`);
  });

  it('500 random strings of syntax characters: a SearchQueryError, or the same answer on both and no FTS5 error (seeded)', async (t) => {
    let answered = 0;
    for (const q of randomNoise(500, 21)) {
      let parsed: ReturnType<typeof parseSearchQuery>;
      try {
        parsed = parseSearchQuery(q);
      } catch (err) {
        assert.ok(err instanceof SearchQueryError, `${JSON.stringify(q)}: ${(err as Error).message}`);
        continue;
      }
      assert.ok(parsed);
      assert.deepEqual(await pgIds(q), sqliteIds(q), JSON.stringify(q));
      answered++;
    }
    assert.ok(answered > 20, `${answered} answered`);
    t.diagnostic(`${answered} of 500 parsed and answered alike; the rest were SearchQueryErrors`);
  });

  it('every token the tokenizer can make is a lexeme PostgreSQL reads back unchanged, in a tsvector and in a tsquery', async (t) => {
    // One token per code point that starts a token (most are unassigned in SQLite's table: still tokens).
    const tokens = new Set<string>();
    for (let cp = 1; cp <= 0x10ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      for (const token of searchTokens(`${String.fromCodePoint(cp)}`)) tokens.add(token);
    }
    const text = [...tokens].join(' ');
    const parts = tsvectorDocuments(text);
    await client.query('CREATE TEMP TABLE every_token (part int, doc tsvector)');
    for (const [i, doc] of parts.entries()) await client.query('INSERT INTO every_token VALUES ($1, $2::tsvector)', [i, doc]);
    const back = await client.query<{ lexeme: string }>('SELECT DISTINCT unnest(tsvector_to_array(doc)) AS lexeme FROM every_token');
    assert.equal(back.rows.length, tokens.size);
    const missing = back.rows.filter((r) => !tokens.has(r.lexeme)).map((r) => r.lexeme);
    assert.deepEqual(missing.slice(0, 5), []);
    // And as query literals: a sample across the range matches its own part.
    const sample = [...tokens].filter((_, i) => i % 9973 === 0);
    for (const token of sample) {
      const q = toTsquery(parseSearchQuery(`"${token}"`))!;
      const hit = await client.query('SELECT count(*)::int AS n FROM every_token WHERE doc @@ $1::tsquery', [q]);
      assert.ok(hit.rows[0].n >= 1, `token U+${token.codePointAt(0)!.toString(16)} not found by ${q}`);
    }
    t.diagnostic(`${tokens.size} distinct tokens in ${parts.length} parts read back; ${sample.length} queried`);
  });

  it(`${HOSTILE.length} hostile queries are a SearchQueryError or a correct answer on both, and both keep answering`, async () => {
    let rejected = 0;
    for (const q of HOSTILE) {
      const label = JSON.stringify(q.slice(0, 40));
      let parsed = true;
      try {
        parseSearchQuery(q);
      } catch (err) {
        assert.ok(err instanceof SearchQueryError, `${label}: ${(err as Error).message}`);
        parsed = false;
        rejected++;
      }
      // The tool's path on SQLite: the same verdict.
      try {
        const hits = search.search(alice, { query: q, limit: 20 });
        assert.ok(parsed, `${label} answered on SQLite but does not parse`);
        assert.deepEqual(hits.map((h) => bySession.get(h.sessionId)!).sort((a, b) => a - b), sqliteIds(q).slice(0, 20), label);
      } catch (err) {
        assert.ok(err instanceof SearchQueryError && !parsed, `${label} on SQLite: ${(err as Error).message}`);
      }
      if (parsed) assert.deepEqual(await pgIds(q), sqliteIds(q), `${label}: the engines differ`);
    }
    assert.ok(rejected >= 30, `${rejected} rejected`);
    assert.deepEqual(sqliteIds('pelican'), [0]);
    assert.deepEqual(await pgIds('pelican'), [0]);
    assert.equal((await client.query('SELECT count(*)::int AS n FROM docs')).rows[0].n > CORPUS.length, true);
  });
});
