// Temporary cores for tests: written under os.tmpdir(), removed by removeTempCores() after the suite.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CoreLoadError, formatIssue, loadCore, type CoreIssue, type LoadCoreOptions } from '../../src/core/index.js';

const made: string[] = [];

/** A fresh directory under os.tmpdir(); `files` maps core-relative paths to contents. */
export function makeTempDir(prefix = 'core-'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, ...rel.split('/'));
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, content);
  }
}

/** A core directory holding `files`; a minimal agent.yaml is added unless given. */
export function makeCore(files: Record<string, string | Buffer> = {}): string {
  const dir = makeTempDir();
  writeFiles(dir, { 'agent.yaml': 'name: test-agent\n', ...files });
  return dir;
}

export function removeTempCores(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** A valid authored tool's files under agent/tools/<name>/. */
export function toolFiles(name: string, manifest: Partial<Record<string, string>> = {}, code = 'export async function handler(input) { return input; }\n'): Record<string, string> {
  const fields: Record<string, string> = {
    name,
    description: 'A test tool.',
    input_schema: '{ type: object, properties: { text: { type: string } } }',
    capability: `tool.call:${name}`,
    ...manifest,
  };
  const yaml = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n');
  return { [`agent/tools/${name}/tool.yaml`]: `${yaml}\n`, [`agent/tools/${name}/index.mjs`]: code };
}

/** Loads `dir` expecting CoreLoadError; returns it after checking code and message shape. */
export async function loadFails(dir: string, opts?: LoadCoreOptions): Promise<CoreLoadError> {
  try {
    await loadCore(dir, opts);
  } catch (err) {
    assert.ok(err instanceof CoreLoadError, `expected CoreLoadError, got ${String(err)}`);
    assert.equal(err.code, 'CORE_INVALID');
    assert.ok(err.issues.length > 0);
    return err;
  }
  assert.fail(`expected ${dir} to be refused, but it loaded`);
}

/**
 * Asserts that the error holds an issue for `file` and `field` whose message contains every
 * fragment (rule and fix), and that the error's message lists it.
 */
export function hasIssue(err: CoreLoadError, file: string, field: string, ...fragments: string[]): CoreIssue {
  const found = err.issues.find((i) => i.file === file && i.field === field && fragments.every((f) => i.message.includes(f)));
  assert.ok(found, `no issue for ${file} ${field} containing ${JSON.stringify(fragments)}; issues:\n${err.issues.map(formatIssue).join('\n')}`);
  assert.ok(err.message.includes(formatIssue(found)), `the error message does not list: ${formatIssue(found)}`);
  const line = formatIssue(found);
  assert.ok(line.startsWith(file) && line.includes(field), `the listed issue does not name file and field: ${line}`);
  return found;
}
