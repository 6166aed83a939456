// One immutable catalog per turn. Provider definitions, tools_list, capability and approval
// metadata and dispatch all read the same entries; nothing looks a tool up by name afterwards
// except the turn engine turning a model's call into an EffectRequest for *this* catalog.
import { createHash } from 'node:crypto';
import type { CoreSnapshot, DiscoveredMcpTool } from '../core/index.js';
import { CapabilitySnapshot, foldGlobalExplained, ruleVocabulary, stricter, unreachableConfigRule, type ApprovalFloor, type ApprovalPolicy } from '../policy/index.js';
import { BUILTIN_TOOLSET_DEFINITIONS, TOOLS_LIST, type BuiltinDefinition } from './builtin-definitions.js';

export type SourceKind = 'builtin' | 'authored' | 'mcp';

/** The one grant every catalog carries without the core naming it. */
export const IMPLICIT_GRANT = 'catalog.read';

export interface CatalogEntry {
  /** Opaque, unique to this catalog: `<catalog id>#<n>`. */
  readonly ref: string;
  readonly name: string;
  readonly description: string;
  readonly source: SourceKind;
  readonly coreRevision: string;
  readonly adapterKey: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly capability: string;
  /** Declared policy folded with the core's global policy: never less strict than declared. */
  readonly approval: ApprovalPolicy;
  /** The policy its source declared (a manifest, an MCP declaration, a builtin definition). */
  readonly declaredApproval: ApprovalPolicy;
  /**
   * The agent.yaml setting that made `approval` stricter than declared, as a person writes it
   * (`approval.default: prompt`, `approval.rules["net.*"]: prompt`, `tools.deploy.approval: deny`);
   * null when the entry's own declaration decides.
   */
  readonly approvalFloor: string | null;
  readonly risk: 'low' | 'medium' | 'high';
  /** Where the entry came from, for people: a toolset, a manifest path, an MCP declaration. */
  readonly provenance: string;
}

// What the MCP host hands the catalog per discovered tool: one type, in core, for both sides.
export type { DiscoveredMcpTool } from '../core/index.js';

/** The adapter key of an MCP entry: server, connection and the server's own tool name. */
export function mcpAdapterKey(server: string, connection: string, serverTool: string): string {
  return `mcp:${server}/${connection}/${encodeURIComponent(serverTool)}`;
}

export interface CatalogIdentityInput {
  principal: string;
  capabilities: CapabilitySnapshot;
  coreRevision: string;
  workspace: string;
  /**
   * The effective connect policy, canonical: per declared MCP server its declaration fingerprint,
   * whether it is connected (or denied, failed) and its manifest fingerprint. Any change is a new
   * catalog, so a stale one (old tools, closed connection) is never reused.
   */
  connectPolicy: string;
}

export class CatalogBuildError extends Error {
  readonly code: 'CATALOG_NAME_COLLISION' | 'CATALOG_UNKNOWN_OVERRIDE' | 'CATALOG_UNREACHABLE_RULE';
  constructor(code: CatalogBuildError['code'], message: string) {
    super(message);
    this.name = 'CatalogBuildError';
    this.code = code;
  }
}

/** Any change of principal, grants, core revision, workspace or connect policy is a new catalog. */
export function catalogIdentity(i: CatalogIdentityInput): string {
  const h = createHash('sha256');
  h.update(JSON.stringify(['catalog/1', i.principal, i.capabilities.digest, i.coreRevision, i.workspace, i.connectPolicy]));
  return `cat_${h.digest('hex').slice(0, 32)}`;
}

export class ResolvedEffectCatalog {
  readonly id: string;
  readonly entries: readonly CatalogEntry[];
  readonly capabilities: CapabilitySnapshot;
  readonly principal: string;
  readonly core: CoreSnapshot;
  /** MCP tools left out of this catalog, each with why (a name another source already defines). */
  readonly droppedMcpTools: readonly { name: string; server: string; reason: string }[];
  private readonly byNameMap: ReadonlyMap<string, CatalogEntry>;
  private readonly refs: ReadonlySet<string>;

