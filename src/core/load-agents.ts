// agent/agents/<name>.yaml: child agent definitions for delegate_task. Read and validated like
// every core file; nothing runs here. A scripted child's script is read and checked now too.
import * as path from 'node:path';
import type { AgentConfig } from './agent-schema.js';
import { AgentDefinitionSchema } from './agent-definition-schema.js';
import type { CoreReader } from './core-files.js';
import { deepFreeze } from './deep-freeze.js';
import { TOOL_NAME_PATTERN, TOOL_NAME_RULE } from './names.js';
import { checkScriptedModelScript } from './scripted-model-script.js';
import type { AgentDefinition } from './snapshot.js';
import { readValidatedYaml } from './read-validated.js';
import { at } from './zod-issues.js';

export const AGENTS_DIR = 'agent/agents';

/** Every definition, sorted by name; problems go to the reader's issues. */
export async function loadAgentDefinitions(reader: CoreReader, agent: AgentConfig | null): Promise<AgentDefinition[]> {
  const entries = await reader.list(AGENTS_DIR, null);
  const out: AgentDefinition[] = [];
  for (const e of entries ?? []) {
    if (e.name.startsWith('.')) continue;
    if (e.kind !== 'file' || !e.name.endsWith('.yaml')) {
      const fix = e.name.endsWith('.yml') ? `rename it to ${e.name.slice(0, -4)}.yaml` : `move it out of ${AGENTS_DIR}/ (a child's script may live anywhere else in the core)`;
      reader.issue(e.rel, `is not an agent definition; ${AGENTS_DIR}/ holds only <name>.yaml files, so ${fix}`);
      continue;
    }
    const name = e.name.slice(0, -'.yaml'.length);
    if (!TOOL_NAME_PATTERN.test(name)) {
      reader.issue(e.rel, `the file name is the agent's name, and '${name}' ${TOOL_NAME_RULE}; rename the file`);
      continue;
    }
    const read = await readValidatedYaml(reader, e.rel, AgentDefinitionSchema);
    if (read === null) continue;
    const { file, source, data: d } = read;
    let modelScript: unknown = null;
    if (d.model !== undefined) {
      const rel = path.posix.normalize(d.model.script);
      const script = await reader.read(rel, null);
      if (script === null) {
        if (!(await reader.exists(rel))) reader.issues.push(at(source, ['model', 'script'], `'${d.model.script}' does not exist in the core; add the script file or fix the path (relative to the core)`));
        continue;
      }
      const checked = checkScriptedModelScript(script.bytes.toString('utf8'), rel);
      if (!checked.ok) {
        reader.issues.push(...checked.issues);
        continue;
      }
      modelScript = checked.script;
    } else if (agent?.model?.provider === 'scripted') {
      // The parent's script replays the parent's conversation, never a child's.
      reader.issues.push(at(source, ['model'], "is required when agent.yaml's model is scripted; add model: { provider: scripted, script: <file> } with the child's own script"));
      continue;
    }
    out.push(deepFreeze({ name, ...d, modelScript, source: { file: e.rel, sha256: file.sha256 } }) as AgentDefinition);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}
