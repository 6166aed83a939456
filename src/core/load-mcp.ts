// agent/mcp/*.yaml: declarations only; nothing connects and no command runs here.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { UrlPolicyError } from '../net/errors.js';
import { checkUrl } from '../net/url-policy.js';
import type { NetworkConfig } from './agent-schema.js';
import type { CoreReader } from './core-files.js';
import { deepFreeze } from './deep-freeze.js';
import { McpDeclarationSchema } from './mcp-schema.js';
import { isInside } from './path-rules.js';
import type { McpDeclaration } from './snapshot.js';
import { readValidatedYaml } from './read-validated.js';
import { at } from './zod-issues.js';

export const MCP_DIR = 'agent/mcp';

/**
 * Reads every declaration; `workspace` is the real workspace path, or null when it is unknown
 * (then cwd is not checked, since agent.yaml already has an issue). Sorted by server name.
 */
export async function loadMcpDeclarations(reader: CoreReader, workspace: string | null, network?: NetworkConfig | null): Promise<McpDeclaration[]> {
  const entries = await reader.list(MCP_DIR, null);
  const byName = new Map<string, string>();
  const out: McpDeclaration[] = [];
  for (const e of entries ?? []) {
    if (e.name.startsWith('.')) continue;
    if (e.kind !== 'file' || !e.name.endsWith('.yaml')) {
      const fix = e.name.endsWith('.yml') ? `rename it to ${e.name.slice(0, -4)}.yaml` : `move it out of ${MCP_DIR}/`;
      reader.issue(e.rel, `is not an MCP declaration; ${MCP_DIR}/ holds only <name>.yaml files, so ${fix}`);
      continue;
    }
    const read = await readValidatedYaml(reader, e.rel, McpDeclarationSchema);
    if (read === null) continue;
    const { file, source, data: d } = read;
    const first = byName.get(d.name);
    if (first !== undefined) {
      reader.issues.push(at(source, ['name'], `server name '${d.name}' is already declared in ${first}; rename one of them (a server name prefixes its tools and its mcp.connect:<server> grant, so it must be unique)`));
      continue;
    }
    byName.set(d.name, e.rel);
    if (d.transport.type === 'http') {
      // The rules that need no DNS (scheme, local names, literal addresses) fail the load here, with
      // the file and field; the DNS answers are judged again when the server is connected.
      const problem = urlProblem(d.transport.url, mcpNetworkAllowlist(network, d.transport.network));
      if (problem !== null) {
        reader.issues.push(at(source, ['transport', 'url'], problem));
        continue;
      }
    }
    let resolvedCwd: string | null = null;
    if (d.transport.type === 'stdio' && workspace !== null) {
      const problem = await workspacePathProblem(d.transport.cwd, workspace, '.');
      if (problem !== null) {
        reader.issues.push(at(source, ['transport', 'cwd'], problem));
        continue;
      }
      resolvedCwd = path.resolve(workspace, d.transport.cwd);
    }
    const transport = d.transport.type === 'stdio' ? await withWorkspacePaths(d.transport, workspace, (i, problem) => reader.issues.push(at(source, ['transport', 'env', i, 'value', 'workspace_path'], problem))) : d.transport;
    if (transport === null) continue;
    out.push(deepFreeze({ ...d, transport, resolvedCwd, source: { file: e.rel, sha256: file.sha256 } }) as McpDeclaration);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/**
 * The stdio transport with every `{ workspace_path }` env value made an absolute path below the
 * workspace (checked as cwd is), or null after reporting a problem. A convenience for programs that
 * resolve a relative path against their install directory, not a boundary: the server runs as the
 * user, unsandboxed, and can open any file the user can.
 */
async function withWorkspacePaths<T extends { env: readonly { name: string; value: unknown }[] }>(
  transport: T,
  workspace: string | null,
  report: (index: number, problem: string) => void,
): Promise<T | null> {
  let ok = true;
  const env = [];
  for (const [i, e] of transport.env.entries()) {
    const ref = e.value as { workspace_path?: unknown } | string | null;
    if (ref === null || typeof ref !== 'object' || typeof ref.workspace_path !== 'string') {
      env.push(e);
      continue;
    }
    const problem = workspace === null ? 'needs a workspace, and this core has none' : await workspacePathProblem(ref.workspace_path, workspace, 'data/memory.jsonl');
    if (problem !== null) {
      report(i, problem);
      ok = false;
      continue;
    }
    env.push({ ...e, value: path.resolve(workspace!, ref.workspace_path) });
  }
  return ok ? { ...transport, env } : null;
}

/**
 * A path (a cwd, or a file the server will make) must stay inside the workspace as written and
 * through the symlinks of the part that exists now: the file, or the nearest directory above it.
 */
async function workspacePathProblem(written: string, workspace: string, example: string): Promise<string | null> {
  if (written.includes('\0')) return 'contains a NUL byte; write a plain path';
  const abs = path.resolve(workspace, written);
  if (!isInside(workspace, abs)) return `'${written}' leaves the workspace; use a path inside ${workspace}, e.g. '${example}'`;
  for (let p = abs; isInside(workspace, p); p = path.dirname(p)) {
    try {
      const real = await fs.realpath(p);
      if (!isInside(workspace, real)) return `'${written}' resolves through a symlink to ${real}, outside the workspace; use a path inside ${workspace}`;
      return null;
    } catch {
      if (p === workspace) return null;
    }
  }
  return null;
}

interface NetworkLike {
  readonly allow_hosts: readonly string[];
  readonly allow_cidrs: readonly string[];
}

/** What an HTTP MCP server may reach: agent.yaml `network:` plus the declaration's own `transport.network`. */
export function mcpNetworkAllowlist(core: Readonly<NetworkLike> | null | undefined, own: Readonly<NetworkLike> | null | undefined): { hosts: string[]; cidrs: string[] } {
  return { hosts: [...(core?.allow_hosts ?? []), ...(own?.allow_hosts ?? [])], cidrs: [...(core?.allow_cidrs ?? []), ...(own?.allow_cidrs ?? [])] };
}

function urlProblem(url: string, allow: { hosts: string[]; cidrs: string[] }): string | null {
  try {
    checkUrl(url, allow);
    return null;
  } catch (err) {
    if (!(err instanceof UrlPolicyError)) throw err;
    return `is refused by the URL policy (${err.message}); a server on this machine or a private network needs an explicit opening: add e.g. transport.network: { allow_cidrs: ['127.0.0.1/32'] } to this declaration (this server only) or network: to agent.yaml`;
  }
}
