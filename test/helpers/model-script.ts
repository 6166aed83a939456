// A scripted model's script as the core's `model: { provider: scripted }` reads it: one entry per
// model turn, with its text and the tool calls it makes (test/core/ and docs/core-format.md).

/** One tool call of a scripted turn. */
export type ScriptedCall = { name: string; arguments?: Record<string, unknown> };

/** The script's JSON for these turns, in order. */
export const script = (...turns: { text?: string; tools?: ScriptedCall[] }[]): string =>
  JSON.stringify({ turns: turns.map((t) => ({ ...(t.text !== undefined ? { text: t.text } : {}), ...(t.tools ? { tool_calls: t.tools.map((c) => ({ name: c.name, arguments: c.arguments ?? {} })) } : {}) })) });
