// The scripted provider's file: model turns replayed in order, so a whole session runs offline.
import { z } from 'zod';
import { CoreLoadError, type CoreIssue } from './errors.js';
import { clip } from './fields.js';
import { parseYaml } from './yaml-source.js';
import { parseWith } from './zod-issues.js';

// Names are not held to the tool-name rule: a script may replay a hostile call the catalog must refuse.
const ScriptedToolCallSchema = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { message: "must be 1-64 of letters, digits, _ and -; write e.g. 'call_1' or leave it out" }).optional(),
    name: z.string().min(1).max(256),
    arguments: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();

const ScriptedTurnSchema = z
  .object({
    // The user's next message: it starts a new user turn of the same session.
    user: z.string().min(1).max(65536).optional(),
    text: z.string().max(65536).optional(),
    tool_calls: z.array(ScriptedToolCallSchema).min(1).max(64).optional(),
    // What the turn "used", as a provider would report it: lets an offline run meter cost.
    usage: z.object({ input_tokens: z.number().int().nonnegative(), output_tokens: z.number().int().nonnegative() }).strict().optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.user !== undefined && (t.text !== undefined || t.tool_calls !== undefined)) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: "an item is either the user's message (user) or a model turn (text, tool_calls); split it into two items" });
    } else if (t.user === undefined && t.text === undefined && t.tool_calls === undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'a turn needs text, tool_calls or both (or user, for the next user message); add one' });
    }
  });

export const ScriptedModelScriptSchema = z
  .object({
    turns: z.array(ScriptedTurnSchema).min(1).max(1000),
  })
  .strict()
  .superRefine((s, ctx) => {
    const last = s.turns[s.turns.length - 1];
    if (last !== undefined && last.tool_calls !== undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['turns', s.turns.length - 1], message: "the last turn calls tools, so the session would never end; add a final turn with only text, e.g. '- text: done'" });
    }
    if (last !== undefined && last.user !== undefined) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['turns', s.turns.length - 1], message: "the script ends with a user message nobody answers; add a model turn after it, e.g. '- text: done'" });
    }
    s.turns.forEach((t, i) => {
      if (t.user === undefined || i === 0) return;
      const before = s.turns[i - 1]!;
      if (before.user !== undefined) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['turns', i], message: 'two user messages in a row; put a model turn between them or join them' });
      } else if (before.tool_calls !== undefined) {
        // A user turn ends when the model answers with text alone.
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['turns', i - 1], message: "the model turn before a user message calls tools, so that user turn would not end there; end it with a text-only turn, e.g. '- text: done'" });
      }
    });
    const ids = new Map<string, string>();
    s.turns.forEach((t, i) =>
      t.tool_calls?.forEach((c, j) => {
        if (c.id === undefined) return;
        const first = ids.get(c.id);
        if (first !== undefined) ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['turns', i, 'tool_calls', j, 'id'], message: `'${clip(c.id)}' is already used at ${first}; give each call its own id` });
        else ids.set(c.id, `turns[${i}].tool_calls[${j}]`);
      }),
    );
  });

export type ScriptedModelScript = z.output<typeof ScriptedModelScriptSchema>;
export type ScriptedTurn = ScriptedModelScript['turns'][number];
export type ScriptedToolCall = NonNullable<ScriptedTurn['tool_calls']>[number];

/** Validates script text; `file` names it in issues. Used by the loader and by tests with their own scripts. */
export function checkScriptedModelScript(text: string, file: string): { ok: true; script: ScriptedModelScript } | { ok: false; issues: CoreIssue[] } {
  const parsed = parseYaml(text, file);
  if (!parsed.ok) return parsed;
  const r = parseWith(ScriptedModelScriptSchema, parsed.source);
  return r.ok ? { ok: true, script: r.data } : r;
}

/** Like checkScriptedModelScript, but throws CoreLoadError (code CORE_INVALID) naming `file`. */
export function parseScriptedModelScript(text: string, file: string): ScriptedModelScript {
  const r = checkScriptedModelScript(text, file);
  if (!r.ok) throw new CoreLoadError(file, r.issues);
  return r.script;
}
