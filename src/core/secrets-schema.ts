// agent.yaml `secrets:` (named secrets and where their values live) and the bindings a tool asks
// for. The loader checks declarations only; values are read by src/secrets at bind time, never here.
// The forbidden-target list lives here, not in src/secrets, because the loader refuses a bad target
// at load time and core sits below secrets in the import layers; src/secrets re-exports it.
import * as path from 'node:path';
import { z } from 'zod';
import { ENV_NAME_PATTERN, SECRET_NAME_PATTERN, SECRET_NAME_RULE } from './names.js';

/** Declared secret names: the one secret-name rule (names.ts), shared with grants and references. */
export const SECRET_DECL_NAME_PATTERN = SECRET_NAME_PATTERN;
const NAME_RULE = SECRET_NAME_RULE;

/** Bounds of one binding's lifetime: the process holding the secret is stopped when it ends. */
export const MIN_TTL_MS = 1_000;
export const MAX_TTL_MS = 24 * 3600_000;
export const MAX_BINDINGS_PER_TOOL = 16;
export const MAX_SECRETS = 256;

/** Tools that accept `secrets:` bindings in their agent.yaml override. */
export const TOOLS_WITH_SECRET_BINDINGS: readonly string[] = ['terminal'];

export interface ForbiddenTargetFamily {
  readonly family: string;
  /** Upper-case names refused exactly. */
  readonly names: readonly string[];
  /** Upper-case prefixes: every name starting with one is refused. */
  readonly prefixes: readonly string[];
  readonly reason: string;
}

/**
 * Environment variables a secret may never be bound to. Rule: a secret is a credential, never a
 * program, a path, a library or options; a binding must not change what the approved command
 * runs, loads or trusts. Names compare case-insensitively everywhere (Windows variables are
 * case-insensitive, and a core must mean the same on every platform). A denylist cannot be
 * complete: programs read variables we do not know; see docs/security-model.md.
 */
