// Splits a command line into words and the operators between them, over a deliberately small
// subset of POSIX sh. Anything outside that subset is refused with its reason, never guessed at.
import { show } from './verdict.js';

export interface Word {
  /** As written, quotes included: the audit view shows exactly what the shell receives. */
  raw: string;
  /** After quote removal; `$NAME` expansions are kept verbatim. */
  text: string;
  /** Any quote or backslash: a quoted program name bypasses functions/aliases, so it is refused. */
  quoted: boolean;
  /** Contains `$NAME`/`${NAME}` outside single quotes: its value is unknown here. */
  expands: boolean;
  /** Contains an unquoted `*`, `?` or `[`: the shell may turn it into other words (file names). */
  globs: boolean;
  /** Starts with an unquoted `~`: the shell replaces it with a home directory. */
  tilde: boolean;
}

type Op = '&&' | '||' | ';' | '|' | '\n';
type Token = { word: Word } | { op: Op };

/** Thrown inside the tokenizer; caught by classifyScript and turned into an 'other' verdict. */
export class Refusal {
  constructor(readonly reason: string) {}
}

function refuse(reason: string): never {
  throw new Refusal(reason);
}

const NAME_START = /[A-Za-z_]/;
const NAME_CHAR = /[A-Za-z0-9_]/;
/** `$?`, `$1`, `$@`…: plain expansions that cannot run anything. */
const SPECIAL_PARAM = /[0-9?#$!@*-]/;
/** Characters that end an unquoted word (for recognizing a standalone `{}`). */
const WORD_END = new Set([' ', '\t', '\n', ';', '&', '|', '<', '>', '(', ')']);

interface WordBuilder extends Omit<Word, 'raw'> {
  start: number;
}

export function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let w: WordBuilder | null = null;
  const begin = (i: number): WordBuilder =>
    (w ??= { start: i, text: '', quoted: false, expands: false, globs: false, tilde: false });
  const end = (i: number): void => {
    if (w === null) return;
    const { start, ...rest } = w;
    tokens.push({ word: { raw: s.slice(start, i), ...rest } });
    w = null;
  };
  const op = (o: Op): void => {
    tokens.push({ op: o });
  };

  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    const next = s[i + 1];
    switch (c) {
      case ' ':
      case '\t':
        end(i);
        i++;
        continue;
      case '\n':
        // A newline separates commands exactly like ';'.
        end(i);
        op('\n');
        i++;
        continue;
      case ';':
        end(i);
        if (next === ';') refuse("';;' is case syntax, not a simple command");
        op(';');
        i++;
        continue;
      case '&':
        end(i);
        if (next === '&') {
          op('&&');
          i += 2;
          continue;
        }
        if (next === '>') refuse("redirection '&>' writes a file");
        refuse("'&' runs a command in the background, beyond the supervised lifetime");
      case '|':
        end(i);
        if (next === '|') {
          op('||');
          i += 2;
          continue;
        }
        if (next === '&') refuse("'|&' redirects stderr into the pipe");
        op('|');
        i++;
        continue;
      case '<':
        refuse(lessThanReason(s, i));
      case '>':
        // Every redirection is refused, /dev/null and descriptor copies included: telling
        // harmless targets apart needs a bigger parser, and a wrong guess writes a file.
        refuse(greaterThanReason(s, i));
      case '(':
      case ')':
        refuse(`'${c}' starts a subshell or group, which is not a simple command`);
      case '`':
        refuse('backticks run a command substitution');
      case '{':
        // `{}` alone is a literal word (find's placeholder); any other brace is a group or a
        // brace expansion, which can assemble a program name out of pieces.
        if (w === null && next === '}' && (i + 2 >= s.length || WORD_END.has(s[i + 2]!))) {
          begin(i).text += '{}';
          i += 2;
          continue;
        }
        refuse(`'{' starts a brace group or expansion`);
      case '}':
        refuse(`'}' ends a brace group or expansion`);
      case '#':
        if (w === null) refuse("'#' starts a comment, which hides text from the audit view");
        begin(i).text += c;
        i++;
        continue;
      case '\\': {
        if (next === undefined) refuse('a trailing backslash is an incomplete escape');
        if (next === '\n') refuse('a backslash-newline continues the line across the audit view');
        const b = begin(i);
        b.text += next;
        b.quoted = true;
        i += 2;
        continue;
      }
      case "'": {
        const close = s.indexOf("'", i + 1);
        if (close < 0) refuse('unbalanced single quote');
        const b = begin(i);
        b.text += s.slice(i + 1, close);
        b.quoted = true;
        i = close + 1;
        continue;
      }
      case '"':
        i = readDoubleQuoted(s, i, begin(i));
        continue;
      case '$':
        i = readDollar(s, i, begin(i), false);
        continue;
      case '*':
      case '?':
      case '[': {
        const b = begin(i);
        b.globs = true;
        b.text += c;
        i++;
        continue;
      }
      case '~': {
        const fresh = w === null;
        const b = begin(i);
        if (fresh) b.tilde = true;
        b.text += c;
        i++;
        continue;
      }
      default:
        begin(i).text += c;
        i++;
        continue;
    }
  }
  end(s.length);
  return tokens;
}

