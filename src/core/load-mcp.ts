// agent/mcp/*.yaml: declarations only; nothing connects and no command runs here.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { CoreReader } from './core-files.js';
import { deepFreeze } from './deep-freeze.js';
import { McpDeclarationSchema } from './mcp-schema.js';
import { isInside } from './path-rules.js';
import type { McpDeclaration } from './snapshot.js';
import { parseYaml } from './yaml-source.js';
import { at, parseWith } from './zod-issues.js';

export const MCP_DIR = 'agent/mcp';

/**
 * Reads every declaration; `workspace` is the real workspace path, or null when it is unknown
 * (then cwd is not checked, since agent.yaml already has an issue). Sorted by server name.
 */
export async function loadMcpDeclarations(reader: CoreReader, workspace: string | null): Promise<McpDeclaration[]> {
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
    const file = await reader.read(e.rel, null);
    if (file === null) continue;
    const parsed = parseYaml(file.bytes.toString('utf8'), e.rel);
    if (!parsed.ok) {
      reader.issues.push(...parsed.issues);
      continue;
    }
    const r = parseWith(McpDeclarationSchema, parsed.source);
    if (!r.ok) {
      reader.issues.push(...r.issues);
      continue;
    }
    const d = r.data;
    const first = byName.get(d.name);
    if (first !== undefined) {
      reader.issues.push(at(parsed.source, ['name'], `server name '${d.name}' is already declared in ${first}; rename one of them (a server name prefixes its tools and its mcp.connect:<server> grant, so it must be unique)`));
      continue;
    }
    byName.set(d.name, e.rel);
    let resolvedCwd: string | null = null;
    if (d.transport.type === 'stdio' && workspace !== null) {
      const problem = await cwdProblem(d.transport.cwd, workspace);
      if (problem !== null) {
        reader.issues.push(at(parsed.source, ['transport', 'cwd'], problem));
        continue;
      }
      resolvedCwd = path.resolve(workspace, d.transport.cwd);
    }
    out.push(deepFreeze({ ...d, resolvedCwd, source: { file: e.rel, sha256: file.sha256 } }) as McpDeclaration);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** cwd must stay inside the workspace, as written and, when it exists, after symlinks. */
async function cwdProblem(cwd: string, workspace: string): Promise<string | null> {
  if (cwd.includes('\0')) return 'contains a NUL byte; write a plain path';
  const abs = path.resolve(workspace, cwd);
  if (!isInside(workspace, abs)) return `'${cwd}' leaves the workspace; use a path inside ${workspace}, e.g. '.'`;
  try {
    const real = await fs.realpath(abs);
    if (!isInside(workspace, real)) return `'${cwd}' resolves through a symlink to ${real}, outside the workspace; use a path inside ${workspace}`;
  } catch {
    // A cwd that does not exist yet is checked again before the server starts.
  }
  return null;
}
