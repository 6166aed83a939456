// agent/agents/<name>.yaml: a child agent delegate_task may start. What it asks for is an upper
// bound: the supervisor intersects it with the parent's scope and the call's request.
import { z } from 'zod';
import { grantField, noDuplicates, relativePathField } from './fields.js';
import { BUILTIN_TOOLSETS, TOOL_NAME_PATTERN } from './names.js';
import { PricingSchema } from './agent-schema.js';

/** The child's own limits; each is also clamped by what the parent has left (docs/core-format.md). */
export const AgentDefinitionLimitsSchema = z
  .object({
    max_iterations: z.number().int().min(1).max(1000).optional(),
    timeout_seconds: z.number().positive().max(86_400).optional(),
    max_tool_calls: z.number().int().min(0).max(100_000).optional(),
    max_cost_usd: z.number().nonnegative().finite().optional(),
  })
  .strict();

/** Only a scripted model (offline) or the parent's own model in this slice. */
const ChildModelSchema = z
  .object({
    provider: z.literal('scripted', { errorMap: () => ({ message: "must be 'scripted' (a child with a remote model uses the parent's model: leave model: out)" }) }),
    script: relativePathField('the core', 'agent/agents/summarizer.script.yaml'),
    // What the script's `usage` would cost (offline cost tests); a remote child uses the parent's.
    pricing: PricingSchema.optional(),
  })
  .strict();

export const AgentDefinitionSchema = z
  .object({
    description: z.string().min(1).max(4096),
    // The child's standing instructions: the first thing its model reads, before the task.
    instructions: z.string().max(65_536).default(''),
    toolsets: z.array(z.enum(BUILTIN_TOOLSETS)).max(16).default([]).superRefine(noDuplicates('toolset')),
    // Tool names (builtin, authored or MCP) the child may see; absent: every tool its grants allow.
    tools: z
      .array(z.string().regex(TOOL_NAME_PATTERN, { message: "must be a tool name as the catalog shows it, e.g. 'word_count'" }))
      .max(256)
      .superRefine(noDuplicates('tool name'))
      .optional(),
    grants: z.array(grantField()).max(512).default([]).superRefine(noDuplicates('grant')),
    limits: AgentDefinitionLimitsSchema.default({}),
    model: ChildModelSchema.optional(),
  })
  .strict();

export type AgentDefinitionFile = z.output<typeof AgentDefinitionSchema>;
