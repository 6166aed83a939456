// loadCore: a core directory in, one deeply frozen snapshot with a content revision out.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { AgentConfigSchema, trustedToolsCrossCheck, type AgentConfig } from './agent-schema.js';
import { CoreReader } from './core-files.js';
import { deepFreeze } from './deep-freeze.js';
import { CoreLoadError, type CoreIssue } from './errors.js';
import { loadAgentDefinitions } from './load-agents.js';
import { loadMcpDeclarations } from './load-mcp.js';
import { loadAuthoredTools } from './load-tools.js';
import { secretsCrossCheck } from './secrets-schema.js';
import { checkSecretSources } from './secret-source-rules.js';
import { checkScriptedModelScript, type ScriptedModelScript } from './scripted-model-script.js';
import { computeRevision, type CoreSnapshot } from './snapshot.js';
import { parseYaml, type YamlSource } from './yaml-source.js';
import { at, parseWith } from './zod-issues.js';

export const AGENT_FILE = 'agent.yaml';

export interface LoadCoreOptions {
  /** Overrides agent.yaml `workspace`; relative paths resolve against process.cwd(). */
  readonly workspace?: string;
}

/**
 * Reads and validates a core without executing any of its code. Throws CoreLoadError (code
 * CORE_INVALID) listing every issue found; otherwise returns a deeply frozen snapshot.
 */
export async function loadCore(dir: string, opts: LoadCoreOptions = {}): Promise<CoreSnapshot> {
  const root = await coreRoot(dir);
  const reader = new CoreReader(root);
  const issues = reader.issues;

  const agentSource = await readAgentSource(reader);
  const agentResult = agentSource === null ? null : parseWith(AgentConfigSchema, agentSource);
  if (agentResult !== null && !agentResult.ok) issues.push(...agentResult.issues);
  const agent: AgentConfig | null = agentResult?.ok === true ? agentResult.data : null;
  const workspace = await resolveWorkspace(root, opts, agent, agentSource, issues);
  const modelScript = agent !== null && agentSource !== null ? await readModelScript(reader, agent, agentSource) : null;
  const tools = await loadAuthoredTools(reader);
  const mcp = await loadMcpDeclarations(reader, workspace, agent?.network ?? null);
  const agents = await loadAgentDefinitions(reader, agent);
  if (agent !== null && agentSource !== null) {
    // Authored tools may take bindings too: their handler reads them from ctx.secrets.
    for (const p of secretsCrossCheck(agent, tools.map((t) => t.name))) issues.push(at(agentSource, p.path, p.message));
    for (const p of trustedToolsCrossCheck(agent, tools.map((t) => t.name))) issues.push(at(agentSource, p.path, p.message));
    // A secret file the agent's own commands could read (inside the workspace, or hard-linked) is refused.
    if (workspace !== null) for (const p of await checkSecretSources(agent, root, workspace)) issues.push(at(agentSource, p.path, p.message));
  }

  if (issues.length > 0 || agent === null || workspace === null) {
    throw new CoreLoadError(root, issues.length > 0 ? issues : [{ file: AGENT_FILE, field: '', message: 'could not be validated; see the issues above' }]);
  }
  const files = reader.records();
  // Optional, so a core without child agents keeps its exact snapshot shape.
  return deepFreeze({ dir: root, workspace, revision: computeRevision(files), agent, tools, mcp, modelScript, ...(agents.length > 0 ? { agents } : {}), files }) as CoreSnapshot;
}

async function coreRoot(dir: string): Promise<string> {
  const abs = path.resolve(dir);
  const fail = (message: string): never => {
    throw new CoreLoadError(abs, [{ file: '.', field: '', message }]);
  };
  let real = '';
  try {
    real = await fs.realpath(abs);
  } catch {
    fail(`${abs} does not exist; pass the path of a core directory (one holding ${AGENT_FILE})`);
  }
  const st = await fs.stat(real);
  if (!st.isDirectory()) fail(`${abs} is not a directory; pass the core directory, not a file in it`);
  return real;
}

async function readAgentSource(reader: CoreReader): Promise<YamlSource | null> {
  const file = await reader.read(AGENT_FILE, "is missing; a core is a directory with agent.yaml at its root, e.g. 'name: my-agent' (see docs/core-format.md)");
  if (file === null) return null;
  const parsed = parseYaml(file.bytes.toString('utf8'), AGENT_FILE);
  if (parsed.ok) return parsed.source;
  reader.issues.push(...parsed.issues);
  return null;
}

/** The real workspace directory, or null (with an issue) when it does not exist. */
async function resolveWorkspace(root: string, opts: LoadCoreOptions, agent: AgentConfig | null, source: YamlSource | null, issues: CoreIssue[]): Promise<string | null> {
  let written: string;
  let abs: string;
  let report: (message: string) => void;
  if (opts.workspace !== undefined) {
    written = opts.workspace;
    abs = path.resolve(opts.workspace);
    report = (message) => issues.push({ file: '(loadCore options)', field: 'workspace', message });
  } else {
    // agent.yaml may be invalid elsewhere; its workspace still decides where MCP cwds are checked.
    const raw = agent?.workspace ?? (source?.value as { workspace?: unknown } | null)?.workspace;
    written = typeof raw === 'string' && raw.length > 0 ? raw : '.';
    abs = path.resolve(root, written);
    report = (message) => issues.push(source === null ? { file: AGENT_FILE, field: 'workspace', message } : at(source, ['workspace'], message));
  }
  try {
    const real = await fs.realpath(abs);
    if ((await fs.stat(real)).isDirectory()) return real;
    report(`'${written}' (${abs}) is not a directory; point workspace at a directory`);
  } catch {
    report(`'${written}' (${abs}) does not exist; create it or point workspace at an existing directory (relative paths are relative to the core)`);
  }
  return null;
}

async function readModelScript(reader: CoreReader, agent: AgentConfig, source: YamlSource): Promise<ScriptedModelScript | null> {
  if (agent.model?.provider !== 'scripted') return null;
  const rel = path.posix.normalize(agent.model.script);
  const file = await reader.read(rel, null);
  if (file === null) {
    if (!(await reader.exists(rel))) reader.issues.push(at(source, ['model', 'script'], `'${agent.model.script}' does not exist in the core; add the script file or fix the path (relative to the core)`));
    return null;
  }
  const r = checkScriptedModelScript(file.bytes.toString('utf8'), rel);
  if (r.ok) return r.script;
  reader.issues.push(...r.issues);
  return null;
}
