// One YAML file of a core read, parsed and checked against its schema; each problem goes to the
// reader's issues with the file and field.
import type { z } from 'zod';
import type { CoreFile, CoreReader } from './core-files.js';
import { parseYaml, type YamlSource } from './yaml-source.js';
import { parseWith } from './zod-issues.js';

/** The file, its located source and its validated data; null after recording the issues. */
export async function readValidatedYaml<S extends z.ZodTypeAny>(reader: CoreReader, rel: string, schema: S): Promise<{ file: CoreFile; source: YamlSource; data: z.output<S> } | null> {
  const file = await reader.read(rel, null);
  if (file === null) return null;
  const parsed = parseYaml(file.bytes.toString('utf8'), rel);
  if (!parsed.ok) {
    reader.issues.push(...parsed.issues);
    return null;
  }
  const r = parseWith(schema, parsed.source);
  if (!r.ok) {
    reader.issues.push(...r.issues);
    return null;
  }
  return { file, source: parsed.source, data: r.data as z.output<S> };
}
