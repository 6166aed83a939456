// `supervisor catalog <core>`: the resolved catalog a session of this core would see.
import { loadCoreForCli } from './core-session.js';
import { UsageError } from './usage.js';

export const CATALOG_HELP = `Usage: supervisor catalog <core> [--json]

Loads the core (nothing of it is executed) and prints the catalog one turn would resolve: each
tool's name, source (builtin, authored, mcp), capability, effective approval policy (the tool's
own, made stricter by the core's global policy), risk and provenance, plus the core revision and
the catalog identity. MCP servers are not started here (discovery needs a session and its
connect approvals): their tools appear in the catalogs of \`run\` and \`call\`.
`;

export async function runCatalog(argv: string[]): Promise<number> {
  let json = false;
  let dir: string | undefined;
  for (const a of argv) {
    if (a === '--json') json = true;
    else if (a === '-h' || a === '--help') {
      process.stdout.write(CATALOG_HELP);
      return 0;
    } else if (a.startsWith('-')) throw new UsageError(`unknown option ${a} for catalog; see supervisor catalog --help`);
    else if (dir === undefined) dir = a;
    else throw new UsageError(`catalog takes one core directory, got another: ${a}`);
  }
  const { core, catalog } = await loadCoreForCli(dir, 'catalog');
  const rows = catalog.entries.map((e) => ({
    name: e.name,
    source: e.source,
    capability: e.capability,
    approval: e.approval,
    risk: e.risk,
    granted: catalog.capabilities.allows(e.capability),
    provenance: e.provenance,
  }));
  if (json) {
    process.stdout.write(JSON.stringify({ core: core.dir, revision: core.revision, catalog: catalog.id, tools: rows }) + '\n');
    return 0;
  }
  const w = (k: keyof (typeof rows)[number]): number => Math.max(k.length, ...rows.map((r) => String(r[k]).length));
  const cols = ['name', 'source', 'capability', 'approval', 'risk', 'granted'] as const;
  const line = (r: Record<string, unknown>): string => cols.map((c) => String(r[c]).padEnd(w(c))).join('  ') + `  ${r.provenance}`;
  process.stdout.write(`core ${core.dir}\nrevision ${core.revision}\ncatalog ${catalog.id}\n\n`);
  process.stdout.write(line({ name: 'name', source: 'source', capability: 'capability', approval: 'approval', risk: 'risk', granted: 'granted', provenance: 'provenance' }) + '\n');
  for (const r of rows) process.stdout.write(line(r) + '\n');
  return 0;
}
