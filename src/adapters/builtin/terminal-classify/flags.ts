// Reading a program's arguments the way getopt does, and the flag rules the read-only checks are
// built from.
import { show } from './verdict.js';

interface FlagRule {
  /** Single-letter options, also inside clusters like `-rf`. */
  short?: string;
  /** Long options; any prefix counts, because getopt_long accepts unique abbreviations. */
  long?: readonly string[];
  /** Whole words (find's predicates). */
  exact?: readonly string[];
  what: string;
}

export function shortLetters(a: string): string {
  return a.length > 1 && a[0] === '-' && a[1] !== '-' ? a.slice(1) : '';
}

export function longName(a: string): string | null {
  if (!a.startsWith('--') || a.length === 2) return null;
  const eq = a.indexOf('=');
  return eq < 0 ? a.slice(2) : a.slice(2, eq);
}

export function flagRules(program: string, rules: readonly FlagRule[]): (args: string[]) => string | null {
  return (args) => {
    // Every word is scanned, option values and operands after `--` included: a false hit only
    // costs a prompt, while skipping a word that the program does parse as a flag would not.
    for (const a of args) {
      const letters = shortLetters(a);
      const long = longName(a);
      for (const r of rules) {
        const hit =
          (r.exact?.includes(a) ?? false) ||
          (r.short !== undefined && [...letters].some((ch) => r.short!.includes(ch))) ||
          (r.long !== undefined && long !== null && long !== '' && r.long.some((l) => l.startsWith(long)));
        if (hit) return `${program} with ${show(a)} ${r.what}`;
      }
    }
    return null;
  };
}

export function allOf(...checks: Array<(args: string[]) => string | null>): (args: string[]) => string | null {
  return (args) => {
    for (const c of checks) {
      const r = c(args);
      if (r !== null) return r;
    }
    return null;
  };
}

export const noArgs = (program: string, what: string) => (args: string[]): string | null =>
  args.length === 0 ? null : `${program} with arguments ${what}`;
