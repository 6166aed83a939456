// `supervisor catalog <core>`: the resolved catalog a session of this core would see, and its
// declared MCP servers. Listing starts nothing; `--discover` runs the same gated discovery as
// `run` (grant, then connect approval, then the server), lists what it found and closes it again.
import { cliIo } from './io.js';
import { resolve } from 'node:path';
import type { ServerStatus } from '../adapters/mcp/index.js';
import type { ResolvedEffectCatalog } from '../catalog/index.js';
import type { CoreSnapshot, McpDeclaration } from '../core/index.js';
import { foldGlobal } from '../policy/index.js';
import { displayJson, displayText } from '../redaction/index.js';
import { loadCoreForCli, openCoreSession } from './core-session.js';
import { parseFlags } from './flags.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';

export const CATALOG_HELP = `Usage: supervisor catalog <core> [--json] [--discover [--approve RULE]... [--deny RULE]...] [--state-dir DIR]

Loads the core (nothing of it is executed) and prints the catalog one turn would resolve: each
tool's name, source (builtin, authored, mcp), capability, effective approval policy (the tool's
own, made stricter by the core's global policy; the agent.yaml setting that did so is named, e.g.
"prompt (approval.default)"), risk and provenance, plus the core revision and
the catalog identity; then each declared MCP server: its transport and target, whether the core
grants mcp.connect:<server>, and its effective connect policy.

Without --discover no MCP server is started or contacted, so their tools are not listed.
  --discover        discover as \`run\` does, then close the servers again: a server is started
                    (or, over HTTP, contacted) only with its grant and an approved connect;
                    "prompt" asks on a terminal, and is denied without one unless --approve
                    settles it. Its tools join the catalog; the session is recorded.
  --approve RULE    with --discover: approve matching prompts (e.g. mcp.connect.memory)
  --deny RULE       with --discover: deny matching prompts
  --json            one JSON object: { core, revision, catalog, tools, mcp: { discovered, servers } }
`;

interface ServerRow {
  server: string;
  transport: 'stdio' | 'http';
  /** The command line, or the URL. */
  target: string;
  file: string;
  /** The core grants mcp.connect:<server>. */
  granted: boolean;
  /** The declaration's connect policy folded with the global one. */
  connect: string;
  /** not-started without --discover; else connected, denied or failed. */
  state: string;
  code: string | null;
  message: string | null;
  tools: number | null;
  /** Listed tools left out of the catalog because their input schema does not compile. */
  dropped: { tool: string; reason: string }[];
  /** For a connected server: 'new' (started by this discovery) or 'reused' (a live connection joined). */
  connection: 'new' | 'reused' | null;
}

