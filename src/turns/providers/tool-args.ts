// Shared by both providers: what a model's tool-call arguments become, and a fallback call id.
import { randomBytes } from 'node:crypto';

/**
 * The arguments text a model streamed, parsed. Text that is not JSON stays a string: the runtime's
 * validation refuses it and the model is told why, instead of the whole turn failing.
 */
export function parseToolArguments(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** For a server that leaves a tool call's id out: unique within the session's history. */
export function fallbackCallId(): string {
  return `call_${randomBytes(6).toString('hex')}`;
}
