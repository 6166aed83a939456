// Where a `file:` secret may live. Every terminal command can read the workspace (an auto-approved
// one too, inside its sandbox), so a secret source inside it is readable by the agent's own
// commands; a file with a second hard link can be read through the other name wherever that is.
// Both are refused when the core is loaded, naming the field, the file and the fix.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { AgentConfig } from './agent-schema.js';

export interface SecretSourceProblem {
  path: (string | number)[];
  message: string;
}

/** Absolute paths stay as written; relative ones are relative to the core directory (as src/secrets reads them). */
export function secretSourcePath(written: string, coreDir: string): string {
  if (path.isAbsolute(written)) return path.normalize(written);
  return path.resolve(coreDir, ...written.split('/'));
}

/** Every declared `file:` source as the supervisor will open it (for the sandbox's masks). */
export function secretSourcePaths(core: { dir: string; agent: Pick<AgentConfig, 'secrets'> }): string[] {
  const out: string[] = [];
  for (const decl of Object.values(core.agent.secrets ?? {})) if (decl.file !== undefined) out.push(secretSourcePath(decl.file, core.dir));
  return out;
}

/** Problems with each declared `file:` source, against the resolved workspace (a realpath). */
export async function checkSecretSources(agent: AgentConfig, coreDir: string, workspace: string): Promise<SecretSourceProblem[]> {
  const problems: SecretSourceProblem[] = [];
  for (const [name, decl] of Object.entries(agent.secrets ?? {})) {
    if (decl.file === undefined) continue;
    const field = ['secrets', name, 'file'];
    const file = secretSourcePath(decl.file, coreDir);
    const real = await realpathOfFileOrParent(file);
    const inside = [file, real].find((p) => p !== null && within(p, workspace));
    if (inside !== undefined) {
      problems.push({
        path: field,
        message: `'${decl.file}' resolves to ${inside}, inside the workspace ${workspace}, where every terminal command can read it (symlinks and '..' followed); move the file out of the workspace (e.g. to ~/.config/<agent>/${name.toLowerCase()}, chmod 600) and write its absolute path, or point workspace at a directory that does not contain it`,
      });
      continue;
    }
    const links = await linkCount(file);
    if (links !== null && links > 1) {
      problems.push({
        path: field,
        message: `'${decl.file}' (${file}) has ${links} hard links: the same bytes can be read under another name, which no mask covers; keep one link (remove the others, or copy the credential into a new file with chmod 600)`,
      });
    }
  }
  return problems;
}

/** The file's realpath; for a file not created yet, its parent's realpath joined with its name. */
async function realpathOfFileOrParent(file: string): Promise<string | null> {
  try {
    return await fs.realpath(file);
  } catch {
    try {
      return path.join(await fs.realpath(path.dirname(file)), path.basename(file));
    } catch {
      return null;
    }
  }
}

async function linkCount(file: string): Promise<number | null> {
  try {
    return (await fs.stat(file)).nlink;
  } catch {
    return null;
  }
}

function within(p: string, root: string): boolean {
  return p === root || p.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}
