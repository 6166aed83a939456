// One full-text query language for both engines (decision 128). The user's text is parsed here,
// once, into a SearchQuery whose terms are already tokens of message_fts's tokenizer
// (search-tokens.ts); each engine then gets a query built only from quoted tokens and our own
// operators, so neither FTS5 nor PostgreSQL ever parses user syntax:
//   toFts5(q)              an FTS5 MATCH string (SQLite, message_fts);
//   toTsquery(q)           a tsquery input literal, for a message stored as one tsvector;
//   toPartsQuery(q)        the same over a message stored as several overlapping tsvector parts;
//   tsvectorDocuments(t)   those parts, as tsvector input literals.
// Syntax: words (implicit AND), "a phrase", word* (prefix), AND / OR / NOT (NOT binds tighter than
// AND, AND tighter than OR; NOT is binary, "a NOT b"), parentheses, NEAR(a b, N) (N default 10).
import { StoreInputError } from './store-errors.js';
import { searchTokens, textTokens, type TextToken } from './search-tokens.js';

export { searchTokens, textTokens, type TextToken } from './search-tokens.js';

/** Tokens a query may name in all (phrases, prefixes and NEAR operands together). */
export const MAX_QUERY_TOKENS = 64;
/** The largest N in NEAR(a b, N). */
export const MAX_NEAR_DISTANCE = 64;
export const DEFAULT_NEAR_DISTANCE = 10;
/** The widest match (in tokens) the language can express: a NEAR of the most tokens at the largest distance. */
export const MAX_MATCH_SPAN = MAX_QUERY_TOKENS + MAX_NEAR_DISTANCE;
/** Keys whose strings are bookkeeping, not said text: migration 5's view leaves them out. */
export const UNINDEXED_KEYS: readonly string[] = ['role', 'callId', 'id', 'tool_call_id', 'type'];

/** The query is not valid in the documented syntax. */
export class SearchQueryError extends StoreInputError {
  /** What is wrong with the text, naming the piece. */
  readonly syntax: string;
  constructor(syntax: string) {
    super('query', `is not a valid full-text query (${syntax}); use plain words, "a phrase" in double quotes, word* for a prefix, AND / OR / NOT between terms, NEAR(a b, 10)`);
    this.name = 'SearchQueryError';
    this.syntax = syntax;
  }
}

/** Consecutive tokens; `prefix`: the last one matches any token it begins. No tokens: matches nothing. */
export interface Phrase {
  kind: 'phrase';
  tokens: string[];
  prefix: boolean;
}
export type SearchQuery =
  | Phrase
  /** Both phrases, their starts at most (the first one's length + distance) tokens apart, either order (FTS5's rule). */
  | { kind: 'near'; phrases: [Phrase, Phrase]; distance: number }
  | { kind: 'and' | 'or'; operands: SearchQuery[] }
  /** `include NOT exclude`. */
  | { kind: 'not'; include: SearchQuery; exclude: SearchQuery }
  /** What a query reduces to when a term has no token (only symbols, e.g. an emoji): no message. */
  | { kind: 'nothing' };

// ---------------------------------------------------------------------------------------------
// Lexing: the text as pieces. A word is a run of anything but white space, control characters,
// double quotes, parentheses and commas.

type Piece =
  | { kind: 'word'; text: string }
  | { kind: 'quoted'; text: string }
  | { kind: '(' | ')' | ',' };

const SEPARATOR = /[\s\p{Cc}]/u;

function lex(text: string): Piece[] {
  const pieces: Piece[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (SEPARATOR.test(ch)) {
      i++;
    } else if (ch === '(' || ch === ')' || ch === ',') {
      pieces.push({ kind: ch });
      i++;
    } else if (ch === '"') {
      // "" inside a quoted phrase is a literal quote (a separator to the tokenizer), as in FTS5.
      let body = '';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) throw new SearchQueryError(`unbalanced double quote at character ${i + 1}`);
        if (text[j] === '"') {
          if (text[j + 1] !== '"') break;
          body += '"';
          j += 2;
        } else {
          body += text[j++];
        }
      }
      pieces.push({ kind: 'quoted', text: body });
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !SEPARATOR.test(text[j]!) && !'(),"'.includes(text[j]!)) j++;
      pieces.push({ kind: 'word', text: text.slice(i, j) });
      i = j;
    }
  }
  return pieces;
}

