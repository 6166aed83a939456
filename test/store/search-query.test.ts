// The search language's parser and its translations (decision 128): precedence, what is rejected
// and why, the exact FTS5 and tsquery text each engine receives, the tsvector parts' limits, and
// snippets. The engines themselves answer in search-query-both-engines.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_QUERY_TOKENS,
  PART_OVERLAP_TOKENS,
  SearchQueryError,
  parseSearchQuery,
  snippetOf,
  toFts5,
  toPartsQuery,
  toTsquery,
  tsvectorDocuments,
  type SearchQuery,
} from '../../src/store/search-query.js';
import { SearchQueryError as ReExported } from '../../src/store/session-search.js';
import { StoreInputError } from '../../src/store/store-errors.js';

const w = (...tokens: string[]): SearchQuery => ({ kind: 'phrase', tokens, prefix: false });

test('precedence is FTS5\'s: NOT over AND over OR; implicit AND; NOT is binary and left-associative', () => {
  assert.deepEqual(parseSearchQuery('a OR b AND c'), { kind: 'or', operands: [w('a'), { kind: 'and', operands: [w('b'), w('c')] }] });
  assert.deepEqual(parseSearchQuery('a b NOT c'), { kind: 'and', operands: [w('a'), { kind: 'not', include: w('b'), exclude: w('c') }] });
  assert.deepEqual(parseSearchQuery('a NOT b NOT c'), { kind: 'not', include: { kind: 'not', include: w('a'), exclude: w('b') }, exclude: w('c') });
  assert.deepEqual(parseSearchQuery('(a OR b) c'), { kind: 'and', operands: [{ kind: 'or', operands: [w('a'), w('b')] }, w('c')] });
  // Lower-case operators are words, as in FTS5.
  assert.deepEqual(parseSearchQuery('a or b'), { kind: 'and', operands: [w('a'), w('or'), w('b')] });
});

test('words become tokens: punctuation makes a phrase, * a prefix (attached or after a space), body: is the one column', () => {
  assert.deepEqual(parseSearchQuery('Foo-Bar'), w('foo', 'bar'));
  assert.deepEqual(parseSearchQuery('alice@example.com'), w('alice', 'example', 'com'));
  assert.deepEqual(parseSearchQuery('"Crème  brûlée"'), w('creme', 'brulee'));
  assert.deepEqual(parseSearchQuery('"say ""hi"""'), w('say', 'hi'));
  assert.deepEqual(parseSearchQuery('intern*'), { kind: 'phrase', tokens: ['intern'], prefix: true });
  assert.deepEqual(parseSearchQuery('"quick br" *'), { kind: 'phrase', tokens: ['quick', 'br'], prefix: true });
  assert.deepEqual(parseSearchQuery('body:pelican'), w('pelican'));
  assert.deepEqual(parseSearchQuery('{body}: pelican'), w('pelican'));
  assert.deepEqual(parseSearchQuery('^pelican'), w('pelican'));
  assert.deepEqual(parseSearchQuery('NEAR(a "b c")'), { kind: 'near', phrases: [w('a'), w('b', 'c')], distance: 10 });
  assert.deepEqual(parseSearchQuery('NEAR (a b, 0)'), { kind: 'near', phrases: [w('a'), w('b')], distance: 0 });
  assert.deepEqual(parseSearchQuery('NEAR a'), { kind: 'and', operands: [w('near'), w('a')] });
});

test('a term with no token matches nothing and folds away as FTS5 would answer', () => {
  assert.deepEqual(parseSearchQuery('🎉'), { kind: 'nothing' });
  assert.deepEqual(parseSearchQuery('\u202e'), { kind: 'nothing' });
  assert.deepEqual(parseSearchQuery('a OR 🎉'), w('a'));
  assert.deepEqual(parseSearchQuery('a 🎉'), { kind: 'nothing' });
  assert.deepEqual(parseSearchQuery('a NOT 🎉'), w('a'));
  assert.deepEqual(parseSearchQuery('NEAR(a 🎉)'), { kind: 'nothing' });
  assert.equal(toFts5({ kind: 'nothing' }), null);
  assert.equal(toTsquery({ kind: 'nothing' }), null);
  assert.equal(toPartsQuery({ kind: 'nothing' }), null);
});

test('malformed text is a SearchQueryError (an input error naming the problem), re-exported for existing callers', () => {
  const cases: [string, RegExp][] = [
    ['"open', /unbalanced double quote at character 1/],
    ['a "b', /unbalanced double quote at character 3/],
    ['(a', /opening parenthesis is not closed/],
    ['a)', /closing parenthesis has no opening one/],
    [')(', /closing parenthesis/],
    ['AND', /AND needs a term before and after it/],
    ['a OR', /"OR" at the end needs a term after it/],
    ['(a OR) b', /^OR needs a term after it/],
    ['NOT a', /NOT needs a term/],
    ['*', /\* must follow a word/],
    ['a*b', /\* may only end a word/],
    ['a**', /\* may only end a word/],
    ['hello +', /"\+" is not a search term/],
    ["';", /is not a search term/],
    ['foo:x', /"foo:" is a column filter/],
    ['{rank}: x', /column filter/],
    ['body:', /there is no search term|at the end needs a term/],
    ['NEAR(a)', /exactly two terms.*has 1/],
    ['NEAR(a b c)', /has 3/],
    ['NEAR(a OR b)', /NEAR takes two terms, not OR/],
    ['NEAR(a b, -1)', /whole number from 0 to 64/],
    ['NEAR(a b, 65)', /whole number/],
    ['NEAR(a b', /not closed/],
    ['a, b', /comma/],
    ['', /no search term/],
    ['\u0000 \t', /no search term/],
    [Array.from({ length: MAX_QUERY_TOKENS + 1 }, () => 'a').join(' '), /more than 64 terms/],
    ['a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r-s-t-u-v-w-x-y-z-a-b-c-d-e-f-g-h-i-j-k-l-m', /more than 64/],
  ];
  for (const [q, reason] of cases) {
    assert.throws(
      () => parseSearchQuery(q),
      (err: unknown) => err instanceof SearchQueryError && err instanceof StoreInputError && err.field === 'query' && reason.test(err.syntax) && /not a valid full-text query/.test(err.message),
      JSON.stringify(q.slice(0, 30)),
    );
  }
  assert.equal(ReExported, SearchQueryError);
  assert.doesNotThrow(() => parseSearchQuery(Array.from({ length: MAX_QUERY_TOKENS }, () => 'a').join(' ')));
});

