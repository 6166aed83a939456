// agent/tools/<name>/: manifests are read and every file hashed; the code is never imported here.
import * as path from 'node:path';
import type { CoreReader } from './core-files.js';
import type { CoreIssue } from './errors.js';
import { deepFreeze } from './deep-freeze.js';
import { suggestName } from './fields.js';
import { TOOL_NAME_PATTERN, TOOL_NAME_RULE } from './names.js';
import { isInside } from './path-rules.js';
import type { AuthoredToolManifest } from './snapshot.js';
import { compileInputSchema } from './input-schema.js';
import { checkModuleSyntax } from './module-syntax.js';
import { ToolManifestSchema } from './tool-manifest-schema.js';
import { parseYaml, type YamlSource } from './yaml-source.js';
import { at, parseWith } from './zod-issues.js';

export const TOOLS_DIR = 'agent/tools';
export const TOOL_MANIFEST = 'tool.yaml';

/** Reads every authored tool; problems go to reader.issues. Sorted by name. */
export async function loadAuthoredTools(reader: CoreReader): Promise<AuthoredToolManifest[]> {
  const entries = await reader.list(TOOLS_DIR, null);
  const tools: AuthoredToolManifest[] = [];
  for (const e of entries ?? []) {
    if (e.name.startsWith('.')) continue; // .gitkeep and editor files are not tools
    if (e.kind !== 'dir') {
      reader.issue(e.rel, `is not a directory; each authored tool is a directory ${TOOLS_DIR}/<name>/ holding ${TOOL_MANIFEST} and its code`);
      continue;
    }
    const tool = await loadOne(reader, e.name, e.rel);
    if (tool !== null) tools.push(tool);
  }
  return tools.sort((a, b) => (a.name < b.name ? -1 : 1));
}

async function loadOne(reader: CoreReader, dirName: string, dirRel: string): Promise<AuthoredToolManifest | null> {
  const issues = reader.issues;
  const before = issues.length;
  const dirOk = TOOL_NAME_PATTERN.test(dirName);
  if (!dirOk) reader.issue(dirRel, `tool directory name '${dirName}' ${TOOL_NAME_RULE}; rename the directory and the manifest's name, e.g. '${suggestName(dirName)}'`);
  // Hash every file of the tool, so a change to any module it imports changes the core revision;
  // refuse a link out of the folder (the host is given the folder, not the core).
  await reader.readFolder(dirRel);
  const manifestRel = `${dirRel}/${TOOL_MANIFEST}`;
  const file = await reader.read(manifestRel, `is missing; every tool directory needs a ${TOOL_MANIFEST} manifest (see docs/core-format.md)`);
  if (file === null) return null;
  const parsed = parseYaml(file.bytes.toString('utf8'), manifestRel);
  if (!parsed.ok) {
    issues.push(...parsed.issues);
    return null;
  }
  const r = parseWith(ToolManifestSchema, parsed.source);
  if (!r.ok) {
    issues.push(...r.issues);
    return null;
  }
  const m = r.data;
  if (dirOk && m.name !== dirName) {
    issues.push(at(parsed.source, ['name'], `'${m.name}' differs from the directory name '${dirName}'; a tool's directory is named after it, so set name: ${dirName} or rename the directory`));
  }
  checkInputSchema(parsed.source, m.input_schema, issues);
  const entryRel = `${dirRel}/${path.posix.normalize(m.entry)}`;
  const entryReal = await reader.realPath(entryRel);
  const dirReal = await reader.realPath(dirRel);
  let entrySha256 = '';
  if (entryReal === null) {
    if (!(await reader.exists(entryRel))) {
      issues.push(at(parsed.source, ['entry'], `'${m.entry}' does not exist in ${dirRel}/; add the file or point entry at the tool's code`));
    }
  } else if (dirReal !== null && !isInside(dirReal, entryReal)) {
    issues.push(at(parsed.source, ['entry'], `'${m.entry}' resolves to ${entryReal}, outside ${dirRel}/; keep the code inside the tool directory`));
  } else {
    const code = await reader.read(entryRel, null);
    if (code !== null) {
      entrySha256 = code.sha256;
      // Parsed in a child, never imported here: a syntax error is a load error at its line.
      const syntax = await checkModuleSyntax(entryReal, code.sha256);
      if (!syntax.ok) {
        issues.push({
          file: entryRel,
          field: '',
          ...(syntax.line !== undefined ? { line: syntax.line } : {}),
          ...(syntax.column !== undefined ? { column: syntax.column } : {}),
          message: `${syntax.message}: the tool's code does not parse (checked with node --check, nothing was run); fix the syntax there`,
        });
      }
    } else if (issues.length === before) issues.push(at(parsed.source, ['entry'], `'${m.entry}' could not be read; make it a regular file`));
  }
  if (issues.length > before) return null;
  return deepFreeze({
    name: m.name,
    description: m.description,
    input_schema: m.input_schema,
    capability: m.capability,
    approval: m.approval,
    risk: m.risk,
    capabilities: m.capabilities,
    isolation: m.isolation,
    entry: m.entry,
    source: { dir: dirRel, manifest: manifestRel, entry: entryRel, entrySha256 },
  });
}

/**
 * The input schema is compiled now, so a schema the validator cannot run (invalid, or a pattern
 * the linear-time engine rejects) is a load error at its line, never a failure at call time.
 */
function checkInputSchema(source: YamlSource, schema: unknown, issues: CoreIssue[]): void {
  const compiled = compileInputSchema(schema);
  if (compiled.ok) return;
  issues.push(at(source, ['input_schema', ...compiled.path], compiled.reason));
}
