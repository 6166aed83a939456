// agent/mcp/*.yaml: MCP server declarations, and the shape of a tool the MCP host discovered from one.
import { z } from 'zod';
import { approvalPolicy, clip, httpUrlField, literalOrSecret, literalSecretOrPath, nameField, riskLevel } from './fields.js';
import { NetworkSchema } from './agent-schema.js';
import { ENV_NAME_PATTERN, HEADER_NAME_PATTERN } from './names.js';

const EnvEntrySchema = z
  .object({
    name: z.string().regex(ENV_NAME_PATTERN, { message: "must be an environment variable name (/^[A-Za-z_][A-Za-z0-9_]{0,127}$/); write e.g. 'GITHUB_TOKEN'" }),
    value: literalSecretOrPath({ forbid: /\0/, forbidWhy: 'contains a NUL byte, which no environment can hold; remove it' }),
  })
  .strict();

// Headers the transport sets itself (framing, session, protocol) or that would change where or how a
// request goes: a declaration cannot override them.
const RESERVED_HEADERS = new Set(['host', 'content-length', 'content-type', 'accept', 'connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'keep-alive', 'proxy-authorization', 'proxy-connection', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

const HeaderEntrySchema = z
  .object({
    name: z
      .string()
      .regex(HEADER_NAME_PATTERN, { message: "must be an HTTP header name (token characters, no spaces or ':'); write e.g. 'Authorization'" })
      .refine((n) => !RESERVED_HEADERS.has(n.toLowerCase()), { message: 'is set by the MCP transport itself (framing, session or routing); remove this entry' }),
    value: literalOrSecret({ forbid: /[\r\n\0]/, forbidWhy: 'contains CR, LF or NUL, which would split the header; remove them' }),
  })
  .strict();

function uniqueNames(what: string) {
  return (entries: readonly { name: string }[], ctx: z.RefinementCtx): void => {
    const seen = new Map<string, number>();
    entries.forEach((e, i) => {
      const key = what === 'header' ? e.name.toLowerCase() : e.name;
      const first = seen.get(key);
      if (first === undefined) seen.set(key, i);
      else ctx.addIssue({ code: z.ZodIssueCode.custom, path: [i, 'name'], message: `${what} '${clip(e.name)}' is set twice (first at [${first}]); keep one entry` });
    });
  };
}

export const StdioTransportSchema = z
  .object({
    type: z.literal('stdio'),
    command: z.string().min(1).max(4096).refine((s) => !s.includes('\0'), { message: 'contains a NUL byte; write a plain command' }),
    args: z.array(z.string().max(8192).refine((s) => !s.includes('\0'), { message: 'contains a NUL byte; remove it' })).max(256).default([]),
    // Relative to the workspace (or absolute inside it); checked against the workspace by the loader.
    cwd: z.string().min(1).max(4096).default('.'),
    env: z.array(EnvEntrySchema).max(128).default([]).superRefine(uniqueNames('environment variable')),
  })
  .strict();

const httpUrl = httpUrlField('https://mcp.example.com/mcp', 'send them in a header with { secret: NAME }');

export const HttpTransportSchema = z
  .object({
    type: z.literal('http'),
    url: httpUrl,
    headers: z.array(HeaderEntrySchema).max(64).default([]).superRefine(uniqueNames('header')),
    // Openings in the URL policy for this server only, same shape as agent.yaml `network:` (which
    // applies too); a server on this machine or a private network needs one, e.g. 127.0.0.1/32.
    network: NetworkSchema.optional(),
  })
  .strict();

/** Glob-ish filter over the server's own tool names: letters, digits, _ . - and the wildcards * ?. */
const toolFilter = z.string().regex(/^[A-Za-z0-9_.*?-]{1,128}$/, { message: "must be a tool-name filter of letters, digits, _ . - and wildcards * ?; write e.g. 'read_*'" });
const serverToolName = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, { message: "must be a tool name as the server reports it (letters, digits, _ . -); write e.g. 'create_entities'" });

export const McpApprovalSchema = z
  .object({
    connect: approvalPolicy.optional(),
    call: approvalPolicy.optional(),
    tools: z.record(serverToolName, approvalPolicy).default({}),
  })
  .strict();

export const McpDeclarationSchema = z
  .object({
    name: nameField('server name'),
    transport: z.discriminatedUnion('type', [StdioTransportSchema, HttpTransportSchema]),
    include: z.array(toolFilter).max(256).default(['*']),
    exclude: z.array(toolFilter).max(256).default([]),
    connect_timeout_seconds: z.number().positive().max(600).default(10),
    call_timeout_seconds: z.number().positive().max(3600).default(60),
    approval: McpApprovalSchema.default({}),
    risk: riskLevel.optional(),
  })
  .strict();

export type McpDeclarationFile = z.output<typeof McpDeclarationSchema>;
export type StdioTransport = z.output<typeof StdioTransportSchema>;
export type HttpTransport = z.output<typeof HttpTransportSchema>;
export type McpApproval = z.output<typeof McpApprovalSchema>;

/** A tool an MCP server listed, already filtered and named by the MCP host's discovery. */
export interface DiscoveredMcpTool {
  server: string;
  /** The model-facing name (`<server>_<tool>`, normalized, at most 64 characters). */
  name: string;
  /** The tool's name as the server reported it (what tools/call sends). */
  serverTool: string;
  /** The open connection the tool was discovered on: the entry is bound to it, not to the name. */
  connection: string;
  description: string;
  inputSchema: Readonly<Record<string, unknown>>;
  declarationFile: string;
  /** The declaration's call policy, or its per-tool override. */
  approval: 'auto' | 'prompt' | 'deny';
  /** The declaration's risk (default medium). */
  risk?: 'low' | 'medium' | 'high';
}
