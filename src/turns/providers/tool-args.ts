// Shared by both providers: what a model's tool-call arguments become, and a fallback call id.
import { randomBytes } from 'node:crypto';

/**
 * The arguments text a model streamed, parsed. Text that is not JSON stays a string: the runtime's
 * validation refuses it and the model is told why, instead of the whole turn failing.
 */
export function parseToolArguments(text: string): unknown {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return text;
  }
  // Arguments no tool schema could want: kept as the text the model sent, so validation refuses the
  // call with a reason and the history still stores it (a 1.2 KB reply nested 600 deep made the
  // store refuse the whole assistant message and ended the run).
  return depthOf(value) > MAX_ARGUMENT_DEPTH ? text : value;
}

/** Arguments a server sent already parsed (Anthropic's non-streamed `input`), bounded the same way. */
export function boundToolArguments(value: unknown): unknown {
  return depthOf(value) > MAX_ARGUMENT_DEPTH ? JSON.stringify(value) : value;
}

/** Deeper tool arguments are refused (the store's own limit, 512, is far beyond any tool's schema). */
export const MAX_ARGUMENT_DEPTH = 64;

/** How deeply arrays and objects nest in a parsed JSON value (a scalar is 0), without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, d + 1);
    if (deepest > MAX_ARGUMENT_DEPTH) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** For a server that leaves a tool call's id out: unique within the session's history. */
export function fallbackCallId(): string {
  return `call_${randomBytes(6).toString('hex')}`;
}
