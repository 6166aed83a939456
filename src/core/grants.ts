// Capability grant syntax. The policy layer owns matching; the loader only refuses what cannot mean anything.
import { SECRET_NAME_PATTERN } from './names.js';

/** A grant split into its parts: `namespace.verb[:target]`, or `secret:NAME`. */
export interface GrantParts {
  readonly namespace: string;
  /** null only for `secret:NAME`. */
  readonly verb: string | null;
  readonly target: string | null;
  /** True when the grant ends in a whole `*` or `**` segment and matches by prefix. */
  readonly wildcard: boolean;
}

export type GrantCheck = { readonly ok: true; readonly parts: GrantParts } | { readonly ok: false; readonly message: string };

const MAX_GRANT_LENGTH = 256;
const HEAD = /^([a-z][a-z0-9_-]*)\.([a-z][a-z0-9_-]*|\*)(?::(.*))?$/s;
const TARGET_CHARS = /^[A-Za-z0-9_.@+=~,/*-]+$/;
const EXAMPLES = "e.g. 'terminal.exec', 'mcp.connect:github', 'fs.read:docs/**' or 'secret:GITHUB_TOKEN'";

/**
 * Checks one grant (or approval-rule capability pattern). `exact` refuses wildcards, for places
 * where a pattern makes no sense (a tool's dispatch capability).
 */
export function checkGrant(text: string, opts: { exact?: boolean } = {}): GrantCheck {
  const shown = quote(text);
  if (text.length === 0) return fail(`an empty string is not a capability; write one, ${EXAMPLES}`);
  if (text.length > MAX_GRANT_LENGTH) return fail(`a capability is at most ${MAX_GRANT_LENGTH} characters; shorten it`);
  if (text.startsWith('secret:') || text === 'secret' || text.startsWith('secret.')) return checkSecret(text, shown);
  if (text === '*' || text.startsWith('*')) {
    return fail(`${shown} grants everything; name the namespace, e.g. 'terminal.*' or 'mcp.connect:*'`);
  }
  const m = HEAD.exec(text);
  if (m === null) {
    const star = text.indexOf('*');
    if (star >= 0 && !/^[a-z][a-z0-9_-]*\.[a-z][a-z0-9_-]*(:|$)/.test(text)) {
      return fail(`${shown} puts '*' inside the namespace or verb; a wildcard must be a whole trailing segment, e.g. 'mcp.*' or 'mcp.connect:*'`);
    }
    return fail(`${shown} is not a capability: write namespace.verb or namespace.verb:target, lower-case namespace and verb, ${EXAMPLES}`);
  }
  const namespace = m[1] as string;
  const verb = m[2] as string;
  const target = m[3];
  if (verb === '*') {
    if (target !== undefined) return fail(`${shown} has a target after '*'; a wildcard must be the last segment, e.g. '${namespace}.*'`);
    return exactOnly(opts, shown, { namespace, verb, target: null, wildcard: true });
  }
  if (target === undefined) return { ok: true, parts: { namespace, verb, target: null, wildcard: false } };
  const problem = checkTarget(target, shown, `${namespace}.${verb}`);
  if (problem !== null) return fail(problem);
  return exactOnly(opts, shown, { namespace, verb, target, wildcard: target.endsWith('*') });
}

/**
 * True when `pattern` grants `capability` under prefix-wildcard semantics. Used by the loader only
 * to stop a tool listing its own dispatch gate; secrets never match a wildcard.
 */
export function grantCovers(pattern: string, capability: string): boolean {
  if (pattern === capability) return true;
  if (!pattern.endsWith('*') || capability.startsWith('secret:')) return false;
  return capability.startsWith(pattern.replace(/\*+$/, ''));
}

function checkSecret(text: string, shown: string): GrantCheck {
  if (!text.startsWith('secret:')) return fail(`${shown}: a secret grant is written 'secret:NAME', e.g. 'secret:GITHUB_TOKEN'`);
  const name = text.slice('secret:'.length);
  if (name.includes('*')) {
    return fail(`${shown} uses a wildcard, but secret grants are exact (secrets are looked up by exact name, never by prefix); list each secret, e.g. 'secret:GITHUB_TOKEN'`);
  }
  if (!SECRET_NAME_PATTERN.test(name)) {
    return fail(`${shown}: a secret name must match /^[A-Za-z_][A-Za-z0-9_]{0,127}$/, e.g. 'secret:GITHUB_TOKEN'`);
  }
  return { ok: true, parts: { namespace: 'secret', verb: null, target: name, wildcard: false } };
}

function checkTarget(target: string, shown: string, head: string): string | null {
  if (target.length === 0) return `${shown} has an empty target after ':'; remove the ':' or name a target, e.g. '${head}:github'`;
  if (!TARGET_CHARS.test(target)) {
    return `${shown} has characters a target may not hold (allowed: letters, digits and _ . @ + = ~ , / - *); no spaces or ':'`;
  }
  const star = target.indexOf('*');
  let fixed = target;
  if (star >= 0) {
    const run = target.slice(star);
    const before = star === 0 ? ':' : target[star - 1];
    if ((run !== '*' && run !== '**') || (before !== '/' && before !== '.' && before !== ':')) {
      return `${shown} puts '*' inside a segment; a wildcard must be a whole trailing segment ('*' or '**' after ':', '/' or '.'), e.g. '${head}:*' or '${head}:docs/**'`;
    }
    fixed = target.slice(0, star === 0 ? 0 : star - 1);
    if (fixed.length === 0) return null;
  }
  for (const seg of fixed.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') {
      return `${shown} has an empty, '.' or '..' path segment in its target; write a plain relative target, e.g. '${head}:docs/**'`;
    }
  }
  return null;
}

function exactOnly(opts: { exact?: boolean }, shown: string, parts: GrantParts): GrantCheck {
  if (opts.exact === true && parts.wildcard) return fail(`${shown} is a wildcard, but this capability must be exact; name one capability, e.g. 'tool.call:word_count'`);
  return { ok: true, parts };
}

function fail(message: string): GrantCheck {
  return { ok: false, message };
}

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}...` : s}'`;
}
