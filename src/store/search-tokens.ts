// The tokenizer of message_fts (FTS5 `unicode61 remove_diacritics 2`, migration 5), ported to
// TypeScript so that the PostgreSQL control plane indexes and queries exactly the tokens SQLite
// does (decision 128). The rules are SQLite's, step for step (fts5_tokenize.c, fts5UnicodeTokenize):
//   - a token character is one whose category (SQLite's own table, not the JS engine's Unicode
//     version) is L*, N* or Co, or is unassigned in SQLite's table; everything else separates;
//   - inside a token the combining diacritics U+0300..U+0331 (a fixed set) are kept and then dropped,
//     but they never start one;
//   - each character is case-folded (SQLite's CaseFolding table, BMP and Deseret only) and, with
//     remove_diacritics 2, a Latin letter with diacritics becomes its base letter;
//   - U+FFFE, U+FFFF and lone surrogates read as U+FFFD, a separator.
// The data tables are generated from the SQLite amalgamation (scripts/fts5-unicode-tables.mjs).
import { DIACRITIC_BASE, DIACRITIC_KEYS, DIACRITIC_MASKS, FOLD_ENTRIES, FOLD_OFFSETS, UNICODE_BLOCK, UNICODE_DATA, UNICODE_MAP } from './fts5-unicode-tables.js';

/** A token and where its characters are in the text (UTF-16 offsets, end exclusive). */
export interface TextToken {
  token: string;
  start: number;
  end: number;
}

/** SQLite's category numbers that `categories 'L* N* Co'` makes token characters (sqlite3Fts5UnicodeCatParse). */
const TOKEN_CATEGORIES = new Set([
  0, // unassigned in SQLite's table: the parser always sets it
  5, 6, 7, 8, 9, 30, // Ll Lm Lo Lt Lu LC
  13, 14, 15, // Nd Nl No
  31, // Co
]);

/** sqlite3Fts5UnicodeCategory. */
function category(cp: number): number {
  if (cp >= 1 << 20) return 0;
  let lo = UNICODE_BLOCK[cp >> 16]!;
  let hi = UNICODE_BLOCK[(cp >> 16) + 1]!;
  const key = cp & 0xffff;
  let found = -1;
  while (hi > lo) {
    const mid = (hi + lo) >> 1;
    if (key >= UNICODE_MAP[mid]!) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (found < 0) return 0;
  if (key >= UNICODE_MAP[found]! + (UNICODE_DATA[found]! >> 5)) return 0;
  const cat = UNICODE_DATA[found]! & 0x1f;
  if (cat !== 30) return cat;
  // Alternating upper/lower case runs.
  return (key - UNICODE_MAP[found]!) & 1 ? 5 : 9;
}

function isTokenChar(cp: number): boolean {
  return cp !== 0 && TOKEN_CATEGORIES.has(category(cp));
}

/** sqlite3Fts5UnicodeIsdiacritic. */
function isDiacritic(cp: number): boolean {
  if (cp < 768 || cp > 817) return false;
  return cp < 800 ? (DIACRITIC_MASKS[0] & (1 << (cp - 768))) !== 0 : (DIACRITIC_MASKS[1] & (1 << (cp - 800))) !== 0;
}

/** fts5_remove_diacritic with bComplex (remove_diacritics 2). 0 means "drop the character". */
function removeDiacritic(cp: number): number {
  const key = (cp << 3) | 7;
  let lo = 0;
  let hi = DIACRITIC_KEYS.length - 1;
  let found = 0;
  while (hi >= lo) {
    const mid = (hi + lo) >> 1;
    if (key >= DIACRITIC_KEYS[mid]!) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const entry = DIACRITIC_KEYS[found]!;
  return cp > (entry >> 3) + (entry & 7) ? cp : DIACRITIC_BASE[found]! & 0x7f;
}

/** sqlite3Fts5UnicodeFold(cp, 2) for a non-ASCII code point. */
function fold(cp: number): number {
  if (cp >= 65536) return cp >= 66560 && cp < 66600 ? cp + 40 : cp;
  let lo = 0;
  let hi = FOLD_ENTRIES.length / 3 - 1;
  let found = 0;
  while (hi >= lo) {
    const mid = (hi + lo) >> 1;
    if (cp - FOLD_ENTRIES[mid * 3]! >= 0) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  const first = FOLD_ENTRIES[found * 3]!;
  const flags = FOLD_ENTRIES[found * 3 + 1]!;
  const range = FOLD_ENTRIES[found * 3 + 2]!;
  let folded = cp;
  if (cp < first + range && (0x01 & flags & (first ^ cp)) === 0) folded = (cp + FOLD_OFFSETS[flags >> 1]!) & 0xffff;
  return removeDiacritic(folded);
}

/**
 * isTokenChar and fold for the whole BMP, computed once on first use (~65K lookups, a few ms):
 * tokenizing is then a table read per character. An entry is the folded code point (0: dropped)
 * in the low 21 bits, and whether the character starts a token and may continue one.
 */
let bmp: Uint32Array | null = null;
const IN_TOKEN = 0x200000;
const STARTS_TOKEN = 0x400000;
const FOLDED = 0x1fffff;
function bmpTable(): Uint32Array {
  if (bmp) return bmp;
  const table = new Uint32Array(0x10000);
  for (let cp = 0; cp < 0x10000; cp++) {
    const token = isTokenChar(cp);
    const folded = cp < 128 ? (cp >= 65 && cp <= 90 ? cp + 32 : cp) : fold(cp);
    table[cp] = folded | (token ? IN_TOKEN | STARTS_TOKEN : cp >= 128 && isDiacritic(cp) ? IN_TOKEN : 0);
  }
  return (bmp = table);
}

/** The code point SQLite's READ_UTF8 sees for the UTF-8 that Node encodes this JS character as. */
function codePointAt(text: string, i: number): number {
  const cp = text.codePointAt(i)!;
  if ((cp & 0xfffff800) === 0xd800 || cp === 0xfffe || cp === 0xffff) return 0xfffd;
  return cp;
}

/** Where a character may start a token, continue one, and what it folds to (non-BMP: computed each time). */
function classify(table: Uint32Array, cp: number): number {
  if (cp < 0x10000) return table[cp]!;
  return isTokenChar(cp) ? fold(cp) | IN_TOKEN | STARTS_TOKEN : 0;
}

/** The tokens of `text` with their spans, as message_fts's tokenizer yields them. */
export function textTokens(text: string): TextToken[] {
  const table = bmpTable();
  const out: TextToken[] = [];
  let i = 0;
  while (i < text.length) {
    const cp = codePointAt(text, i);
    if ((classify(table, cp) & STARTS_TOKEN) === 0) {
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const start = i;
    // Most tokens fold to themselves: build a string only from the first character that changes.
    let token: string | null = null;
    while (i < text.length) {
      const c = codePointAt(text, i);
      const k = classify(table, c);
      if ((k & IN_TOKEN) === 0) break;
      const folded = k & FOLDED;
      const w = c > 0xffff ? 2 : 1;
      if (token === null && folded !== c) token = text.slice(start, i);
      if (token !== null && folded !== 0) token += String.fromCodePoint(folded);
      i += w;
    }
    out.push({ token: token ?? text.slice(start, i), start, end: i });
  }
  return out;
}

/** The tokens of `text`, lowercased and without diacritics, as FTS5 unicode61 remove_diacritics 2 yields them. */
export function searchTokens(text: string): string[] {
  return textTokens(text).map((t) => t.token);
}
