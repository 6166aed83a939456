// Capabilities and immutable capability snapshots.
//
// Syntax (a grant, or a capability an effect requires):
//   name            namespace.verb[.more]       lowercase segments [a-z][a-z0-9_-]*, at least two
//   name:target     e.g. mcp.call:github, fs.read:docs/guide.md
//                   target segments are separated by '/', each [letters digits . _ ~ @ + = , % -],
//                   never empty, never '.' or '..' (so a textual prefix is a real path prefix)
//   secret:NAME     NAME is [A-Z][A-Z0-9_]{0,63}; the only form of the secret namespace
//   wildcards       grants only, and only as one whole trailing segment: '*', 'fs.*', 'mcp.call:*',
//                   'fs.read:docs/*'. '**' is accepted as a synonym of '*' and normalized to it:
//                   either one matches one or more further segments at any depth.
// Matching is by whole segments: 'fs.*' matches 'fs.read' and 'fs.read:docs/a', never 'fsx.read';
// 'fs.read' matches only 'fs.read' (not 'fs.reader', not 'fs.read:x'). A 'secret:NAME'
// requirement matches only the exact grant 'secret:NAME' ("exact-default lookup"): no wildcard,
// not even '*', ever grants a secret, so 'secret:*' is rejected when parsed.
import { createHash } from 'node:crypto';
import { CapabilityDeniedError, CapabilitySyntaxError } from './errors.js';

export { CapabilityDeniedError, CapabilitySyntaxError } from './errors.js';

export type CapabilityRole = 'grant' | 'requirement';

export interface Capability {
  /** Canonical text: trimmed, NFC, '**' written as '*'. */
  readonly text: string;
  readonly kind: 'effect' | 'secret' | 'any';
  /** Name segments, then ':' (when a target follows), then target segments. '*' only last. */
  readonly tokens: readonly string[];
  readonly wildcard: boolean;
}

const NAME_SEGMENT = /^[a-z][a-z0-9_-]*$/;
const TARGET_SEGMENT = /^[\p{L}\p{N}._~@+=,%-]+$/u;
// The core's SECRET_NAME_PATTERN (src/core/names.ts) is the same rule; policy never imports core.
const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const MAX_LENGTH = 512;
const TARGET_MARK = ':';

const isWild = (s: string): boolean => s === '*' || s === '**';