// ---------------------------------------------------------------------------------------------
// Parsing: or := and (OR and)* ; and := not ([AND] not)* ; not := primary (NOT primary)* ;
// primary := term | ( or ) | NEAR ( term term [, N] ).

const OPERATORS = new Set(['AND', 'OR', 'NOT']);
/** `name:` or `{name}:` before a term: FTS5's column filter. */
const COLUMN_FILTER = /^(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*)):/;
/** The one column of message_fts: filtering on it is a no-op FTS5 accepted, so the language does too. */
const ONLY_COLUMN = 'body';

class Parser {
  private at = 0;
  private tokenCount = 0;
  constructor(private readonly pieces: Piece[]) {}

  parse(): SearchQuery {
    if (this.pieces.length === 0) throw new SearchQueryError('there is no search term');
    const q = this.or();
    const rest = this.pieces[this.at];
    if (rest) throw new SearchQueryError(rest.kind === ')' ? 'a closing parenthesis has no opening one' : `unexpected ${describe(rest)}`);
    return q;
  }

  private peek(): Piece | undefined {
    return this.pieces[this.at];
  }

  private isOperator(p: Piece | undefined, op: string): boolean {
    return p?.kind === 'word' && p.text === op;
  }

  private or(): SearchQuery {
    const operands = [this.and()];
    while (this.isOperator(this.peek(), 'OR')) {
      this.at++;
      operands.push(this.and());
    }
    return operands.length === 1 ? operands[0]! : { kind: 'or', operands };
  }

  private and(): SearchQuery {
    const operands = [this.not()];
    for (;;) {
      const p = this.peek();
      if (this.isOperator(p, 'AND')) {
        this.at++;
        operands.push(this.not());
      } else if (p && p.kind !== ')' && p.kind !== ',' && !this.isOperator(p, 'OR') && !this.isOperator(p, 'NOT')) {
        operands.push(this.not());
      } else {
        break;
      }
    }
    return operands.length === 1 ? operands[0]! : { kind: 'and', operands };
  }

  private not(): SearchQuery {
    let q = this.primary();
    while (this.isOperator(this.peek(), 'NOT')) {
      this.at++;
      q = { kind: 'not', include: q, exclude: this.primary() };
    }
    return q;
  }

  private primary(): SearchQuery {
    const p = this.peek();
    if (!p) throw new SearchQueryError(this.at === 0 ? 'there is no search term' : `${describe(this.pieces[this.at - 1]!)} at the end needs a term after it`);
    if (p.kind === '(') {
      this.at++;
      const q = this.or();
      if (this.peek()?.kind !== ')') throw new SearchQueryError('an opening parenthesis is not closed');
      this.at++;
      return q;
    }
    const before = this.pieces[this.at - 1];
    if (before?.kind === 'word' && OPERATORS.has(before.text) && (p.kind === ')' || p.kind === ',')) throw new SearchQueryError(`${before.text} needs a term after it`);
    if (p.kind === ')') throw new SearchQueryError('a closing parenthesis has no opening one');
    if (p.kind === 'word' && OPERATORS.has(p.text)) throw new SearchQueryError(`${p.text} needs a term before and after it`);
    if (p.kind === 'word' && p.text === 'NEAR' && this.pieces[this.at + 1]?.kind === '(') return this.near();
    if (p.kind === 'word' && columnFilterRest(p.text) === '') {
      // `body: word`: the filter stands alone and applies to what follows.
      this.at++;
      return this.primary();
    }
    if (p.kind !== 'word' && p.kind !== 'quoted') throw new SearchQueryError(`unexpected ${describe(p)}`);
    return this.term();
  }

