// The loader's result: what a core declares, bound to the exact bytes it was read from.
import { createHash } from 'node:crypto';
import type { AgentConfig } from './agent-schema.js';
import type { DeepReadonly } from './deep-freeze.js';
import type { ApprovalPolicy, RiskLevel } from './fields.js';
import type { McpDeclarationFile } from './mcp-schema.js';
import type { ScriptedModelScript } from './scripted-model-script.js';
import type { IsolationHints } from './tool-manifest-schema.js';
import type { AgentDefinitionFile } from './agent-definition-schema.js';

export interface CoreFileRecord {
  /** Core-relative posix path ('agent/tools/word_count/index.mjs'). */
  readonly path: string;
  /** sha256 of the file's bytes, lower-case hex. */
  readonly sha256: string;
}

/** An authored tool as declared by agent/tools/<name>/tool.yaml; its code has not been loaded. */
export interface AuthoredToolManifest {
  readonly name: string;
  readonly description: string;
  readonly input_schema: DeepReadonly<Record<string, unknown>>;
  /** The single dispatch gate (exact capability) a session must hold to call the tool. */
  readonly capability: string;
  readonly approval: ApprovalPolicy;
  readonly risk: RiskLevel;
  /** Capabilities the code may check with ctx.capability.require(...); never covers `capability`. */
  readonly capabilities: readonly string[];
  readonly isolation: DeepReadonly<IsolationHints>;
  /** The entry file as written, relative to the tool directory. */
  readonly entry: string;
  /** Where it came from, core-relative; entrySha256 binds the exact code the catalog entry stands for. */
  readonly source: {
    readonly dir: string;
    readonly manifest: string;
    readonly entry: string;
    readonly entrySha256: string;
  };
}

/** An MCP server declaration from agent/mcp/<file>.yaml, defaults applied. */
export type McpDeclaration = DeepReadonly<McpDeclarationFile> & {
  /** For stdio: the absolute cwd inside the workspace; null for http. */
  readonly resolvedCwd: string | null;
  readonly source: { readonly file: string; readonly sha256: string };
};

/** A child agent from agent/agents/<name>.yaml (the file name is its name), defaults applied. */
export type AgentDefinition = DeepReadonly<AgentDefinitionFile> & {
  readonly name: string;
  /** The validated script of a scripted child, else null (the child uses the parent's model). */
  readonly modelScript: DeepReadonly<ScriptedModelScript> | null;
  readonly source: { readonly file: string; readonly sha256: string };
};

export interface CoreSnapshot {
  /** Absolute real path of the core directory. */
  readonly dir: string;
  /** Absolute real path of the workspace (loadCore option, else agent.yaml `workspace`, else the core dir). */
  readonly workspace: string;
  /** sha256 (hex) over the sorted (path, sha256) listing of every file read; see computeRevision. */
  readonly revision: string;
  readonly agent: DeepReadonly<AgentConfig>;
  /** Sorted by name. */
  readonly tools: readonly AuthoredToolManifest[];
  /** Sorted by server name. */
  readonly mcp: readonly McpDeclaration[];
  /** The validated script when agent.model.provider is 'scripted', else null. */
  readonly modelScript: DeepReadonly<ScriptedModelScript> | null;
  /** Child agents delegate_task may start, sorted by name; absent when the core has no agent/agents/. */
  readonly agents?: readonly AgentDefinition[];
  /** Every file the loader read, sorted by path. */
  readonly files: readonly CoreFileRecord[];
}

const REVISION_FORMAT = 'supervisor-core-revision/1';

/**
 * The revision of a set of files: depends on paths and contents only (not mtimes, not read order).
 * JSON keeps the listing unambiguous even for file names holding newlines or tabs.
 */
export function computeRevision(files: readonly CoreFileRecord[]): string {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const canonical = JSON.stringify([REVISION_FORMAT, ...sorted.map((f) => [f.path, f.sha256])]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