test('each engine gets only quoted tokens and our operators', () => {
  const q = parseSearchQuery('(Café OR "x y"*) NOT NEAR(a b, 1)');
  assert.equal(toFts5(q), '(("cafe" OR "x" + "y" *) NOT NEAR("a" "b", 1))');
  assert.equal(
    toTsquery(q),
    "(('cafe' | ('x' <-> 'y':*)) & !(('b' <2> 'a') | ('b' <-> 'a') | ('a' <0> 'b') | ('a' <-> 'b') | ('a' <2> 'b')))",
  );
  // A NEAR of a two-token phrase: its start at most (2 + N) tokens before the other's, or (1 + N) after.
  assert.equal(toTsquery(parseSearchQuery('NEAR("a b" c, 0)')), "(('c' <-> 'a' <-> 'b') | ('a' <0> 'c' <-> 'b') | ('a' <-> 'b' <0> 'c') | ('a' <-> 'b' <-> 'c'))");
  const parts = toPartsQuery(parseSearchQuery('a (b OR c) NOT d'))!;
  assert.deepEqual(parts.leaves, ["'a'", "'b'", "'c'", "'d'"]);
  assert.equal(parts.candidate, "('a' | 'b' | 'c')");
  assert.equal(parts.condition((i) => `L${i}`), '(L0 AND ((L1 OR L2) AND NOT L3))');
});

test('tsvector parts: quoted lexemes, at most 256 positions per lexeme, long tokens cut to 2046 bytes, overlapping parts', () => {
  assert.deepEqual(tsvectorDocuments(''), []);
  assert.deepEqual(tsvectorDocuments('🎉 !!'), []);
  assert.deepEqual(tsvectorDocuments('Hello hello WORLD'), ["'hello':1,2 'world':3"]);
  // 300 of one word: a part takes 256, the next restarts PART_OVERLAP_TOKENS earlier.
  const parts = tsvectorDocuments('buffalo '.repeat(300));
  assert.equal(parts.length, 2);
  assert.equal(parts[0], `'buffalo':${Array.from({ length: 256 }, (_, i) => i + 1).join(',')}`);
  assert.equal(parts[1], `'buffalo':${Array.from({ length: 300 - 256 + PART_OVERLAP_TOKENS }, (_, i) => i + 1).join(',')}`);
  const [long] = tsvectorDocuments(`${'é'.repeat(5000)} x`);
  assert.equal(long, `'${'e'.repeat(2046)}':1 'x':2`); // é folds to e (one byte) first
  const [wide] = tsvectorDocuments(`${'ж'.repeat(5000)} x`); // two bytes each: 1023 fit
  assert.equal(wide, `'${'ж'.repeat(1023)}':1 'x':2`);
  // Every part stays far under PostgreSQL's 1 MB and 16383 positions, however the text is made.
  const distinct = Array.from({ length: 20_000 }, (_, i) => `w${i}${'q'.repeat(40)}`).join(' ');
  for (const p of tsvectorDocuments(distinct)) {
    assert.ok(Buffer.byteLength(p) < 1024 * 1024, `part of ${Buffer.byteLength(p)} bytes`);
    assert.ok(Math.max(...[...p.matchAll(/[:,](\d+)/g)].map((m) => Number(m[1]))) <= 8192);
  }
});

test('snippets: FTS5 snippet()\'s window and highlights (compared with FTS5 itself in the both-engines test), bounded', () => {
  const text = `${'lorem ipsum '.repeat(30)}the pelican sat near another Pelican and a pelicans nest${' dolor'.repeat(30)}`;
  const s = snippetOf(text, parseSearchQuery('pelican* NOT dog'));
  assert.equal(s, '…ipsum lorem ipsum the [pelican] sat near another [Pelican] and a [pelicans] nest dolor dolor dolor…');
  assert.doesNotMatch(s, /\[lorem\]/);
  assert.ok(s.length <= 400);
  assert.equal(snippetOf('short text here', parseSearchQuery('text')), 'short [text] here');
  assert.equal(snippetOf('Café crème', parseSearchQuery('creme')), 'Café [crème]');
  // A phrase is one highlight; the lone word outside it is not a phrase instance.
  assert.equal(snippetOf('the quick brown fox and the quick cat', parseSearchQuery('"quick brown"')), 'the [quick brown] fox and the quick cat');
  // A sentence start is preferred when the text is longer than the window.
  const sentences = `${'one two three four five six seven. '.repeat(3)}Eight nine ten needle eleven twelve. ${'more words here. '.repeat(10)}`;
  assert.equal(snippetOf(sentences, parseSearchQuery('needle')), '…Eight nine ten [needle] eleven twelve. more words here. more words here. more words here. more…'); // as FTS5 says
  const huge = `needle ${'x'.repeat(1000)} end`;
  const h = snippetOf(huge, parseSearchQuery('needle'), { maxChars: 50 });
  assert.equal(h, `[needle] ${'x'.repeat(40)}…`);
});
