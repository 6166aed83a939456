// agent.yaml: who the agent is, which tools it sees, what a session may do, and its model.
import { z } from 'zod';
import { approvalPolicy, grantField, httpUrlField, nameField, noDuplicates, relativePathField, riskLevel, secretRef } from './fields.js';
import { BUILTIN_TOOLSETS } from './names.js';
// The URL policy's own modules, not the net layer's barrel (which brings the HTML reader and undici
// into every core load).
import { parseCidr, parseIp } from '../net/ip-address.js';
import { compileAllowlist } from '../net/url-policy.js';
import { SecretBindingListSchema, SecretsSectionSchema } from './secrets-schema.js';

/** Metadata an agent may express for one tool; the catalog decides whether it only tightens. */
export const ToolOverrideSchema = z
  .object({
    description: z.string().min(1).max(4096).optional(),
    approval: approvalPolicy.optional(),
    risk: riskLevel.optional(),
    // Secrets bound for each call of this tool, after approval (terminal only; see secrets-schema.ts).
    secrets: SecretBindingListSchema.optional(),
  })
  .strict();

/** Command classes a core may let dynamic checks approve; see adapters/builtin/terminal-classify/. */
export const AUTO_APPROVE_CLASSES = ['read-only'] as const;

/** The global approval policy: a default plus rules keyed by capability pattern. */
export const ApprovalConfigSchema = z
  .object({
    default: approvalPolicy.default('prompt'),
    rules: z.record(grantField(), approvalPolicy).default({}),
    // Classes of calls that dynamic checks may approve without asking (the only way to relax a prompt).
    auto_approve: z.array(z.enum(AUTO_APPROVE_CLASSES)).max(8).default([]).superRefine(noDuplicates('auto_approve class')),
  })
  .strict();

const httpUrl = httpUrlField('https://api.example.com/v1', 'use api_key: { secret: NAME }');

const modelOptions = z.record(z.string(), z.unknown()).default({});

/**
 * What the model costs, so the supervisor meters `limits.max_cost_usd` itself from the usage the
 * provider reports (US dollars per million tokens). Without it a cost limit cannot be enforced on
 * the local runtime, and a session that has one is refused.
 */
export const PricingSchema = z
  .object({ input_usd_per_mtok: z.number().nonnegative().finite(), output_usd_per_mtok: z.number().nonnegative().finite() })
  .strict();
const pricing = PricingSchema.optional();

/** The model provider: only the shape is checked here; providers validate their own options. */
export const ModelConfigSchema = z.discriminatedUnion('provider', [
  z
    .object({
      provider: z.literal('scripted'),
      script: relativePathField('the core', 'script.yaml'),
      pricing,
    })
    .strict(),
  z
    .object({
      provider: z.literal('openai-compatible'),
      model: z.string().min(1).max(256),
      base_url: httpUrl.optional(),
      api_key: secretRef.optional(),
      options: modelOptions,
      pricing,
    })
    .strict(),
  z
    .object({
      provider: z.literal('anthropic'),
      model: z.string().min(1).max(256),
      base_url: httpUrl.optional(),
      api_key: secretRef.optional(),
      options: modelOptions,
      pricing,
    })
    .strict(),
]);

export const LimitsSchema = z
  .object({
    max_iterations: z.number().int().positive().optional(),
    timeout_seconds: z.number().positive().finite().optional(),
    max_cost_usd: z.number().nonnegative().finite().optional(),
    // Per session, enforced by the supervisor whatever the runtime (issue 16): running background
    // tasks, and calls in flight at once. Absent: DEFAULT_SESSION_CAPS.
    max_background_tasks: z.number().int().min(1).max(10_000).optional(),
    max_concurrent_calls: z.number().int().min(1).max(10_000).optional(),
    // Delegation (issue 18): how deep children may nest (a child of the session is depth 1), and the
    // tool calls a session may make, its children's included. The model never sets either.
    max_delegation_depth: z.number().int().min(0).max(8).optional(),
    max_tool_calls: z.number().int().min(1).max(1_000_000).optional(),
  })
  .strict();

/** Defaults of the per-session caps in `limits` (docs/core-format.md). */
export const DEFAULT_SESSION_CAPS = Object.freeze({ maxBackgroundTasks: 32, maxConcurrentCalls: 16 });

/** Default of limits.max_delegation_depth: a session's children may delegate once more. */
export const DEFAULT_MAX_DELEGATION_DEPTH = 2;

/**
 * The operator's explicit openings in the URL policy, for requests the supervisor makes on a
 * model's behalf (web_extract, later MCP over HTTP and model providers): named internal hosts
 * (exact, or '*.suffix') and address ranges. Nothing else reaches a private or local address.
 */
export const NetworkSchema = z
  .object({
    allow_hosts: z
      .array(
        z
          .string()
          .min(1)
          .max(253)
          .regex(/^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, { message: "must be a lower-case host name or '*.suffix', e.g. 'wiki.internal' or '*.corp.example'" })
          // The URL policy's own check, at load: '127.0.0.1' passed the pattern above and then failed
          // every web_extract at step 4 (url.allowlist_invalid).
          .superRefine((s, ctx) => {
            try {
              compileAllowlist({ hosts: [s] });
            } catch {
              const ip = parseIp(s.startsWith('*.') ? s.slice(2) : s) !== null;
              ctx.addIssue({ code: z.ZodIssueCode.custom, message: ip ? `'${s}' is an IP address; put addresses in network.allow_cidrs (e.g. '${s}/32')` : `'${s}' is not a host name` });
            }
          }),
      )
      .max(256)
      .default([]),
    allow_cidrs: z
      .array(
        z.string().superRefine((s, ctx) => {
          try {
            parseCidr(s);
          } catch (err) {
            ctx.addIssue({ code: z.ZodIssueCode.custom, message: (err as Error).message });
          }
        }),
      )
      .max(256)
      .default([]),
  })
  .strict();