  constructor(identity: CatalogIdentityInput, core: CoreSnapshot, entries: CatalogEntry[], droppedMcpTools: readonly { name: string; server: string; reason: string }[] = []) {
    this.id = catalogIdentity(identity);
    this.droppedMcpTools = Object.freeze(droppedMcpTools.map((d) => Object.freeze({ ...d })));
    this.principal = identity.principal;
    this.capabilities = identity.capabilities;
    this.core = core;
    this.entries = Object.freeze(entries.map((e) => Object.freeze(e)));
    this.byNameMap = new Map(this.entries.map((e) => [e.name, e]));
    this.refs = new Set(this.entries.map((e) => e.ref));
    Object.freeze(this);
  }

  /** The turn engine's one lookup: a model's call names an entry of this catalog. */
  entryForCall(name: string): CatalogEntry | undefined {
    return this.byNameMap.get(name);
  }

  /** True only for the very entry objects of this catalog (not a lookalike, not another catalog's). */
  owns(entry: CatalogEntry): boolean {
    return this.refs.has(entry.ref) && this.byNameMap.get(entry.name) === entry;
  }

  /** What a model provider is told: names, descriptions and input schemas, nothing internal. */
  providerDefinitions(): { name: string; description: string; input_schema: Readonly<Record<string, unknown>> }[] {
    return this.entries.map((e) => ({ name: e.name, description: e.description, input_schema: e.inputSchema }));
  }
}

export interface BuildCatalogInput {
  core: CoreSnapshot;
  principal: string;
  mcpTools?: readonly DiscoveredMcpTool[];
  connectPolicy?: string;
  /**
   * A delegated child's catalog (src/session/delegation.ts): only entries with these names (and
   * tools_list); the parent's agent.yaml overrides and rules were checked when the parent's core
   * loaded, so one that names a tool the child lacks is left out rather than refused.
   */
  child?: { readonly tools: readonly string[] | null };
}

/** What a catalog built from `input` would be identified by (the cache compares this). */
export function identityInputFor(input: BuildCatalogInput): CatalogIdentityInput {
  return {
    principal: input.principal,
    // Every session may read its own catalog (tools_list): the model already sees these definitions.
    capabilities: CapabilitySnapshot.from([...input.core.agent.grants, IMPLICIT_GRANT]),
    coreRevision: input.core.revision,
    workspace: input.core.workspace,
    connectPolicy: input.connectPolicy ?? '',
  };
}

/** The agent.yaml setting that set an entry's policy, in the file's own spelling (see CatalogEntry.approvalFloor). */
function floorText(policy: ApprovalPolicy, floor: ApprovalFloor, override: string | null): string | null {
  if (floor?.kind === 'default') return `approval.default: ${policy}`;
  if (floor?.kind === 'rule') return `approval.rules[${JSON.stringify(floor.capability)}]: ${policy}`;
  return override;
}