export const FORBIDDEN_TARGETS: readonly ForbiddenTargetFamily[] = [
  {
    family: 'program lookup',
    names: ['PATH', 'PATHEXT', 'COMSPEC', 'SHELL'],
    prefixes: [],
    reason: 'decides which program runs for a name (PATH, PATHEXT and ComSpec on Windows, SHELL for programs that start a shell), so the command that was approved would run something else',
  },
  {
    family: 'dynamic loader',
    names: ['GCONV_PATH', 'LOCPATH', 'NLSPATH'],
    prefixes: ['LD_', 'DYLD_'],
    reason: 'makes the dynamic loader or libc load code (LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT, DYLD_INSERT_LIBRARIES, GCONV_PATH modules) into every program the command starts',
  },
  {
    family: 'shell startup and parsing',
    names: ['ENV', 'IFS', 'PS0', 'PS1', 'PS2', 'PS3', 'PS4', 'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS', 'GLOBIGNORE', 'CDPATH', 'FPATH', 'ZDOTDIR', 'HISTFILE'],
    prefixes: ['BASH_'],
    reason: 'is sourced or executed by a shell (BASH_ENV, ENV, BASH_FUNC_*, PROMPT_COMMAND, ZDOTDIR), expanded and printed (PS0-PS4 under set -x), or changes how the approved command line is split, globbed and resolved (IFS, SHELLOPTS, GLOBIGNORE, CDPATH)',
  },
  {
    family: 'interpreter options and module paths',
    names: ['NODE_OPTIONS', 'NODE_PATH', 'NODE_REPL_EXTERNAL_MODULE', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'CLASSPATH', 'JAVA_HOME'],
    prefixes: ['PYTHON', 'PERL', 'RUBY'],
    reason: 'loads modules or options into every interpreter below the command (NODE_OPTIONS --require, PYTHONSTARTUP, PYTHONBREAKPOINT, PYTHONWARNINGS, PERL5OPT, RUBYOPT, JAVA_TOOL_OPTIONS -javaagent); the PYTHON*, PERL* and RUBY* families are closed because new variables appear with releases',
  },
  {
    family: 'tools that run a program named in the environment',
    names: ['EDITOR', 'VISUAL', 'PAGER', 'MANPAGER', 'BROWSER', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'LESSOPEN', 'LESSCLOSE', 'CC', 'CXX', 'CPP', 'LD', 'AR', 'MAKEFLAGS', 'MFLAGS', 'GNUMAKEFLAGS', 'RUSTC', 'RUSTC_WRAPPER'],
    prefixes: ['GIT_', 'NPM_CONFIG_'],
    reason: 'is run as a command by common tools (git runs GIT_SSH_COMMAND, GIT_ASKPASS, GIT_EDITOR, GIT_PAGER, GIT_EXTERNAL_DIFF and reads GIT_CONFIG_*; npm reads npm_config_script_shell; make and compilers run CC, LD, MAKEFLAGS; less runs LESSOPEN); the GIT_* and npm_config_* families are closed because they grow with releases',
  },
  {
    family: 'home, config and scratch roots',
    names: ['HOME', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'TERMINFO', 'TERMINFO_DIRS', 'TMPDIR', 'TMP', 'TEMP'],
    prefixes: ['XDG_'],
    reason: 'decides which dotfiles and config files are read (.bashrc, .gitconfig with core.fsmonitor or hooks, .npmrc) or where scratch files that are later executed are written',
  },
  {
    family: 'TLS trust',
    names: ['SSL_CERT_FILE', 'SSL_CERT_DIR', 'NODE_EXTRA_CA_CERTS', 'NODE_TLS_REJECT_UNAUTHORIZED', 'REQUESTS_CA_BUNDLE', 'CURL_CA_BUNDLE'],
    prefixes: [],
    reason: 'changes which servers the command trusts, so a credential could be sent to an impostor',
  },
  {
    family: 'Windows system',
    names: ['SYSTEMROOT', 'WINDIR', 'PSMODULEPATH', '__COMPAT_LAYER'],
    prefixes: [],
    reason: 'decides where Windows loads system DLLs and PowerShell modules from, or how an executable is started',
  },
  {
    family: 'the supervisor',
    names: [],
    prefixes: ['SUPERVISOR_'],
    reason: "is the supervisor's own (SUPERVISOR_SPAWN_ID marks every process of a tree so it can be found and killed); a binding must not forge or clear it",
  },
];

/** Why `target` may not receive a secret, or null when it may. */
export function forbiddenTargetReason(target: string): string | null {
  if (typeof target !== 'string' || !ENV_NAME_PATTERN.test(target)) {
    return 'is not a valid environment variable name (it must match /^[A-Za-z_][A-Za-z0-9_]{0,127}$/)';
  }
  const upper = target.toUpperCase();
  for (const f of FORBIDDEN_TARGETS) {
    if (f.names.includes(upper) || f.prefixes.some((p) => upper.startsWith(p))) {
      return `controls execution (${f.family}): it ${f.reason}`;
    }
  }
  return null;
}

/** Where a secret's value lives. Exactly one of env, file, keychain. */
export const SecretDeclarationSchema = z
  .object({
    env: z.string().regex(ENV_NAME_PATTERN, { message: "must be an environment variable name of the supervisor, e.g. 'GH_TOKEN_SOURCE'" }).optional(),
    file: z.string().max(4096).superRefine((s, ctx) => {
      const p = secretFilePathProblem(s);
      if (p !== null) ctx.addIssue({ code: z.ZodIssueCode.custom, message: p });
    }).optional(),
    // Reserved for an OS keychain; declared now so the format stays stable, refused when resolved.
    keychain: z.object({ service: z.string().min(1).max(256), account: z.string().min(1).max(256) }).strict().optional(),
  })
  .strict()
  .superRefine((d, ctx) => {
    const n = [d.env, d.file, d.keychain].filter((x) => x !== undefined).length;
    if (n !== 1) {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: `names ${n === 0 ? 'no source' : 'more than one source'}; write exactly one of env: VAR (a variable of the supervisor) or file: path, e.g. { env: GH_TOKEN_SOURCE }`,
      });
    }
  });