export async function runCatalog(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json', 'discover'], value: ['state-dir'], multi: ['approve', 'deny'] }, 'catalog');
  if (f.help) {
    cliIo().stdout.write(CATALOG_HELP);
    return 0;
  }
  const [dir, ...extra] = f.positionals;
  if (extra.length > 0) throw new UsageError(`catalog takes one core directory, got another: ${extra[0]}`);
  const json = f.bool.has('json');
  const discover = f.bool.has('discover');
  if (!discover && (f.multi.has('approve') || f.multi.has('deny'))) throw new UsageError('--approve and --deny settle connect prompts, so they need --discover');

  let core: CoreSnapshot;
  let catalog: ResolvedEffectCatalog;
  let statuses: ServerStatus[] | null = null;
  if (discover) {
    if (!dir) throw new UsageError('catalog needs a core directory: supervisor catalog <core>');
    const s = await openCoreSession(
      { coreDir: dir, stateDir: resolve(f.value.get('state-dir') ?? defaultStateDir()), approve: f.multi.get('approve') ?? [], deny: f.multi.get('deny') ?? [], interactive: !json },
      'catalog',
    );
    ({ core, catalog } = s);
    statuses = s.mcp?.servers ?? [];
    await s.close('completed');
  } else {
    ({ core, catalog } = await loadCoreForCli(dir, 'catalog'));
  }

  const rows = catalog.entries.map((e) => ({
    name: e.name,
    source: e.source,
    capability: e.capability,
    // Text names the agent.yaml setting that tightened it; --json keeps the policy and adds the fields.
    approval: json || e.approvalFloor === null ? e.approval : `${e.approval} (${e.approvalFloor.replace(/: \w+$/, '')})`,
    ...(json ? { declaredApproval: e.declaredApproval, approvalFloor: e.approvalFloor } : {}),
    risk: e.risk,
    granted: catalog.capabilities.allows(e.capability),
    provenance: e.provenance,
  }));
  const servers = core.mcp.map((d) => serverRow(core, catalog, d, statuses?.find((st) => st.server === d.name) ?? null));
  if (json) {
    cliIo().stdout.write(displayJson({ core: core.dir, revision: core.revision, catalog: catalog.id, tools: rows, mcp: { discovered: discover, servers } }) + '\n');
    return 0;
  }
  cliIo().stdout.write(`core ${displayText(core.dir)}\nrevision ${core.revision}\ncatalog ${catalog.id}\n\n`);
  cliIo().stdout.write(table(rows, ['name', 'source', 'capability', 'approval', 'risk', 'granted'], 'provenance'));
  if (servers.length > 0) {
    cliIo().stdout.write(
      discover
        ? '\nMCP servers (discovered as `run` would, then closed):\n'
        : `\nMCP servers (none started; \`supervisor catalog --discover ${dir}\` connects the approved ones and lists their tools):\n`,
    );
    const shown = servers.map((r) => ({ ...r, tools: r.tools ?? '-', connection: r.connection ?? '-', why: discover ? r.message : nextStep(r) }));
    cliIo().stdout.write(table(shown, ['server', 'transport', 'granted', 'connect', 'state', 'tools', ...(discover ? ['connection' as const] : [])], 'target'));
    for (const r of shown) if (r.why) cliIo().stdout.write(`  ${displayText(r.server)}: ${displayText(r.why)}\n`);
    // Names and reasons come from the server: through the sanitiser, so no control character reaches the terminal.
    for (const r of shown) for (const x of r.dropped) cliIo().stdout.write(`  ${displayText(r.server)}: tool ${displayText(JSON.stringify(x.tool))} dropped: ${displayText(x.reason)}\n`);
  }
  return 0;
}

function serverRow(core: CoreSnapshot, catalog: ResolvedEffectCatalog, d: McpDeclaration, st: ServerStatus | null): ServerRow {
  const capability = `mcp.connect:${d.name}`;
  const rules = Object.entries(core.agent.approval.rules).map(([c, p]) => ({ capability: c, policy: p }));
  const t = d.transport;
  return {
    server: d.name,
    transport: t.type,
    target: t.type === 'stdio' ? [t.command, ...t.args].join(' ') : t.url,
    file: d.source.file,
    granted: catalog.capabilities.allows(capability),
    connect: foldGlobal(d.approval.connect ?? 'prompt', core.agent.approval.default, rules, capability),
    state: st ? st.state : 'not-started',
    code: st?.code ?? null,
    message: st?.message ?? null,
    tools: st ? (st.state === 'connected' ? catalog.entries.filter((e) => e.source === 'mcp' && e.capability === `mcp.call:${d.name}`).length : 0) : null,
    dropped: st?.dropped ?? [],
    connection: st?.connection ?? null,
  };
}

/** What would happen to a server not discovered here. */
function nextStep(r: ServerRow): string {
  if (!r.granted) return `never started: the core does not grant mcp.connect:${r.server} (${r.file})`;
  if (r.connect === 'deny') return `never started: its connect policy is deny (${r.file})`;
  if (r.connect === 'auto') return 'connects without asking when a session discovers it';
  return 'asks for connect approval when a session discovers it';
}

function table(raw: readonly Record<string, unknown>[], cols: readonly string[], last: string): string {
  // Names and provenances can come from an MCP server: shown through the one display sanitiser.
  const rows = raw.map((r) => Object.fromEntries([...cols, last].map((c) => [c, displayText(String(r[c]))])));
  const w = (k: string): number => Math.max(k.length, ...rows.map((r) => String(r[k]).length));
  const widths = cols.map(w);
  const line = (r: Record<string, unknown>): string => cols.map((c, i) => String(r[c]).padEnd(widths[i]!)).join('  ') + `  ${String(r[last])}`;
  return [line(Object.fromEntries([...cols, last].map((c) => [c, c]))), ...rows.map(line)].join('\n') + '\n';
}