function lessThanReason(s: string, i: number): string {
  if (s[i + 1] === '(') return "process substitution '<(' runs a command";
  if (s.startsWith('<<<', i)) return "here-string '<<<' feeds input to the command";
  if (s[i + 1] === '<') return "here-document '<<' feeds input to the command";
  return "redirection '<' reads a file into the command";
}

function greaterThanReason(s: string, i: number): string {
  if (s[i + 1] === '(') return "process substitution '>(' runs a command";
  if (s[i + 1] === '>') return "redirection '>>' appends to a file";
  if (s[i + 1] === '&') return "redirection '>&' redirects a descriptor";
  if (s[i + 1] === '|') return "redirection '>|' writes a file";
  return "redirection '>' writes a file";
}

/** Reads `"…"` starting at the opening quote; returns the index after the closing quote. */
function readDoubleQuoted(s: string, open: number, b: WordBuilder): number {
  b.quoted = true;
  let i = open + 1;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '"') return i + 1;
    if (c === '\\') {
      const next = s[i + 1];
      if (next === '\n') refuse('a backslash-newline continues the line across the audit view');
      if (next === '"' || next === '\\' || next === '$' || next === '`') {
        b.text += next;
        i += 2;
        continue;
      }
      // Any other backslash is literal inside double quotes.
      b.text += c;
      i++;
      continue;
    }
    if (c === '`') refuse('backticks inside double quotes run a command substitution');
    if (c === '$') {
      i = readDollar(s, i, b, true);
      continue;
    }
    b.text += c;
    i++;
  }
  refuse('unbalanced double quote');
}

/** Reads a `$…` at index i; only plain parameter expansions pass. Returns the next index. */
function readDollar(s: string, i: number, b: WordBuilder, inDoubleQuotes: boolean): number {
  const next = s[i + 1];
  if (next === '(') refuse("command substitution '$(' runs a command");
  if (next === '[') refuse("arithmetic '$[' can run code through array subscripts");
  if (next === '{') {
    const close = s.indexOf('}', i + 2);
    if (close < 0) refuse("unbalanced '${'");
    const inner = s.slice(i + 2, close);
    // Operators (`:=`, `/`, `!`, subscripts…) can assign, or evaluate arithmetic that runs code.
    if (!/^(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[?#$!@*-])$/.test(inner)) {
      refuse(`parameter expansion ${show(`\${${inner}}`, 24)} uses operators`);
    }
    b.text += s.slice(i, close + 1);
    b.expands = true;
    return close + 1;
  }
  if (!inDoubleQuotes && (next === "'" || next === '"')) refuse(`'$${next}' quoting is not supported`);
  if (next !== undefined && NAME_START.test(next)) {
    let j = i + 2;
    while (j < s.length && NAME_CHAR.test(s[j]!)) j++;
    b.text += s.slice(i, j);
    b.expands = true;
    return j;
  }
  if (next !== undefined && SPECIAL_PARAM.test(next)) {
    b.text += s.slice(i, i + 2);
    b.expands = true;
    return i + 2;
  }
  // A `$` before anything else is a literal dollar sign.
  b.text += '$';
  return i + 1;
}

/** Groups tokens into simple commands, enforcing the grammar `cmd (op cmd)* [;|\n]`. */
export function splitParts(tokens: Token[]): Word[][] {
  const parts: Word[][] = [];
  let cur: Word[] = [];
  let dangling: Op | null = null;
  for (const t of tokens) {
    if ('word' in t) {
      cur.push(t.word);
      dangling = null;
      continue;
    }
    if (cur.length === 0) {
      // Blank lines and a newline after '&&'/'|' are ordinary shell layout.
      if (t.op === '\n') continue;
      refuse(`'${t.op}' has no command before it`);
    }
    parts.push(cur);
    cur = [];
    if (t.op === '&&' || t.op === '||' || t.op === '|') dangling = t.op;
  }
  if (cur.length > 0) parts.push(cur);
  else if (dangling !== null) refuse(`'${dangling}' has no command after it`);
  if (parts.length === 0) refuse('empty command');
  return parts;
}