export type SecretDeclaration = z.output<typeof SecretDeclarationSchema>;

/**
 * A secret file is absolute (an operator's path such as /run/secrets/db) or relative to the core
 * and inside it. A relative path that climbs out of the core would depend on where the core is
 * checked out, which a reviewer cannot see; an absolute path says exactly what is read.
 */
export function secretFilePathProblem(written: string): string | null {
  const example = "'/run/secrets/db' or 'secrets/db'";
  if (written.length === 0) return `is empty; write an absolute path or one relative to the core, e.g. ${example}`;
  if (written.includes('\0')) return 'contains a NUL byte; write a plain path';
  if (path.posix.isAbsolute(written) || path.win32.isAbsolute(written)) return null;
  if (written.startsWith('~')) return `'${clipText(written)}' starts with '~', which is not expanded; write the absolute path, e.g. '/home/me/.config/db'`;
  if (written.includes('\\')) return `uses '\\' in a relative path; write '/' separators, e.g. ${example}`;
  const norm = path.posix.normalize(written);
  if (norm === '..' || norm.startsWith('../')) {
    return `'${clipText(written)}' leaves the core directory; keep relative secret files inside the core, or write an absolute path, e.g. ${example}`;
  }
  return null;
}

/** `30s`, `5m`, `2h`, or a number of seconds; bounded so a binding cannot outlive a working day. */
export function parseTtl(v: unknown): { ok: true; ms: number } | { ok: false; message: string } {
  const rule = `must be a duration between 1s and 24h, written like '30s', '5m' or '1h' (or a number of seconds)`;
  let ms: number;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return { ok: false, message: `${rule}; got a non-finite number` };
    ms = v * 1000;
  } else if (typeof v === 'string') {
    const m = /^(\d{1,9})(s|m|h)$/.exec(v.trim());
    if (m === null) return { ok: false, message: `${rule}; got '${clipText(v)}'` };
    ms = Number(m[1]) * (m[2] === 's' ? 1000 : m[2] === 'm' ? 60_000 : 3600_000);
  } else {
    return { ok: false, message: `${rule}; got ${v === null ? 'null' : typeof v}` };
  }
  if (ms < MIN_TTL_MS) return { ok: false, message: `${rule}; ${String(v)} is too short (a zero or negative ttl would expire before the command starts)` };
  if (ms > MAX_TTL_MS) return { ok: false, message: `${rule}; ${String(v)} is longer than 24h, lower it (a binding lives for one command)` };
  return { ok: true, ms };
}

/** `expires`: an ISO 8601 time with a zone (Z or ±hh:mm), so it means one instant everywhere. */
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * One binding, as written under tools.terminal.secrets. Output: the target, the declared secret,
 * ttl_ms and expires_at (canonical ISO) or null. At least one of ttl and expires is required.
 */