  /** A word or a quoted phrase, and a `*` after it (attached, or alone after white space, as FTS5 reads it). */
  private term(): Phrase {
    const p = this.pieces[this.at++]!;
    let text = p.kind === 'word' || p.kind === 'quoted' ? p.text : '';
    let prefix = false;
    if (p.kind === 'word') {
      text = columnFilterRest(text) ?? text;
      if (text === '*') throw new SearchQueryError('* must follow a word (word* is a prefix)');
      if (text.endsWith('*')) {
        prefix = true;
        text = text.slice(0, -1);
      }
      if (text.includes('*')) throw new SearchQueryError(`${JSON.stringify(p.text)}: * may only end a word`);
    }
    const next = this.peek();
    if (!prefix && next?.kind === 'word' && next.text === '*') {
      prefix = true;
      this.at++;
    }
    const tokens = searchTokens(text);
    if (tokens.length === 0 && p.kind === 'word' && /^[\x00-\x7f]*$/.test(text)) {
      throw new SearchQueryError(`${JSON.stringify(p.text)} is not a search term (it has no letter or digit)`);
    }
    this.tokenCount += tokens.length;
    if (this.tokenCount > MAX_QUERY_TOKENS) throw new SearchQueryError(`it has more than ${MAX_QUERY_TOKENS} terms`);
    return { kind: 'phrase', tokens, prefix };
  }

  private near(): SearchQuery {
    this.at += 2; // NEAR (
    const phrases: Phrase[] = [];
    while (this.peek()?.kind === 'word' || this.peek()?.kind === 'quoted') {
      const p = this.peek()!;
      if (p.kind === 'word' && (OPERATORS.has(p.text) || p.text === 'NEAR')) throw new SearchQueryError(`NEAR takes two terms, not ${p.text}`);
      phrases.push(this.term());
    }
    if (phrases.length !== 2) throw new SearchQueryError(`NEAR takes exactly two terms, as in NEAR(a b, 10); it has ${phrases.length}`);
    let distance = DEFAULT_NEAR_DISTANCE;
    if (this.peek()?.kind === ',') {
      this.at++;
      const n = this.peek();
      if (n?.kind !== 'word' || !/^\d{1,3}$/.test(n.text) || Number(n.text) > MAX_NEAR_DISTANCE) {
        throw new SearchQueryError(`NEAR's distance must be a whole number from 0 to ${MAX_NEAR_DISTANCE}`);
      }
      distance = Number(n.text);
      this.at++;
    }
    if (this.peek()?.kind !== ')') throw new SearchQueryError('NEAR( is not closed by )');
    this.at++;
    return { kind: 'near', phrases: [phrases[0]!, phrases[1]!], distance };
  }
}

function describe(p: Piece): string {
  if (p.kind === 'word') return JSON.stringify(p.text);
  if (p.kind === 'quoted') return 'a quoted phrase';
  return p.kind === ',' ? 'a comma (it only separates NEAR(a b, N) from its distance)' : `"${p.kind}"`;
}

/**
 * For a word that begins with a column filter, the rest of the word (maybe empty); otherwise null.
 * `body:` / `{body}:` is accepted (the only column, so it filters nothing); any other column is an error.
 */
function columnFilterRest(word: string): string | null {
  const m = COLUMN_FILTER.exec(word);
  if (!m) return null;
  const columns = m[1] !== undefined ? m[1].trim().split(/\s+/) : [m[2]!];
  if (columns.some((c) => c !== ONLY_COLUMN)) {
    throw new SearchQueryError(`${JSON.stringify(m[0])} is a column filter and message text has no column but ${ONLY_COLUMN}; to search for the text itself, put it in double quotes`);
  }
  return word.slice(m[0].length);
}

/** Drops terms that have no token the way they would match: nothing. */
function simplify(q: SearchQuery): SearchQuery {
  switch (q.kind) {
    case 'phrase':
      return q.tokens.length === 0 ? { kind: 'nothing' } : q;
    case 'near':
      return q.phrases.some((p) => p.tokens.length === 0) ? { kind: 'nothing' } : q;
    case 'and': {
      const operands = q.operands.map(simplify);
      if (operands.some((o) => o.kind === 'nothing')) return { kind: 'nothing' };
      return operands.length === 1 ? operands[0]! : { kind: 'and', operands };
    }
    case 'or': {
      const operands = q.operands.map(simplify).filter((o) => o.kind !== 'nothing');
      if (operands.length === 0) return { kind: 'nothing' };
      return operands.length === 1 ? operands[0]! : { kind: 'or', operands };
    }
    case 'not': {
      const include = simplify(q.include);
      const exclude = simplify(q.exclude);
      if (include.kind === 'nothing' || exclude.kind === 'nothing') return include;
      return { kind: 'not', include, exclude };
    }
    case 'nothing':
      return q;
  }
}

