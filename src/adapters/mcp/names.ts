// Model-facing names of MCP tools: `<server>_<tool>`, only [a-zA-Z0-9_-], at most 64 characters
// (what model APIs accept). A longer or rewritten name keeps a stable hash suffix of the original
// pair, so two tools whose names differ only in cut-off or replaced characters stay distinct.
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;
const HASH_CHARS = 8;

export function mcpToolName(server: string, tool: string): string {
  const raw = `${server}_${tool}`;
  const clean = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (clean === raw && clean.length <= MAX_TOOL_NAME) return clean;
  const suffix = createHash('sha256').update(JSON.stringify([server, tool]), 'utf8').digest('hex').slice(0, HASH_CHARS);
  return `${clean.slice(0, MAX_TOOL_NAME - HASH_CHARS - 1)}_${suffix}`;
}

/** include/exclude filters of a declaration: `*` any run of characters, `?` one; whole-name match. */
export function toolFilter(include: readonly string[], exclude: readonly string[]): (tool: string) => boolean {
  const inc = include.map(globToRegExp);
  const exc = exclude.map(globToRegExp);
  return (tool) => inc.some((r) => r.test(tool)) && !exc.some((r) => r.test(tool));
}

function globToRegExp(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}
