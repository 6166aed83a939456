// The security diff of an evolve run: what the candidate core would change in the supervisor's
// authority, computed by the supervisor from the two parsed cores (never from anything the agent
// wrote about its change). Secret-safe by construction: environment variables and headers appear
// by name only, their values (literal or secret reference) never.
import type { CoreSnapshot, McpDeclaration } from '../core/index.js';

export interface McpServerView {
  transport: 'stdio' | 'http';
  command?: string;
  args?: string[];
  cwd?: string;
  url?: string;
  env_names: string[];
  header_names: string[];
  connect: string;
  call: string;
  tool_policies: Record<string, string>;
  risk: string;
}

export interface SecurityDiff {
  /** True when nothing below changed: promotion needs no security review. */
  empty: boolean;
  grants: { added: string[]; removed: string[] };
  toolsets: { added: string[]; removed: string[] };
  approval: { before: unknown; after: unknown } | null;
  network: { before: unknown; after: unknown } | null;
  runtime: { before: string; after: string } | null;
  mcp: { added: Record<string, McpServerView>; removed: string[]; changed: Record<string, { before: McpServerView; after: McpServerView }> };
  tools: {
    added: { name: string; capability: string; tier: string; capabilities: string[] }[];
    removed: string[];
    changed: { name: string; before: { capability: string; tier: string; capabilities: string[]; approval: string }; after: { capability: string; tier: string; capabilities: string[]; approval: string } }[];
  };
  agents: { added: string[]; removed: string[]; changed: string[] };
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const setDiff = (a: readonly string[], b: readonly string[]): { added: string[]; removed: string[] } => ({
  added: sorted(b.filter((x) => !a.includes(x))),
  removed: sorted(a.filter((x) => !b.includes(x))),
});
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** A declaration as the review shows it: everything that decides what runs and where, no value of a secret. */
export function mcpServerView(d: McpDeclaration): McpServerView {
  const t = d.transport;
  const approval = d.approval ?? { tools: {} };
  const common = {
    connect: approval.connect ?? 'default',
    call: approval.call ?? 'default',
    tool_policies: { ...(approval.tools ?? {}) },
    risk: d.risk ?? 'medium',
  };
  if (t.type === 'stdio') {
    return { transport: 'stdio', command: t.command, args: [...t.args], cwd: t.cwd, env_names: sorted(t.env.map((e) => e.name)), header_names: [], ...common };
  }
  return { transport: 'http', url: t.url, env_names: [], header_names: sorted(t.headers.map((h) => h.name)), ...common };
}

function toolView(t: CoreSnapshot['tools'][number]) {
  return { capability: t.capability, tier: t.isolation.tier, capabilities: sorted(t.capabilities), approval: t.approval ?? 'default' };
}

export function securityDiff(before: CoreSnapshot, after: CoreSnapshot): SecurityDiff {
  const a = before.agent;
  const b = after.agent;
  const mcpBefore = new Map(before.mcp.map((d) => [d.name, mcpServerView(d)]));
  const mcpAfter = new Map(after.mcp.map((d) => [d.name, mcpServerView(d)]));
  const mcp: SecurityDiff['mcp'] = { added: {}, removed: [], changed: {} };
  for (const [name, v] of mcpAfter) {
    const old = mcpBefore.get(name);
    if (!old) mcp.added[name] = v;
    else if (!same(old, v)) mcp.changed[name] = { before: old, after: v };
  }
  mcp.removed = sorted([...mcpBefore.keys()].filter((n) => !mcpAfter.has(n)));
  const toolsBefore = new Map(before.tools.map((t) => [t.name, t]));
  const toolsAfter = new Map(after.tools.map((t) => [t.name, t]));
  const tools: SecurityDiff['tools'] = { added: [], removed: [], changed: [] };
  for (const [name, t] of toolsAfter) {
    const old = toolsBefore.get(name);
    if (!old) tools.added.push({ name, capability: t.capability, tier: t.isolation.tier, capabilities: sorted(t.capabilities) });
    else if (!same(toolView(old), toolView(t))) tools.changed.push({ name, before: toolView(old), after: toolView(t) });
  }
  tools.removed = sorted([...toolsBefore.keys()].filter((n) => !toolsAfter.has(n)));
  // Child agents: their grants and toolsets are bounded by the parent's, but a new or changed one is still a change of what can run.
  const agentsBefore = new Map((before.agents ?? []).map((d) => [d.name, d.source.sha256]));
  const agentsAfter = new Map((after.agents ?? []).map((d) => [d.name, d.source.sha256]));
  const agents = {
    added: sorted([...agentsAfter.keys()].filter((n) => !agentsBefore.has(n))),
    removed: sorted([...agentsBefore.keys()].filter((n) => !agentsAfter.has(n))),
    changed: sorted([...agentsAfter.keys()].filter((n) => agentsBefore.has(n) && agentsBefore.get(n) !== agentsAfter.get(n))),
  };
  const diff: Omit<SecurityDiff, 'empty'> = {
    grants: setDiff(a.grants as string[], b.grants as string[]),
    toolsets: setDiff(a.toolsets as string[], b.toolsets as string[]),
    approval: same(a.approval, b.approval) ? null : { before: a.approval, after: b.approval },
    network: same(a.network ?? null, b.network ?? null) ? null : { before: a.network ?? null, after: b.network ?? null },
    runtime: a.runtime === b.runtime ? null : { before: a.runtime, after: b.runtime },
    mcp,
    tools,
    agents,
  };
  const empty =
    diff.grants.added.length + diff.grants.removed.length + diff.toolsets.added.length + diff.toolsets.removed.length === 0 &&
    diff.approval === null &&
    diff.network === null &&
    diff.runtime === null &&
    Object.keys(mcp.added).length + mcp.removed.length + Object.keys(mcp.changed).length === 0 &&
    tools.added.length + tools.removed.length + tools.changed.length === 0 &&
    agents.added.length + agents.removed.length + agents.changed.length === 0;
  return { empty, ...diff };
}

/** One bounded line for an approval prompt: every change of authority, by name; commands and URLs in full. */
export function securitySummary(d: SecurityDiff, max = 2000): string {
  if (d.empty) return 'none';
  const parts: string[] = [];
  const list = (label: string, xs: readonly string[]): void => void (xs.length > 0 && parts.push(`${label} ${xs.join(', ')}`));
  list('+grants', d.grants.added);
  list('-grants', d.grants.removed);
  list('+toolsets', d.toolsets.added);
  list('-toolsets', d.toolsets.removed);
  if (d.approval) parts.push('approval policy changed');
  if (d.network) parts.push('network openings changed');
  if (d.runtime) parts.push(`runtime ${d.runtime.before} → ${d.runtime.after}`);
  const server = (v: McpServerView): string =>
    v.transport === 'stdio' ? `stdio ${[v.command, ...(v.args ?? [])].map((a) => JSON.stringify(a)).join(' ')}${v.env_names.length ? ` env ${v.env_names.join(',')}` : ''}` : `http ${v.url}${v.header_names.length ? ` headers ${v.header_names.join(',')}` : ''}`;
  for (const [name, v] of Object.entries(d.mcp.added)) parts.push(`+mcp ${name}: ${server(v)} (connect ${v.connect}, call ${v.call})`);
  for (const [name, c] of Object.entries(d.mcp.changed)) parts.push(`~mcp ${name}: ${server(c.before)} → ${server(c.after)}`);
  list('-mcp', d.mcp.removed);
  for (const t of d.tools.added) parts.push(`+tool ${t.name} (${t.capability}, ${t.tier}${t.capabilities.length ? `, may require ${t.capabilities.join(',')}` : ''})`);
  for (const t of d.tools.changed) parts.push(`~tool ${t.name}`);
  list('-tools', d.tools.removed);
  list('+agents', d.agents.added);
  list('~agents', d.agents.changed);
  list('-agents', d.agents.removed);
  const text = parts.join('; ');
  return text.length > max ? `${text.slice(0, max)}… (evolve_core review shows all)` : text;
}