export function buildCatalog(input: BuildCatalogInput): ResolvedEffectCatalog {
  const { core } = input;
  const identity = identityInputFor(input);
  const id = catalogIdentity(identity);
  const rules = Object.entries(core.agent.approval.rules).map(([capability, policy]) => ({ capability, policy }));
  const overrides = core.agent.tools;
  const entries: CatalogEntry[] = [];
  const seen = new Map<string, CatalogEntry>();
  const add = (e: Omit<CatalogEntry, 'ref' | 'approval' | 'coreRevision' | 'declaredApproval' | 'approvalFloor'> & { declared: ApprovalPolicy }): void => {
    const prior = seen.get(e.name);
    if (prior) {
      const fix = prior.source === 'builtin' || e.source === 'builtin' ? 'rename the authored or MCP tool' : 'rename one of them';
      throw new CatalogBuildError(
        'CATALOG_NAME_COLLISION',
        `tool name "${e.name}" is defined twice: by ${prior.provenance} and by ${e.provenance}; ${fix} (there is no implicit priority)`,
      );
    }
    if (input.child && input.child.tools !== null && e.name !== TOOLS_LIST.name && !input.child.tools.includes(e.name)) return;
    const override = overrides[e.name];
    // An agent.yaml override is one more input to the fold: it can tighten, never relax.
    const declared = override?.approval ? stricter(e.declared, override.approval) : e.declared;
    const folded = foldGlobalExplained(declared, core.agent.approval.default, rules, e.capability);
    const { declared: _d, ...rest } = e;
    const entry: CatalogEntry = {
      ...rest,
      description: override?.description ?? e.description,
      risk: override?.risk && riskRank(override.risk) > riskRank(e.risk) ? override.risk : e.risk,
      ref: `${id}#${entries.length}`,
      coreRevision: core.revision,
      approval: folded.policy,
      declaredApproval: e.declared,
      approvalFloor: floorText(folded.policy, folded.floor, declared !== e.declared ? `tools.${e.name}.approval: ${declared}` : null),
    };
    seen.set(entry.name, entry);
    entries.push(entry);
  };
  const builtin = (d: BuiltinDefinition): void =>
    add({
      name: d.name,
      description: d.description,
      source: 'builtin',
      adapterKey: d.adapterKey,
      inputSchema: d.inputSchema,
      capability: d.capability,
      declared: d.approval,
      risk: d.risk,
      provenance: `builtin toolset "${d.toolset}"`,
    });
  builtin(TOOLS_LIST);
  for (const toolset of core.agent.toolsets) for (const d of BUILTIN_TOOLSET_DEFINITIONS[toolset] ?? []) builtin(d);
  for (const t of core.tools) {
    add({
      name: t.name,
      description: t.description,
      source: 'authored',
      adapterKey: `authored:${t.name}`,
      inputSchema: t.input_schema as Record<string, unknown>,
      capability: t.capability,
      declared: t.approval,
      risk: t.risk,
      provenance: `authored tool ${t.source.manifest}`,
    });
  }
  // A server's tool list is data from outside: a name that another source already defines drops
  // that one tool with the reason, never the whole catalog (a remote server could end any run).
  const droppedMcpTools: { name: string; server: string; reason: string }[] = [];
  for (const m of input.mcpTools ?? []) {
    const prior = seen.get(m.name);
    if (prior) {
      droppedMcpTools.push({ name: m.name, server: m.server, reason: `its name "${m.name}" is already defined by ${prior.provenance}; rename one of them (MCP include/exclude in ${m.declarationFile}, or the other tool)` });
      continue;
    }
    add({
      name: m.name,
      description: m.description,
      source: 'mcp',
      adapterKey: mcpAdapterKey(m.server, m.connection, m.serverTool),
      inputSchema: m.inputSchema,
      capability: `mcp.call:${m.server}`,
      declared: m.approval,
      risk: m.risk ?? 'medium',
      provenance: `MCP server "${m.server}" (${m.declarationFile})`,
    });
  }
  for (const name of Object.keys(overrides)) {
    if (!seen.has(name) && !input.child) {
      throw new CatalogBuildError(
        'CATALOG_UNKNOWN_OVERRIDE',
        `agent.yaml: tools.${name}: no tool of that name in this catalog (tools: ${[...seen.keys()].join(', ')}); fix the name or remove the override`,
      );
    }
  }
  if (!input.child) checkConfigRules(core, entries);
  return new ResolvedEffectCatalog(identity, core, entries, droppedMcpTools);
}

/**
 * agent.yaml approval.rules keys must each cover a capability some entry (or a declared MCP
 * server's connect or calls) requires: a rule that can never apply is a typo, and a `deny` typo
 * fails open. MCP capabilities are known from the declarations before discovery.
 */
function checkConfigRules(core: CoreSnapshot, entries: readonly CatalogEntry[]): void {
  const patterns = Object.keys(core.agent.approval.rules);
  if (patterns.length === 0) return;
  const vocab = ruleVocabulary(entries, core.mcp.map((d) => d.name));
  patterns.forEach((pattern, i) => {
    const problem = unreachableConfigRule(pattern, i, vocab);
    if (problem !== undefined) throw new CatalogBuildError('CATALOG_UNREACHABLE_RULE', problem);
  });
}

function riskRank(r: 'low' | 'medium' | 'high'): number {
  return r === 'low' ? 0 : r === 'medium' ? 1 : 2;
}