/** Parses one capability. Grants may end in a wildcard segment; requirements never may. */
export function parseCapability(input: unknown, role: CapabilityRole = 'grant', where?: string): Capability {
  if (typeof input !== 'string') {
    const got = input === null ? 'null' : typeof input;
    throw new CapabilitySyntaxError(String(input), `expected a string, got ${got}`, 'write the capability as a string such as "fs.read"', where);
  }
  const fail = (reason: string, fix: string): never => {
    throw new CapabilitySyntaxError(input, reason, fix, where);
  };
  const text = input.trim().normalize('NFC');
  if (text === '') fail('it is empty', 'name a capability such as "terminal.exec", or remove the entry');
  if (text.length > MAX_LENGTH) fail(`it is longer than ${MAX_LENGTH} characters`, 'use a shorter target or a wildcard grant');
  const noWildcardInRequirement = (): never =>
    fail(
      'a required capability names one concrete effect, so it cannot contain a wildcard',
      'require the exact capability (e.g. "mcp.call:github"); wildcards belong in grants',
    );

  if (isWild(text)) {
    if (role === 'requirement') noWildcardInRequirement();
    return freeze({ text: '*', kind: 'any', tokens: ['*'], wildcard: true });
  }

  const colon = text.indexOf(':');
  const namePart = colon < 0 ? text : text.slice(0, colon);
  const targetPart = colon < 0 ? undefined : text.slice(colon + 1);
  const nameSegments = namePart.split('.');

  if (nameSegments[0] === 'secret') {
    if (nameSegments.length !== 1 || targetPart === undefined) {
      fail('the secret namespace has exactly one form, secret:NAME', 'write e.g. "secret:GITHUB_TOKEN"');
    }
    const name = targetPart as string;
    if (name.includes('*')) {
      fail(
        'secret capabilities are matched exactly, so a wildcard secret grant would never grant anything',
        'list each secret the core may use, e.g. "secret:GITHUB_TOKEN"',
      );
    }
    if (!SECRET_NAME.test(name)) {
      fail(`secret name ${JSON.stringify(name)} is not of the form [A-Z][A-Z0-9_]{0,63}`, 'use the environment-variable style name of the secret, e.g. "secret:GITHUB_TOKEN"');
    }
    return freeze({ text: `secret:${name}`, kind: 'secret', tokens: ['secret', TARGET_MARK, name], wildcard: false });
  }

  const tokens: string[] = [];
  let wildcard = false;
  nameSegments.forEach((seg, i) => {
    const last = i === nameSegments.length - 1;
    if (isWild(seg)) {
      if (role === 'requirement') noWildcardInRequirement();
      if (!last || targetPart !== undefined) {
        fail('a wildcard must be the last segment', `end the grant at the wildcard, e.g. "${[...nameSegments.slice(0, i), '*'].join('.')}"`);
      }
      wildcard = true;
      tokens.push('*');
      return;
    }
    if (seg.includes('*')) {
      if (role === 'requirement') noWildcardInRequirement();
      fail(
        `a wildcard must be a whole trailing segment, not part of ${JSON.stringify(seg)} (matching compares whole segments)`,
        `grant "${[...nameSegments.slice(0, i), '*'].join('.')}" or name the capability exactly`,
      );
    }
    if (seg === '') fail('it has an empty name segment (two dots, or a dot at an end)', 'remove the extra dot');
    if (!NAME_SEGMENT.test(seg)) {
      const lower = seg.toLowerCase();
      const fix = NAME_SEGMENT.test(lower) ? `write "${lower}" (name segments are lowercase)` : 'use lowercase letters, digits, "_" and "-", starting with a letter';
      fail(`name segment ${JSON.stringify(seg)} is not [a-z][a-z0-9_-]*`, fix);
    }
    tokens.push(seg);
  });
  if (nameSegments.length < 2) {
    fail('a capability name is namespace.verb (two segments at least)', `write e.g. "${namePart}.exec" or "${namePart}.*"`);
  }

  if (targetPart !== undefined) {
    if (targetPart === '') fail("the target after ':' is empty", "remove the ':' or name a target, e.g. \"mcp.call:github\"");
    tokens.push(TARGET_MARK);
    const targetSegments = targetPart.split('/');
    targetSegments.forEach((seg, i) => {
      const last = i === targetSegments.length - 1;
      const prefix = [...targetSegments.slice(0, i), '*'].join('/');
      if (isWild(seg)) {
        if (role === 'requirement') noWildcardInRequirement();
        if (!last) fail('a wildcard must be the last segment of the target', `end the grant at the wildcard, e.g. "${namePart}:${prefix}"`);
        wildcard = true;
        tokens.push('*');
        return;
      }
      if (seg.includes('*')) {
        if (role === 'requirement') noWildcardInRequirement();
        fail(
          `a wildcard must be a whole trailing segment, not part of ${JSON.stringify(seg)} (matching compares whole segments)`,
          `grant "${namePart}:${prefix}" for every target there, or name the target exactly`,
        );
      }
      if (seg === '') fail("the target has an empty segment (a leading, trailing or doubled '/')", 'write a relative path without empty segments, e.g. "docs/guide.md"');
      if (seg === '.' || seg === '..') fail(`the target contains a ${JSON.stringify(seg)} segment`, 'normalize the path first; capability targets are plain relative paths');
      if (!TARGET_SEGMENT.test(seg)) {
        fail(`target segment ${JSON.stringify(seg)} contains a character outside letters, digits and . _ ~ @ + = , % -`, 'rename the target, or grant its parent with a trailing wildcard');
      }
      tokens.push(seg);
    });
  }

  const mark = tokens.indexOf(TARGET_MARK);
  const canonical =
    mark < 0 ? tokens.join('.') : `${tokens.slice(0, mark).join('.')}:${tokens.slice(mark + 1).join('/')}`;
  return freeze({ text: canonical, kind: 'effect', tokens, wildcard });
}

function freeze(c: { text: string; kind: Capability['kind']; tokens: string[]; wildcard: boolean }): Capability {
  Object.freeze(c.tokens);
  return Object.freeze(c);
}

/**
 * Whether `pattern` covers `required` by segment: equal token lists, or a wildcard pattern whose
 * fixed prefix is a proper prefix of `required`. No secret rule here: callers that grant decide
 * that (see CapabilitySnapshot.allows); tightening rules may use this broad form on purpose.
 */
export function capabilityCovers(pattern: Capability, required: Capability): boolean {
  const p = pattern.tokens;
  const r = required.tokens;
  if (!pattern.wildcard) return p.length === r.length && p.every((t, i) => t === r[i]);
  const fixed = p.length - 1;
  if (r.length <= fixed) return false;
  for (let i = 0; i < fixed; i++) if (p[i] !== r[i]) return false;
  return true;
}