/**
 * The query in `text`, its terms already tokens. Throws SearchQueryError for text outside the
 * syntax: an unbalanced quote or parenthesis, an operator without its operands, `*` alone, a
 * column filter other than body:, a word of ASCII punctuation only, NEAR without exactly two terms
 * or with a bad distance, no term at all, more than MAX_QUERY_TOKENS tokens. A term of symbols
 * only (an emoji, U+202E) is valid and matches nothing, as in FTS5.
 */
export function parseSearchQuery(text: string): SearchQuery {
  return simplify(new Parser(lex(text)).parse());
}

// ---------------------------------------------------------------------------------------------
// FTS5.

const fts5String = (token: string): string => `"${token.replaceAll('"', '""')}"`;

function fts5Phrase(p: Phrase): string {
  return p.tokens.map(fts5String).join(' + ') + (p.prefix ? ' *' : '');
}

/** An FTS5 MATCH string of quoted tokens, or null for a query that matches nothing. */
export function toFts5(q: SearchQuery): string | null {
  switch (q.kind) {
    case 'nothing':
      return null;
    case 'phrase':
      return fts5Phrase(q);
    case 'near':
      return `NEAR(${fts5Phrase(q.phrases[0])} ${fts5Phrase(q.phrases[1])}, ${q.distance})`;
    case 'and':
    case 'or':
      return `(${q.operands.map((o) => toFts5(o)!).join(` ${q.kind.toUpperCase()} `)})`;
    case 'not':
      return `(${toFts5(q.include)!} NOT ${toFts5(q.exclude)!})`;
  }
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL tsquery.

/** A quoted lexeme of a tsquery or tsvector literal. */
function pgLexeme(token: string): string {
  return `'${token.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** Token constraints at offsets from a match's start, as one PostgreSQL phrase: `'a' <-> 'b' <2> 'c':*`. */
function pgChain(items: { offset: number; lexeme: string }[]): string {
  const sorted = [...items].sort((x, y) => x.offset - y.offset);
  let out = sorted[0]!.lexeme;
  for (let i = 1; i < sorted.length; i++) {
    const gap = sorted[i]!.offset - sorted[i - 1]!.offset;
    out = `${out} ${gap === 1 ? '<->' : `<${gap}>`} ${sorted[i]!.lexeme}`;
  }
  return sorted.length > 1 ? `(${out})` : out;
}

function phraseItems(p: Phrase, start: number): { offset: number; lexeme: string }[] {
  return p.tokens.map((t, i) => ({ offset: start + i, lexeme: pgLexeme(t) + (p.prefix && i === p.tokens.length - 1 ? ':*' : '') }));
}

/**
 * NEAR(a b, N) as FTS5 defines it (fts5ExprNearIsMatch): the two phrases' starts are d tokens
 * apart, 0 <= d <= (the earlier phrase's length + N), either order, overlaps included. Each d is
 * one chain of token constraints (<0> where two fall on the same position); the tsquery is their OR.
 */
function pgNear(a: Phrase, b: Phrase, distance: number): string {
  const chains: string[] = [];
  for (let d = -(b.tokens.length + distance); d <= a.tokens.length + distance; d++) {
    chains.push(pgChain([...phraseItems(a, Math.max(0, -d)), ...phraseItems(b, Math.max(0, d))]));
  }
  return `(${chains.join(' | ')})`;
}

/** A tsquery input literal (cast with `::tsquery`; no normalization), or null for a query that matches nothing. */
export function toTsquery(q: SearchQuery): string | null {
  switch (q.kind) {
    case 'nothing':
      return null;
    case 'phrase':
      return pgChain(phraseItems(q, 0));
    case 'near':
      return pgNear(q.phrases[0], q.phrases[1], q.distance);
    case 'and':
    case 'or':
      return `(${q.operands.map((o) => toTsquery(o)!).join(q.kind === 'and' ? ' & ' : ' | ')})`;
    case 'not':
      return `(${toTsquery(q.include)!} & !${toTsquery(q.exclude)!})`;
  }
}

/**
 * A query over a message stored as several tsvector parts (tsvectorDocuments). A phrase or NEAR
 * (a leaf) matches within one part, which the parts' overlap makes exact; AND / OR / NOT combine
 * the leaves over the whole message, so they run in SQL across the message's parts:
 *   SELECT id FROM docs WHERE id IN (SELECT id FROM docs WHERE doc @@ $1::tsquery)   -- candidate, GIN
 *    GROUP BY id HAVING <condition(i => `bool_or(doc @@ $${i + 2}::tsquery)`)>
 */
export interface PartsQuery {
  /** A part of every matching message matches this (the OR of the leaves not under NOT). */
  candidate: string;
  /** One tsquery literal per leaf. */
  leaves: string[];
  /** The message-level condition, given the SQL that says "some part matches leaf i". */
  condition(leaf: (i: number) => string): string;
}

export function toPartsQuery(q: SearchQuery): PartsQuery | null {
  if (q.kind === 'nothing') return null;
  const leaves: string[] = [];
  const positive: string[] = [];
  const shape = (n: SearchQuery, negated: boolean): ((leaf: (i: number) => string) => string) => {
    switch (n.kind) {
      case 'phrase':
      case 'near': {
        const i = leaves.push(toTsquery(n)!) - 1;
        if (!negated) positive.push(leaves[i]!);
        return (leaf) => leaf(i);
      }
      case 'and':
      case 'or': {
        const parts = n.operands.map((o) => shape(o, negated));
        return (leaf) => `(${parts.map((p) => p(leaf)).join(n.kind === 'and' ? ' AND ' : ' OR ')})`;
      }
      case 'not': {
        const include = shape(n.include, negated);
        const exclude = shape(n.exclude, true);
        return (leaf) => `(${include(leaf)} AND NOT ${exclude(leaf)})`;
      }
      case 'nothing':
        throw new Error('unreachable: simplify() removes nothing below the top');
    }
  };
  const condition = shape(q, false);
  return { candidate: positive.length === 1 ? positive[0]! : `(${positive.join(' | ')})`, leaves, condition };
}

// ---------------------------------------------------------------------------------------------
// Indexed text and PostgreSQL tsvector parts.

/**
 * The text message_fts indexes for a message's stored content (the JSON text in messages.content),
 * as migration 5's message_search_text view takes it: every JSON string except those under the keys
 * in UNINDEXED_KEYS, in document order, joined by newlines; content that is not JSON, as it is.
 * (JSON.parse visits integer-like object keys first and keeps only the last of duplicate keys, where
 * SQLite's json_tree keeps the text's order and both. Content the store wrote came from
 * JSON.stringify, which already puts such keys first and has no duplicates: only a row edited by
 * hand can differ, and then only in the order of its lines.)
 */
export function searchableText(content: string): string {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    return content;
  }
  const strings: string[] = [];
  const walk = (v: unknown, key: string | null): void => {
    if (typeof v === 'string') {
      if (key === null || !UNINDEXED_KEYS.includes(key)) strings.push(v);
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item, null);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) walk(item, k);
    }
  };
  walk(value, null);
  return strings.join('\n');
}

/** PostgreSQL keeps at most this many positions per lexeme in a tsvector (MAXNUMPOS). */
const PG_MAX_POSITIONS_PER_LEXEME = 256;
/** A lexeme is at most 2046 bytes (MAXSTRLEN - 1). */
const PG_MAX_LEXEME_BYTES = 2046;
/** Positions above 16383 collapse to 16383; a part stays far below. */
const MAX_PART_TOKENS = 8192;
/** A tsvector may take 1 MB; a part stays at half of that (estimated as PostgreSQL lays it out). */
const MAX_PART_BYTES = 512 * 1024;
/** Consecutive parts share this many tokens, so every match of at most MAX_MATCH_SPAN tokens lies whole in one part. */
export const PART_OVERLAP_TOKENS = MAX_MATCH_SPAN;

/** The token cut to its longest UTF-8 prefix of at most 2046 bytes, on a character boundary. */
function pgToken(token: string): string {
  if (Buffer.byteLength(token) <= PG_MAX_LEXEME_BYTES) return token;
  let out = '';
  let bytes = 0;
  for (const ch of token) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > PG_MAX_LEXEME_BYTES) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/**
 * The indexed text as tsvector input literals (`'tok':1,5 'other':2`), one per part. Tokens are
 * searchTokens(text); a token over 2046 bytes keeps its first 2046 (a query token is at most 256
 * characters, so an exact match could not reach the cut and a prefix match is unchanged). A part
 * ends before any lexeme would get a 257th position, at 8192 tokens, or at ~512 KB; the next part
 * starts PART_OVERLAP_TOKENS tokens before that end. Empty text: no parts.
 */
export function tsvectorDocuments(text: string): string[] {
  const tokens = searchTokens(text).map(pgToken);
  const parts: string[] = [];
  let start = 0;
  while (start < tokens.length) {
    const positions = new Map<string, number[]>();
    let bytes = 0;
    let end = start;
    for (; end < tokens.length && end - start < MAX_PART_TOKENS; end++) {
      const token = tokens[end]!;
      const seen = positions.get(token);
      const cost = seen ? 2 : 4 + Buffer.byteLength(token) + 4;
      if (seen?.length === PG_MAX_POSITIONS_PER_LEXEME || bytes + cost > MAX_PART_BYTES) break;
      bytes += cost;
      if (seen) seen.push(end - start + 1);
      else positions.set(token, [end - start + 1]);
    }
    parts.push([...positions].map(([token, at]) => `${pgLexeme(token)}:${at.join(',')}`).join(' '));
    if (end >= tokens.length) break;
    start = end - PART_OVERLAP_TOKENS;
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------
// Snippets.

/** A phrase instance: which phrase (numbered left to right in the query, as FTS5 numbers them), where, how long. */
interface Instance {
  phrase: number;
  at: number;
  size: number;
}

function phraseAt(tokens: readonly string[], p: Phrase, at: number): boolean {
  return p.tokens.every((t, k) => {
    const token = tokens[at + k];
    return token !== undefined && (p.prefix && k === p.tokens.length - 1 ? token.startsWith(t) : token === t);
  });
}

/**
 * The phrase instances FTS5 would report (xInst) for a document that matches: each phrase's
 * occurrences, NEAR's only where the other phrase is near, and none from a part of the query that
 * did not match (the other side of an OR, an AND that failed, the excluded side of a NOT).
 * Sorted by position, then phrase number.
 */
function instancesOf(tokens: readonly string[], q: SearchQuery): Instance[] {
  let next = 0;
  const visit = (n: SearchQuery): Instance[] | null => {
    switch (n.kind) {
      case 'phrase': {
        const phrase = next++;
        const found: Instance[] = [];
        for (let at = 0; at < tokens.length; at++) if (phraseAt(tokens, n, at)) found.push({ phrase, at, size: n.tokens.length });
        return found.length > 0 ? found : null;
      }
      case 'near': {
        const [a, b] = [visit(n.phrases[0]) ?? [], visit(n.phrases[1]) ?? []];
        const near = (x: Instance, y: Instance): boolean => (y.at >= x.at ? y.at - x.at <= x.size + n.distance : x.at - y.at <= y.size + n.distance);
        const keptA = a.filter((x) => b.some((y) => near(x, y)));
        const keptB = b.filter((y) => a.some((x) => near(x, y)));
        return keptA.length > 0 ? [...keptA, ...keptB] : null;
      }
      case 'and': {
        const all = n.operands.map(visit);
        return all.every((r) => r !== null) ? all.flatMap((r) => r!) : null;
      }
      case 'or': {
        const all = n.operands.map(visit).filter((r) => r !== null);
        return all.length > 0 ? all.flat() : null;
      }
      case 'not': {
        const include = visit(n.include);
        return include !== null && visit(n.exclude) === null ? include : null;
      }
      case 'nothing':
        return null;
    }
  };
  return (visit(q) ?? []).sort((x, y) => x.at - y.at || x.phrase - y.phrase);
}

/** fts5SnippetScore: 1000 per phrase first seen in the window from `from`, 1 per further instance; and the centred start. */
function windowScore(instances: readonly Instance[], from: number, width: number, docSize: number): { score: number; start: number } {
  const seen = new Set<number>();
  let score = 0;
  let first = -1;
  let last = 0;
  // Instances are sorted by position: only those in [from, from + width) count.
  let lo = 0;
  let hi = instances.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (instances[mid]!.at < from) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < instances.length && instances[k]!.at < from + width; k++) {
    const i = instances[k]!;
    score += seen.has(i.phrase) ? 1 : 1000;
    seen.add(i.phrase);
    if (first < 0) first = i.at;
    last = i.at + i.size;
  }
  let start = first - Math.trunc((width - (last - first)) / 2);
  if (start + width > docSize) start = docSize - width;
  return { score, start: Math.max(0, start) };
}

/** Tokens that begin a sentence (fts5SentenceFinderCb): the first, and any after white space that follows '.' or ':'. */
function sentenceStarts(text: string, tokens: readonly TextToken[]): number[] {
  const starts: number[] = [];
  tokens.forEach((t, i) => {
    if (i === 0) return void starts.push(0);
    let j = t.start - 1;
    while (j >= 0 && ' \t\n\r'.includes(text[j]!)) j--;
    if (j !== t.start - 1 && j >= 0 && (text[j] === '.' || text[j] === ':')) starts.push(i);
  });
  return starts;
}

/** The FTS5 snippet() window start for these instances: best score, sentence starts preferred (+100, +120 at the top). */
function snippetStart(text: string, tokens: readonly TextToken[], instances: readonly Instance[], width: number): number {
  const starts = sentenceStarts(text, tokens);
  let best = 0;
  let bestStart = 0;
  let k = 0; // the sentence that holds the instance: instances come in position order
  for (const inst of instances) {
    const w = windowScore(instances, inst.at, width, tokens.length);
    if (w.score > best) {
      best = w.score;
      bestStart = w.start;
    }
    if (starts.length > 0 && tokens.length > width) {
      while (k < starts.length - 1 && starts[k + 1]! <= inst.at) k++;
      if (starts[k]! < inst.at) {
        const score = windowScore(instances, starts[k]!, width, tokens.length).score + (starts[k] === 0 ? 120 : 100);
        if (score > best) {
          best = score;
          bestStart = starts[k]!;
        }
      }
    }
  }
  return bestStart;
}

/**
 * FTS5's snippet(col, '[', ']', '…', tokens) for `text` and a query it matches, ported step for
 * step (fts5SnippetFunction, fts5HighlightCb): the best window of `tokens` tokens, phrase instances
 * in [ ] (overlapping ones merged), … where text was cut; then bounded to `maxChars` characters.
 */
export function snippetOf(text: string, q: SearchQuery, opts: { tokens?: number; maxChars?: number } = {}): string {
  const width = opts.tokens ?? 16;
  const maxChars = opts.maxChars ?? 400;
  const spans = textTokens(text);
  const tokens = spans.map((t) => t.token);
  const instances = instancesOf(tokens, q);
  const start = snippetStart(text, spans, instances, width);
  const end = start + width - 1;
  // Coalesced instances (fts5CInstIter): overlapping ones are one highlight.
  const ranges: { from: number; to: number }[] = [];
  for (const i of instances) {
    const last = ranges[ranges.length - 1];
    if (last && i.at <= last.to) last.to = Math.max(last.to, i.at + i.size - 1);
    else ranges.push({ from: i.at, to: i.at + i.size - 1 });
  }
  let r = ranges.findIndex((x) => x.from >= start);
  if (r < 0) r = ranges.length;
  const range = (): { from: number; to: number } => ranges[r] ?? { from: -1, to: -1 };
  let out = start > 0 ? '…' : '';
  let off = 0;
  let open = false;
  for (let pos = start; pos <= end && pos < spans.length; pos++) {
    const t = spans[pos]!;
    if (start > 0 && pos === start) off = t.start;
    if (open && (pos <= range().from || range().from < 0) && t.start > off) {
      out += ']';
      open = false;
    }
    if (pos === range().from && !open) {
      out += `${text.slice(off, t.start)}[`;
      off = t.start;
      open = true;
    }
    if (pos === range().to) {
      if (!open) {
        out += '[';
        open = true;
      }
      out += text.slice(off, t.end);
      off = t.end;
      r++;
    }
    if (pos === end) {
      if (open) {
        if (range().from >= 0 && pos >= range().from) {
          out += text.slice(off, t.end);
          off = t.end;
        }
        out += ']';
        open = false;
      }
      out += text.slice(off, t.end);
      off = t.end;
    }
  }
  if (open) out += ']';
  out += end >= spans.length - 1 ? text.slice(off) : '…';
  return out.length > maxChars ? `${out.slice(0, maxChars - 1)}…` : out;
}