export const SecretBindingSchema = z
  .object({
    secret: z.string().regex(SECRET_DECL_NAME_PATTERN, { message: `a secret name ${NAME_RULE}; write e.g. GITHUB_TOKEN` }),
    env: z.string().superRefine((s, ctx) => {
      const why = forbiddenTargetReason(s);
      if (why !== null) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `'${clipText(s)}' ${why}; bind the secret to a variable the program reads as a credential, e.g. GH_TOKEN` });
    }),
    ttl: z
      .unknown()
      .transform((v, ctx) => {
        const r = parseTtl(v);
        if (r.ok) return r.ms;
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: r.message });
        return z.NEVER;
      })
      .optional(),
    expires: z
      .unknown()
      .transform((v, ctx) => {
        const t = typeof v === 'string' && ISO_WITH_ZONE.test(v) ? Date.parse(v) : Number.NaN;
        if (Number.isFinite(t)) return new Date(t).toISOString();
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: "must be an ISO 8601 time with a zone, e.g. '2030-01-31T18:00:00Z'; quote it" });
        return z.NEVER;
      })
      .optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.ttl === undefined && b.expires === undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'has no expiry; add ttl (e.g. ttl: 5m) or expires (an ISO time), so the secret is handed out for a bounded time' });
    }
  })
  .transform((b) => ({ secret: b.secret, env: b.env, ttl_ms: b.ttl ?? null, expires_at: b.expires ?? null }));

export type SecretBindingDecl = z.output<typeof SecretBindingSchema>;

export const SecretBindingListSchema = z.array(SecretBindingSchema).max(MAX_BINDINGS_PER_TOOL);

/** `secrets:` in agent.yaml: secret name → source. */
export const SecretsSectionSchema = z
  .record(
    z.string().superRefine((s, ctx) => {
      if (!SECRET_DECL_NAME_PATTERN.test(s)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `secret name '${clipText(s)}' ${NAME_RULE}; rename it, e.g. '${suggestSecretName(s)}'` });
    }),
    SecretDeclarationSchema,
  )
  .superRefine((r, ctx) => {
    if (Object.keys(r).length > MAX_SECRETS) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `declares more than ${MAX_SECRETS} secrets; remove some` });
  });

function suggestSecretName(s: string): string {
  let out = s.toUpperCase().replace(/[^A-Z0-9_]+/g, '_');
  if (!/^[A-Z]/.test(out)) out = `S_${out}`;
  return out.slice(0, 64);
}

function clipText(s: string): string {
  return s.length > 70 ? `${s.slice(0, 67)}...` : s;
}

/** Agent-level rules zod cannot see field by field: where bindings may appear and what they name. */
export interface SecretsCrossCheckInput {
  readonly secrets?: Readonly<Record<string, unknown>> | undefined;
  readonly tools: Readonly<Record<string, { readonly secrets?: readonly SecretBindingDecl[] | undefined }>>;
}

/** Problems as (field path, message); load-core positions them in agent.yaml. */
export function secretsCrossCheck(agent: SecretsCrossCheckInput, authoredTools: readonly string[] = []): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  const allowed = [...TOOLS_WITH_SECRET_BINDINGS, ...authoredTools];
  const declared = Object.keys(agent.secrets ?? {});
  for (const [tool, override] of Object.entries(agent.tools)) {
    const bindings = override.secrets;
    if (bindings === undefined) continue;
    if (!allowed.includes(tool)) {
      out.push({ path: ['tools', tool, 'secrets'], message: `tool '${tool}' cannot take secret bindings (only: ${allowed.join(', ')}: the terminal and this core's authored tools); remove it, or bind the secret under tools.terminal.secrets` });
      continue;
    }
    const targets = new Map<string, number>();
    bindings.forEach((b, i) => {
      if (!declared.includes(b.secret)) {
        const known = declared.length === 0 ? 'none are declared' : `declared: ${declared.join(', ')}`;
        out.push({ path: ['tools', tool, 'secrets', i, 'secret'], message: `'${b.secret}' is not declared under secrets: (${known}); declare it, e.g. secrets: { ${b.secret}: { env: ${b.secret}_SOURCE } }` });
      }
      // Windows folds case, so GH_TOKEN and gh_token would be one variable there.
      const key = b.env.toUpperCase();
      const first = targets.get(key);
      if (first === undefined) targets.set(key, i);
      else out.push({ path: ['tools', tool, 'secrets', i, 'env'], message: `target '${b.env}' is already bound at [${first}] (names compare case-insensitively); bind each variable once` });
    });
  }
  return out;
}