const wholeNumber = (what: string, min: number, max: number, example: number) =>
  z
    .number({ invalid_type_error: `must be a number; write e.g. ${what}: ${example}` })
    .int({ message: `must be a whole number; write e.g. ${what}: ${example}` })
    .min(min, { message: `must be at least ${min}; write e.g. ${what}: ${example}` })
    .max(max, { message: `must be at most ${max}; write e.g. ${what}: ${example}` });

/** Authored-tool hosts: pool size and when a worker is replaced; which tools the operator trusts. */
export const ToolHostsSchema = z
  .object({
    pool_size: wholeNumber('pool_size', 1, 32, 2).optional(),
    max_calls_per_worker: wholeNumber('max_calls_per_worker', 1, 1_000_000, 10_000).optional(),
    heap_mb: wholeNumber('heap_mb', 16, 16_384, 256).optional(),
    rss_mb: wholeNumber('rss_mb', 32, 65_536, 512).optional(),
    // The operator's mark, never the tool's: only these authored tools may run in the thread tier
    // (their manifest still has to ask for it). That tier is no boundary against the tool.
    trusted: z.array(nameField('tool name')).max(256).default([]).superRefine(noDuplicates('tool name')),
    // Worker threads of the one trusted tool host (the thread tier).
    threads: wholeNumber('threads', 1, 64, 2).optional(),
  })
  .strict();

/** Every name in tool_hosts.trusted must be one of this core's authored tools. */
export function trustedToolsCrossCheck(agent: { tool_hosts?: { trusted: readonly string[] } | undefined }, authoredTools: readonly string[]): { path: (string | number)[]; message: string }[] {
  const trusted = agent.tool_hosts?.trusted ?? [];
  return trusted.flatMap((name, i) =>
    authoredTools.includes(name)
      ? []
      : [{ path: ['tool_hosts', 'trusted', i], message: `'${name}' is not an authored tool of this core (${authoredTools.join(', ') || 'it has none'}); only authored tools can be trusted into the thread tier, remove it or add agent/tools/${name}/` }],
  );
}

/**
 * When a terminal command runs inside the OS sandbox: `auto` (default) for the calls a command
 * class approved (auto_approve), `always` for every call, explicit approvals included;
 * `workspace-write` as `always`, with the workspace writable (its `.git` stays read-only) and
 * nothing else. With `always` or `workspace-write` and no sandbox on the machine, the terminal is
 * refused (fail closed).
 */
export const TERMINAL_SANDBOX_MODES = ['auto', 'always', 'workspace-write'] as const;
export const TerminalConfigSchema = z
  .object({
    sandbox: z.enum(TERMINAL_SANDBOX_MODES, { errorMap: () => ({ message: "must be 'auto' (sandbox the calls auto_approve let through), 'always' (sandbox every terminal call) or 'workspace-write' (every call sandboxed, the workspace writable)" }) }).default('auto'),
  })
  .strict();

export const RUNTIME_TARGETS = ['local', 'claude-code'] as const;

export const AgentConfigSchema = z
  .object({
    name: nameField('agent name'),
    description: z.string().max(4096).default(''),
    toolsets: z.array(z.enum(BUILTIN_TOOLSETS)).max(16).default([]).superRefine(noDuplicates('toolset')),
    tools: z.record(nameField('tool name'), ToolOverrideSchema).default({}),
    grants: z.array(grantField()).max(512).default([]).superRefine(noDuplicates('grant')),
    approval: ApprovalConfigSchema.default({}),
    model: ModelConfigSchema.optional(),
    limits: LimitsSchema.default({}),
    runtime: z.enum(RUNTIME_TARGETS).default('local'),
    // Default '.': the core directory itself, so a core works where it is checked out.
    workspace: z.string().min(1).max(4096).default('.'),
    // Declarations only (name -> source); values are read by src/secrets when a binding is made.
    // Optional rather than defaulted, so a core without secrets keeps its exact snapshot shape.
    secrets: SecretsSectionSchema.optional(),
    network: NetworkSchema.optional(),
    // Optional for the same reason: tool-host pools and recycling (src/adapters/authored).
    tool_hosts: ToolHostsSchema.optional(),
    // Optional for the same reason: when terminal commands run inside the OS sandbox.
    terminal: TerminalConfigSchema.optional(),
  })
  .strict();

export type AgentConfig = z.output<typeof AgentConfigSchema>;
export type ModelConfig = z.output<typeof ModelConfigSchema>;
export type ToolOverride = z.output<typeof ToolOverrideSchema>;
export type ApprovalConfig = z.output<typeof ApprovalConfigSchema>;
export type NetworkConfig = z.output<typeof NetworkSchema>;
export type ToolHostsConfig = z.output<typeof ToolHostsSchema>;
export type TerminalConfig = z.output<typeof TerminalConfigSchema>;
export type RuntimeTarget = (typeof RUNTIME_TARGETS)[number];
