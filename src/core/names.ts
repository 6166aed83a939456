// Names that reach a model API or a process environment, checked once here for every file.
import { closestSpelling } from '../policy/rule-vocabulary.js';

/**
 * Tool and MCP server names. Model APIs accept tool names matching [a-zA-Z0-9_-]{1,64}; we take
 * the lower-case subset starting with a letter so a name is also a safe path segment, never
 * differs from another only by case, and `<server>_<tool>` prefixes stay readable.
 */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;
export const TOOL_NAME_RULE = 'must match /^[a-z][a-z0-9_-]{0,62}$/ (a lower-case letter, then up to 62 of a-z 0-9 _ -), because model APIs accept only [a-zA-Z0-9_-]{1,64}';

/**
 * Secret names are upper-case environment-variable style, so a declaration, a grant
 * (`secret:NAME`), a reference and a binding target read alike. One rule for all of them: the
 * policy's grant grammar (src/policy/capability.ts) uses the same pattern.
 */
export const SECRET_NAME_PATTERN = /^[A-Z][A-Z0-9_]{0,63}$/;
export const SECRET_NAME_RULE = 'must match /^[A-Z][A-Z0-9_]{0,63}$/ (an upper-case letter, then up to 63 of A-Z 0-9 _)';

/** Environment variable names an MCP stdio declaration may set (POSIX portable names). */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** HTTP header field names (RFC 9110 token characters). */
export const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}$/;

/** Built-in toolsets a core may choose in agent.yaml `toolsets`. The catalog maps each to its tools. */
export const BUILTIN_TOOLSETS = ['terminal', 'tasks', 'web', 'sessions', 'agents', 'evolve'] as const;
export type BuiltinToolset = (typeof BUILTIN_TOOLSETS)[number];

/** Upper bound for one file the loader reads; a core is configuration and small code, not data. */
export const MAX_CORE_FILE_BYTES = 256 * 1024;
/** Upper bounds for a whole core, so a hostile directory cannot make the loader walk or read forever. */
export const MAX_CORE_FILES = 1000;
export const MAX_CORE_TOTAL_BYTES = 16 * 1024 * 1024;
export const MAX_TOOL_DIR_DEPTH = 8;

/** A key that would touch an object's prototype if some later code copied it naively. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * The likeliest intended key, within a small edit distance; used only to suggest a spelling fix.
 * The same rule as the approval rules' suggestions (one bounded edit distance for the project).
 */
export const closest = (word: string, candidates: readonly string[]): string | undefined => closestSpelling(word, candidates);
