// What a connect approval is about: the declaration's fingerprint. Everything that changes what
// would run, with what, or under which rules is in it (command, args, cwd, env names and literal
// values or secret names, URL, header names, filters, timeouts, approvals, risk); secret values
// never are (they are not known before approval). A changed fingerprint needs approval again.
import { createHash } from 'node:crypto';
import type { McpDeclaration } from '../../core/index.js';
import { canonicalJson } from '../../policy/index.js';

export function declarationFingerprint(d: McpDeclaration): string {
  const { source: _source, resolvedCwd, ...rest } = d;
  const canonical = canonicalJson({ v: 1, declaration: rest as unknown, resolvedCwd });
  return `mcpdecl1:${createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 32)}`;
}

/** The manifest fingerprint: a hash of the tool list a server reported (names, descriptions, schemas). */
export function manifestFingerprint(tools: readonly { name: string; description?: string | undefined; inputSchema: unknown }[]): string {
  // Through JSON first: a parsed schema may carry undefined fields that canonical JSON refuses.
  const plain: unknown = JSON.parse(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema ?? {} }))));
  const canonical = canonicalJson(plain);
  return `mcpman1:${createHash('sha256').update(canonical, 'utf8').digest('hex').slice(0, 32)}`;
}
