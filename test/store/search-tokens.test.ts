// searchTokens against FTS5 itself: message_fts of a real store (migration 5's tokenizer) is given
// the text, and its fts5vocab instance table says which tokens FTS5 made, in order. Every code
// point is tried, alone and inside a word, so the port of SQLite's tables cannot drift unseen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { searchTokens, textTokens } from '../../src/store/search-query.js';
import type { Database } from '../../src/store/database.js';
import { tempStore } from './store-fixtures.js';

/** What message_fts's tokenizer makes of each text, read back from an fts5vocab instance table. */
function fts5Tokens(db: Database, texts: readonly string[]): string[][] {
  db.exec('CREATE VIRTUAL TABLE IF NOT EXISTS temp.message_fts_instances USING fts5vocab(main, message_fts, instance)');
  db.exec('DELETE FROM message_fts');
  const insert = db.prepare('INSERT INTO message_fts (rowid, body) VALUES (?, ?)');
  db.transaction(() => texts.forEach((t, i) => insert.run(i + 1, t)))();
  const out = texts.map((): string[] => []);
  for (const [doc, offset, term] of db.prepare('SELECT doc, offset, term FROM temp.message_fts_instances').raw().iterate() as Iterable<[number, number, string]>) {
    out[doc - 1]![offset] = term;
  }
  return out;
}

const SAMPLES = [
  'plain ASCII words, with punctuation!',
  'café Crème brûlée naïve CAFÉ',
  'cafe\u0301 decomposed e + U+0301; \u0301leading mark; x\u0360y (a mark outside FTS5 set)',
  'Straße STRASSE ẞ',
  'ΟΔΟΣ οδός Σίσυφος ς',
  'İstanbul ıi ǅ ǆ Ǆ',
  '日本語のテキスト 中文 한국어',
  'emoji 🎉 party🎉time 👍🏽 ❤️',
  'digits 12345 3.14 1,000 ½ ² ٣',
  'snake_case kebab-case camelCase',
  'alice@example.com https://example.com/path?q=1#frag',
  'tab\tnew\nline\r\nNUL\u0000in the middle',
  'private use \ue000\uf8ff and \u{f0000}',
  'lone \ud800 high, lone \udc00 low, noncharacters \ufffe\uffff',
  'rtl \u202eoverride\u202c and zero\u200bwidth and soft\u00adhyphen',
  'हिन्दी العربية עברית ไทย',
  'Deseret 𐐀𐐁 𐐨',
  'x'.repeat(3000),
];

test('searchTokens equals FTS5 unicode61 remove_diacritics 2 on accents, scripts, symbols and broken text', (t) => {
  const { db } = tempStore(t);
  const want = fts5Tokens(db, SAMPLES);
  SAMPLES.forEach((s, i) => assert.deepEqual(searchTokens(s), want[i], JSON.stringify(s.slice(0, 60))));
  // Spot checks of what the rules mean, so a reader sees them (FTS5 agreed above).
  assert.deepEqual(searchTokens('Crème CAFÉ cafe\u0301'), ['creme', 'cafe', 'cafe']);
  assert.deepEqual(searchTokens('snake_case kebab-case'), ['snake', 'case', 'kebab', 'case']);
  assert.deepEqual(searchTokens('Straße ΟΔΟΣ'), ['straße', 'οδοσ']);
  assert.deepEqual(searchTokens('party🎉time'), ['party', 'time']);
});

test('every code point, alone and inside a word, tokenizes as FTS5 does; tokens re-tokenize to themselves', (t) => {
  const { db } = tempStore(t);
  const texts: string[] = [];
  let chunk: string[] = [];
  for (let cp = 1; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue; // lone surrogates: SAMPLES
    const ch = String.fromCodePoint(cp);
    chunk.push(`x${ch}y ${ch}z`);
    if (chunk.length === 4096) {
      texts.push(chunk.join(' '));
      chunk = [];
    }
  }
  texts.push(chunk.join(' '));
  const want = fts5Tokens(db, texts);
  let compared = 0;
  texts.forEach((text, i) => {
    const got = searchTokens(text);
    if (JSON.stringify(got) !== JSON.stringify(want[i])) {
      const k = got.findIndex((g, j) => g !== want[i]![j]);
      assert.fail(`chunk ${i}, token ${k}: ours ${JSON.stringify(got.slice(k, k + 3))}, FTS5 ${JSON.stringify(want[i]!.slice(k, k + 3))}`);
    }
    compared += got.length;
    // A query hands FTS5 and PostgreSQL tokens, not text: each must stay exactly itself.
    for (const token of got) if (searchTokens(token).length !== 1 || searchTokens(token)[0] !== token) assert.fail(`token ${JSON.stringify(token)} re-tokenizes to ${JSON.stringify(searchTokens(token))}`);
  });
  assert.ok(compared > 2_000_000, `${compared} tokens compared`);
});

test('token spans point at the original characters', () => {
  const text = 'Hé, CAFE\u0301 and 🎉x';
  assert.deepEqual(textTokens(text).map((s) => [s.token, text.slice(s.start, s.end)]), [['he', 'Hé'], ['cafe', 'CAFE\u0301'], ['and', 'and'], ['x', 'x']]);
});
