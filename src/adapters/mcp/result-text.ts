// A tools/call result as bounded text for the views: text as is, images and audio as a one-line
// description, embedded resources as bounded text, everything cut at a total bound. The runtime
// redacts the text again before any view sees it.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const DEFAULT_RESULT_CHARS = 64_000;
const RESOURCE_TEXT_CHARS = 8_000;

export function resultText(result: CallToolResult, maxChars = DEFAULT_RESULT_CHARS): { text: string; truncated: boolean; parts: number } {
  const parts: string[] = [];
  let total = 0;
  let truncated = false;
  const push = (s: string): boolean => {
    const room = maxChars - total;
    if (s.length > room) {
      parts.push(s.slice(0, Math.max(0, room)));
      total = maxChars;
      truncated = true;
      return false;
    }
    parts.push(s);
    total += s.length;
    return true;
  };
  const content = Array.isArray(result.content) ? result.content : [];
  for (const c of content) {
    if (!push(partText(c as Record<string, unknown>))) break;
  }
  if (content.length === 0 && result.structuredContent !== undefined) push(JSON.stringify(result.structuredContent));
  let text = parts.join('\n');
  if (truncated) text += `\n[truncated: the result was longer than ${maxChars} characters]`;
  return { text, truncated, parts: content.length };
}

function partText(c: Record<string, unknown>): string {
  switch (c.type) {
    case 'text':
      return String(c.text ?? '');
    case 'image':
    case 'audio':
      return `[${c.type}: ${String(c.mimeType ?? 'unknown type')}, ${base64Bytes(c.data)} bytes]`;
    case 'resource': {
      const r = (c.resource ?? {}) as Record<string, unknown>;
      if (typeof r.text === 'string') {
        const t = r.text.length > RESOURCE_TEXT_CHARS ? `${r.text.slice(0, RESOURCE_TEXT_CHARS)}…[${r.text.length - RESOURCE_TEXT_CHARS} more characters]` : r.text;
        return `[resource ${String(r.uri ?? '')}]\n${t}`;
      }
      return `[resource ${String(r.uri ?? '')}: ${String(r.mimeType ?? 'binary')}, ${base64Bytes(r.blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${String(c.uri ?? '')}${c.name ? ` (${String(c.name)})` : ''}]`;
    default:
      return `[${String(c.type ?? 'unknown')} content]`;
  }
}

/** Decoded size of base64 data without decoding it. */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const s = data.replace(/[\s=]+/g, '');
  return Math.floor((s.length * 3) / 4);
}
