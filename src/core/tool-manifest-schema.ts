// agent/tools/<name>/tool.yaml: everything the supervisor needs before it may ever import the code.
import { z } from 'zod';
import { approvalPolicy, clip, grantField, nameField, noDuplicates, relativePathField, riskLevel } from './fields.js';
import { grantCovers } from './grants.js';

export const ISOLATION_TIERS = ['process', 'sandbox', 'thread'] as const;
export type IsolationTier = (typeof ISOLATION_TIERS)[number];

/** A path the tool's code may read: below its own directory or below the workspace. */
export const ReadPathSchema = z
  .object({
    root: z.enum(['tool', 'workspace']),
    path: relativePathField('its root (the tool directory or the workspace)', 'data/words.txt'),
  })
  .strict();

export const IsolationHintsSchema = z
  .object({
    // A hint: 'thread' takes effect only when the operator marks the tool trusted.
    tier: z.enum(ISOLATION_TIERS).default('process'),
    network: z.boolean().default(false),
    read: z.array(ReadPathSchema).max(64).default([]),
  })
  .strict();

/** The input schema: a JSON Schema whose top level is an object of named arguments. */
export const InputSchemaSchema = z.record(z.string(), z.unknown()).superRefine((s, ctx) => {
  if (s.type !== 'object') {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['type'], message: "must be 'object' (a tool's input is an object of named arguments); write type: object" });
  }
  const props = s.properties;
  const isMapping = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (props !== undefined && !isMapping(props)) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['properties'], message: 'must be a mapping of argument name to its JSON Schema; write one key per argument' });
  } else if (props !== undefined) {
    for (const [k, v] of Object.entries(props)) {
      if (!isMapping(v)) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['properties', k], message: "must be a JSON Schema mapping, e.g. { type: string }; write a mapping" });
    }
  }
  const required = s.required;
  if (required !== undefined) {
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['required'], message: 'must be a list of argument names; write e.g. [text]' });
    } else {
      required.forEach((r: string, i) => {
        if (!isMapping(props) || !(r in props)) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['required', i], message: `names '${clip(r)}', which is not in properties; add it to properties or remove it here` });
      });
    }
  }
});

const ENTRY_EXTENSIONS = /\.(mjs|js)$/;

export const ToolManifestSchema = z
  .object({
    name: nameField('tool name'),
    description: z.string().min(1).max(4096),
    input_schema: InputSchemaSchema,
    // The single dispatch gate: one exact capability the session must hold for any call.
    capability: grantField({ exact: true }),
    approval: approvalPolicy.default('prompt'),
    risk: riskLevel.default('medium'),
    // What the code may check with ctx.capability.require(...), never the dispatch gate itself.
    capabilities: z.array(grantField()).max(64).default([]).superRefine(noDuplicates('capability')),
    isolation: IsolationHintsSchema.default({}),
    entry: relativePathField('the tool directory', 'index.mjs')
      .default('index.mjs')
      .superRefine((s, ctx) => {
        if (!ENTRY_EXTENSIONS.test(s)) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `'${clip(s)}' is not an ES module file; name the entry *.mjs or *.js, e.g. 'index.mjs'` });
      }),
  })
  .strict()
  .superRefine((m, ctx) => {
    m.capabilities.forEach((c, i) => {
      if (grantCovers(c, m.capability)) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['capabilities', i],
          message: `'${clip(c)}' ${c === m.capability ? 'is' : 'covers'} the tool's own dispatch capability '${m.capability}'; a tool cannot grant itself its dispatch gate, remove it (the session's grants decide dispatch)`,
        });
      }
    });
  });

export type ToolManifestFile = z.output<typeof ToolManifestSchema>;
export type ReadPathHint = z.output<typeof ReadPathSchema>;
export type IsolationHints = z.output<typeof IsolationHintsSchema>;
