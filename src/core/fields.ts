// Field schemas shared by agent.yaml, tool.yaml, agent/mcp/*.yaml and the model script.
import { z } from 'zod';
import { checkGrant } from './grants.js';
import { SECRET_NAME_PATTERN, SECRET_NAME_RULE, TOOL_NAME_PATTERN, TOOL_NAME_RULE } from './names.js';
import { relativePathProblem } from './path-rules.js';

export const APPROVAL_POLICIES = ['auto', 'prompt', 'deny'] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];
export const approvalPolicy = z.enum(APPROVAL_POLICIES);

export const RISK_LEVELS = ['low', 'medium', 'high'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
export const riskLevel = z.enum(RISK_LEVELS);

/** A tool, server or agent name; the message proposes a conforming spelling. */
export function nameField(what: string): z.ZodType<string, z.ZodTypeDef, unknown> {
  return z.string().superRefine((s, ctx) => {
    if (!TOOL_NAME_PATTERN.test(s)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `${what} '${clip(s)}' ${TOOL_NAME_RULE}; rename it, e.g. '${suggestName(s)}'` });
  });
}

/** A conforming name close to `s`, for error messages only. */
export function suggestName(s: string): string {
  let out = s.toLowerCase().replace(/[^a-z0-9_-]+/g, '_');
  if (!/^[a-z]/.test(out)) out = `t_${out}`;
  return out.slice(0, 63) || 'my_tool';
}

/** A capability grant or approval-rule pattern (`exact`: no wildcard). */
export function grantField(opts: { exact?: boolean } = {}): z.ZodType<string, z.ZodTypeDef, unknown> {
  return z.string().superRefine((s, ctx) => {
    const r = checkGrant(s, opts);
    if (!r.ok) ctx.addIssue({ code: z.ZodIssueCode.custom, message: r.message });
  });
}

/** A relative path that must stay below `base` ('the core', 'the tool directory', ...), lexically. */
export function relativePathField(base: string, example: string): z.ZodType<string, z.ZodTypeDef, unknown> {
  return z.string().superRefine((s, ctx) => {
    const p = relativePathProblem(s, base, example);
    if (p !== null) ctx.addIssue({ code: z.ZodIssueCode.custom, message: p });
  });
}

export const secretName = z.string().regex(SECRET_NAME_PATTERN, { message: `a secret name ${SECRET_NAME_RULE}; write e.g. 'GITHUB_TOKEN'` });

/** `{ secret: NAME }`: a reference the supervisor resolves only after approval; never the value itself. */
export const secretRef = z.object({ secret: secretName }).strict();
export type SecretRef = z.output<typeof secretRef>;

/** A literal string or `{ secret: NAME }`, with one message that names both forms. */
export type LiteralOrSecret = string | SecretRef;
export function literalOrSecret(opts: { forbid: RegExp; forbidWhy: string }): z.ZodType<LiteralOrSecret, z.ZodTypeDef, unknown> {
  return z.unknown().transform((v, ctx): LiteralOrSecret => {
    if (typeof v === 'string') {
      if (v.length > 8192) ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'is longer than 8192 characters; shorten it' });
      else if (opts.forbid.test(v)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: opts.forbidWhy });
      return v;
    }
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      const secret = (v as Record<string, unknown>).secret;
      if (keys.length === 1 && keys[0] === 'secret') {
        if (typeof secret === 'string' && SECRET_NAME_PATTERN.test(secret)) return { secret };
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['secret'], message: "a secret name must match /^[A-Za-z_][A-Za-z0-9_]{0,127}$/; write e.g. { secret: GITHUB_TOKEN }" });
        return z.NEVER;
      }
    }
    ctx.addIssue({ code: z.ZodIssueCode.custom, message: "must be a literal string or { secret: NAME }; quote a literal, or write { secret: GITHUB_TOKEN } to bind a secret after approval" });
    return z.NEVER;
  });
}

/** `{ workspace_path: REL }`: a file path below the workspace, made absolute when the core loads. */
export interface WorkspacePathRef {
  workspace_path: string;
}
export type LiteralSecretOrPath = LiteralOrSecret | WorkspacePathRef;

/**
 * An MCP server's environment value: a literal, `{ secret: NAME }`, or `{ workspace_path: REL }`
 * for programs that resolve relative paths against their own install directory.
 */
export function literalSecretOrPath(opts: { forbid: RegExp; forbidWhy: string }): z.ZodType<LiteralSecretOrPath, z.ZodTypeDef, unknown> {
  const literal = literalOrSecret(opts);
  return z.unknown().transform((v, ctx): LiteralSecretOrPath => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && 'workspace_path' in v) {
      const written = (v as { workspace_path: unknown }).workspace_path;
      const problem = typeof written === 'string' ? relativePathProblem(written, 'the workspace', 'data/memory.jsonl') : "must be a path relative to the workspace, e.g. { workspace_path: 'data/memory.jsonl' }";
      if (problem === null) return { workspace_path: written as string };
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['workspace_path'], message: problem });
      return z.NEVER;
    }
    const r = literal.safeParse(v);
    if (r.success) return r.data;
    for (const issue of r.error.issues) {
      const message = issue.message
        .replace('must be a literal string or { secret: NAME }', 'must be a literal string, { secret: NAME } or { workspace_path: REL }')
        .replace('to bind a secret after approval', 'to bind a secret after approval, or { workspace_path: data/file.json } for a file in the workspace');
      ctx.addIssue({ ...issue, message } as z.IssueData);
    }
    return z.NEVER;
  });
}

/** Adds an issue on every repeated item of a list of strings. */
export function noDuplicates(what: string) {
  return (items: readonly string[], ctx: z.RefinementCtx): void => {
    const seen = new Map<string, number>();
    items.forEach((item, i) => {
      const first = seen.get(item);
      if (first === undefined) seen.set(item, i);
      else ctx.addIssue({ code: z.ZodIssueCode.custom, path: [i], message: `${what} '${clip(item)}' is listed twice (first at [${first}]); remove the duplicate` });
    });
  };
}

export function clip(s: string): string {
  return s.length > 70 ? `${s.slice(0, 67)}...` : s;
}

/** An http(s) URL without userinfo: credentials belong in a secret reference, not in the file. */
export function httpUrlField(example: string, credentialsFix: string): z.ZodType<string, z.ZodTypeDef, unknown> {
  return z.string().superRefine((s, ctx) => {
    let u: URL;
    try {
      u = new URL(s);
    } catch {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: `is not a URL; write e.g. '${example}'` });
      return;
    }
    if (u.protocol !== 'https:' && u.protocol !== 'http:') ctx.addIssue({ code: z.ZodIssueCode.custom, message: `uses ${u.protocol}; write an https:// (or http://) URL` });
    if (u.username !== '' || u.password !== '') ctx.addIssue({ code: z.ZodIssueCode.custom, message: `holds credentials; remove them from the URL and ${credentialsFix}` });
  });
}