/** Whether a grant authorizes a requirement: `capabilityCovers`, except secrets need the exact grant. */
export function grantAllows(grant: Capability, required: Capability): boolean {
  if (required.kind === 'secret') return grant.kind === 'secret' && grant.text === required.text;
  return capabilityCovers(grant, required);
}

/** An immutable, normalized, sorted, de-duplicated set of grants with a stable sha256 digest. */
export class CapabilitySnapshot {
  /** Canonical grant texts, sorted by UTF-16 code unit, without duplicates. */
  readonly grants: readonly string[];
  /** sha256 (lowercase hex) of the versioned canonical form; equal grant sets give equal digests. */
  readonly digest: string;
  private readonly exact: ReadonlySet<string>;
  private readonly wildcards: readonly Capability[];
  private readonly parsed: readonly Capability[];
  /** Answers already computed: an effect's requirement is checked on every call. Bounded. */
  private readonly answers = new Map<string, boolean>();

  private constructor(parsed: Capability[]) {
    const byText = new Map<string, Capability>();
    for (const c of parsed) byText.set(c.text, c);
    const sorted = [...byText.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    this.grants = Object.freeze(sorted);
    this.parsed = Object.freeze(sorted.map((t) => byText.get(t) as Capability));
    this.exact = new Set(this.parsed.filter((c) => !c.wildcard).map((c) => c.text));
    this.wildcards = Object.freeze(this.parsed.filter((c) => c.wildcard));
    this.digest = createHash('sha256').update(`capability-snapshot/v1\n${JSON.stringify(sorted)}`).digest('hex');
    Object.freeze(this);
  }

  /** Parses every grant (errors name the index and the grant) and builds the snapshot. */
  static from(grants: Iterable<string>, where = 'grants'): CapabilitySnapshot {
    if (typeof grants === 'string' || grants === null || typeof (grants as { [Symbol.iterator]?: unknown })?.[Symbol.iterator] !== 'function') {
      throw new CapabilitySyntaxError(String(grants), 'the grants must be a list of strings', 'pass an array such as ["terminal.exec", "mcp.call:github"]', where);
    }
    const parsed: Capability[] = [];
    let i = 0;
    for (const g of grants) {
      parsed.push(parseCapability(g, 'grant', `${where}[${i}]`));
      i++;
    }
    return new CapabilitySnapshot(parsed);
  }

  static empty(): CapabilitySnapshot {
    return new CapabilitySnapshot([]);
  }

  get size(): number {
    return this.grants.length;
  }

  /**
   * Whether this snapshot authorizes `required` (a concrete capability; a wildcard or malformed
   * requirement throws CapabilitySyntaxError, since it is a caller bug, and throwing fails closed).
   */
  allows(required: string): boolean {
    const known = this.answers.get(required);
    if (known !== undefined) return known;
    const req = parseCapability(required, 'requirement', 'required capability');
    let ok: boolean;
    if (this.exact.has(req.text)) ok = true;
    else if (req.kind === 'secret') ok = false; // exact-default lookup: no wildcard grants a secret
    else ok = this.wildcards.some((g) => capabilityCovers(g, req));
    if (this.answers.size < 4096) this.answers.set(required, ok);
    return ok;
  }

  /** Throws CapabilityDeniedError (naming the nearest grants) unless `required` is allowed. */
  require(required: string): void {
    if (!this.allows(required)) {
      const req = parseCapability(required, 'requirement');
      throw new CapabilityDeniedError(req.text, this.nearest(req.text), this.digest);
    }
  }

  /** Up to three grants sharing the longest leading segment run with `required` (for messages). */
  nearest(required: string, limit = 3): string[] {
    const req = parseCapability(required, 'requirement');
    let best = 0;
    const scored = this.parsed.map((g) => {
      let n = 0;
      while (n < g.tokens.length && n < req.tokens.length && g.tokens[n] === req.tokens[n]) n++;
      if (n > best) best = n;
      return { g, n };
    });
    if (best === 0) return [];
    return scored.filter((s) => s.n === best).slice(0, limit).map((s) => s.g.text);
  }

  equals(other: CapabilitySnapshot): boolean {
    return other.digest === this.digest;
  }

  toJSON(): { grants: readonly string[]; digest: string } {
    return { grants: this.grants, digest: this.digest };
  }
}
