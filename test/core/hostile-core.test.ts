// Bad cores: each must be refused with an issue naming the file, the field, the rule and the fix.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { loadCore, MAX_CORE_FILE_BYTES, MAX_LISTED_ISSUES } from '../../src/core/index.js';
import { hasIssue, loadFails, makeCore, makeTempDir, removeTempCores, toolFiles, writeFiles } from './temp-core.js';

after(removeTempCores);

const mcpStdio = (name: string, extra = ''): string => `name: ${name}\ntransport:\n  type: stdio\n  command: npx\n${extra}`;

describe('agent.yaml', () => {
  it('refuses an unknown key and suggests the spelling', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\ntoolset: [terminal]\n' }));
    const i = hasIssue(err, 'agent.yaml', 'toolset', "unknown key 'toolset'", "did you mean 'toolsets'?");
    assert.deepEqual([i.line, i.column], [2, 1]);
  });

  it('refuses an unknown key in a nested mapping with its full field path', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\ntools:\n  web:\n    aproval: auto\n' }));
    hasIssue(err, 'agent.yaml', 'tools.web.aproval', 'allowed: description, approval, risk', "did you mean 'approval'?");
  });

  it('refuses a wrong type and says what to write', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\ngrants: terminal.exec\nlimits:\n  max_iterations: "ten"\n' }));
    hasIssue(err, 'agent.yaml', 'grants', 'must be a list, got a string', 'write a list');
    hasIssue(err, 'agent.yaml', 'limits.max_iterations', 'must be a number, got a string', 'without quotes');
  });

  it('refuses a bad enum value naming the allowed ones', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\ntools:\n  web:\n    approval: sometimes\ntoolsets: [browser]\n' }));
    hasIssue(err, 'agent.yaml', 'tools.web.approval', "must be one of 'auto', 'prompt', 'deny'", "got 'sometimes'");
    hasIssue(err, 'agent.yaml', 'toolsets[0]', "'terminal', 'tasks'");
  });

  it('refuses a wildcard secret grant', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': "name: a\ngrants: ['secret:GITHUB_*']\n" }));
    hasIssue(err, 'agent.yaml', 'grants[0]', 'matched exactly', 'e.g. "secret:GITHUB_TOKEN"');
  });

  it('refuses malformed grants', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': "name: a\ngrants: ['Terminal exec', 'fs.read:docs/*.md', '*', 'terminal.exec', 'terminal.exec']\n" }));
    hasIssue(err, 'agent.yaml', 'grants[0]', 'is not [a-z][a-z0-9_-]*', 'Fix: use lowercase letters');
    hasIssue(err, 'agent.yaml', 'grants[1]', 'whole trailing segment', 'grant "fs.read:docs/*"');
    hasIssue(err, 'agent.yaml', 'grants[2]', 'would grant every namespace', '"terminal.*"');
    hasIssue(err, 'agent.yaml', 'grants[4]', 'listed twice', 'remove the duplicate');
  });

  it('refuses a bad approval rule pattern, quoting a key with dots', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': "name: a\napproval:\n  rules:\n    'terminal.e*': auto\n" }));
    hasIssue(err, 'agent.yaml', 'approval.rules["terminal.e*"]', 'whole trailing segment');
  });

  it('refuses a script path leaving the core, and a missing script', async () => {
    let err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nmodel: { provider: scripted, script: ../s.yaml }\n' }));
    hasIssue(err, 'agent.yaml', 'model.script', "'../s.yaml' leaves the core", "e.g. 'script.yaml'");
    err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nmodel: { provider: scripted, script: s.yaml }\n' }));
    hasIssue(err, 'agent.yaml', 'model.script', 'does not exist', 'add the script file');
  });

  it('refuses an unknown provider and a literal API key', async () => {
    let err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nmodel: { provider: gpt }\n' }));
    hasIssue(err, 'agent.yaml', 'model.provider', "'scripted', 'openai-compatible', 'anthropic'");
    err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nmodel: { provider: anthropic, model: claude, api_key: sk-123 }\n' }));
    hasIssue(err, 'agent.yaml', 'model.api_key', 'must be a mapping, got a string');
  });

  it('refuses a workspace that does not exist', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nworkspace: ./nowhere\n' }));
    hasIssue(err, 'agent.yaml', 'workspace', 'does not exist', 'point workspace at an existing directory');
  });

  it('names line and column of a YAML syntax error', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: a\ngrants: [terminal.exec\ntoolsets: []\n' }));
    const i = hasIssue(err, 'agent.yaml', '', 'YAML syntax error', 'fix the YAML at this position');
    assert.equal(i.line, 3);
    assert.equal(i.column, 1);
    assert.match(err.message, /agent\.yaml:3:1: YAML syntax error/);
  });

  it('refuses duplicate keys and reserved keys', async () => {
    let err = await loadFails(makeCore({ 'agent.yaml': 'name: a\nname: b\n' }));
    hasIssue(err, 'agent.yaml', '', 'Map keys must be unique');
    err = await loadFails(makeCore({ 'agent.yaml': 'name: a\ntools:\n  __proto__: { risk: low }\n' }));
    hasIssue(err, 'agent.yaml', 'tools.__proto__', 'reserved key', 'rename it');
  });

  it('refuses an empty agent.yaml and a missing one', async () => {
    let err = await loadFails(makeCore({ 'agent.yaml': '# nothing\n' }));
    hasIssue(err, 'agent.yaml', '', 'the file is empty');
    const dir = makeTempDir();
    err = await loadFails(dir);
    hasIssue(err, 'agent.yaml', '', 'is missing', "'name: my-agent'");
  });

  it('refuses an oversized file, naming the limit', async () => {
    const big = `name: a\n#${'x'.repeat(MAX_CORE_FILE_BYTES)}\n`;
    const err = await loadFails(makeCore({ 'agent.yaml': big }));
    hasIssue(err, 'agent.yaml', '', `over the ${MAX_CORE_FILE_BYTES}-byte (256 KiB) limit`, 'shrink it');
    const err2 = await loadFails(makeCore(toolFiles('bulky', {}, `// ${'y'.repeat(MAX_CORE_FILE_BYTES)}\n`)));
    hasIssue(err2, 'agent/tools/bulky/index.mjs', '', '256 KiB');
  });

  it('collects every issue of a core and bounds the message', async () => {
    const grants = Array.from({ length: 30 }, (_, i) => `'Bad ${i}'`).join(', ');
    const err = await loadFails(makeCore({ 'agent.yaml': `name: A\ngrants: [${grants}]\n`, ...toolFiles('x', { risk: 'extreme' }) }));
    assert.equal(err.issues.length, 32);
    assert.match(err.message, /\(32 issues\)/);
    assert.match(err.message, new RegExp(`\\.\\.\\. and ${32 - MAX_LISTED_ISSUES} more`));
    // Past the listed ones, but still in error.issues.
    assert.ok(err.issues.some((i) => i.file === 'agent/tools/x/tool.yaml' && i.field === 'risk' && i.message.includes("'low', 'medium', 'high'")));
  });
});

describe('authored tools', () => {
  for (const [label, bad] of [
    ['uppercase', 'WebSearch'],
    ['65 characters', `a${'b'.repeat(64)}`],
    ['a leading digit', '1tool'],
  ] as const) {
    it(`refuses a tool name with ${label}`, async () => {
      const files = toolFiles('good');
      files['agent/tools/good/tool.yaml'] = files['agent/tools/good/tool.yaml']!.replace('name: good', `name: ${bad}`);
      const err = await loadFails(makeCore(files));
      hasIssue(err, 'agent/tools/good/tool.yaml', 'name', '/^[a-z][a-z0-9_-]{0,62}$/', 'model APIs accept only [a-zA-Z0-9_-]{1,64}', 'rename it');
      const err2 = await loadFails(makeCore(toolFiles(bad)));
      hasIssue(err2, `agent/tools/${bad}`, '', 'rename the directory');
      const err3 = await loadFails(makeCore({ 'agent.yaml': `name: a\ntools:\n  ${bad}: { risk: low }\n` }));
      hasIssue(err3, 'agent.yaml', /^[A-Za-z_]/.test(bad) ? `tools.${bad}` : `tools["${bad}"]`, 'rename it');
    });
  }

  it('refuses a manifest whose name differs from its directory', async () => {
    const files = toolFiles('word_count');
    files['agent/tools/word_count/tool.yaml'] = files['agent/tools/word_count/tool.yaml']!.replace('name: word_count', 'name: words');
    const err = await loadFails(makeCore(files));
    hasIssue(err, 'agent/tools/word_count/tool.yaml', 'name', "'words' differs from the directory name 'word_count'", 'set name: word_count or rename the directory');
  });

  it('refuses a missing entry file', async () => {
    const err = await loadFails(makeCore(toolFiles('t1', { entry: 'main.mjs' })));
    hasIssue(err, 'agent/tools/t1/tool.yaml', 'entry', "'main.mjs' does not exist in agent/tools/t1/", 'add the file');
  });

  it('refuses an entry path leaving the tool directory', async () => {
    const err = await loadFails(makeCore({ ...toolFiles('t2', { entry: '../x.mjs' }), 'agent/tools/x.mjs': '' }));
    hasIssue(err, 'agent/tools/t2/tool.yaml', 'entry', "'../x.mjs' leaves the tool directory", "e.g. 'index.mjs'");
  });

  it('refuses an entry that is a symlink out of the tool directory', async () => {
    const dir = makeCore({ ...toolFiles('t3'), 'shared/code.mjs': 'export async function handler() {}\n' });
    fs.rmSync(path.join(dir, 'agent/tools/t3/index.mjs'));
    fs.symlinkSync(path.join(dir, 'shared/code.mjs'), path.join(dir, 'agent/tools/t3/index.mjs'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent/tools/t3/tool.yaml', 'entry', 'outside agent/tools/t3/', 'keep the code inside the tool directory');
  });

  it('refuses a symlink in a tool folder to a file elsewhere in the core (its secret), naming the link and its target', { skip: process.platform === 'win32' }, async () => {
    const dir = makeCore({ ...toolFiles('t9'), 'private/secret.txt': 'core-secret-0e5b\n' });
    fs.symlinkSync('../../../private/secret.txt', path.join(dir, 'agent/tools/t9/data.txt'));
    fs.mkdirSync(path.join(dir, 'agent/tools/t9/lib'));
    fs.symlinkSync(path.join(dir, 'private'), path.join(dir, 'agent/tools/t9/lib/up'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent/tools/t9/data.txt', '', 'is a symlink to ../../../private/secret.txt', 'private/secret.txt in the core', 'outside the tool folder agent/tools/t9/', 'copy the file into agent/tools/t9/');
    hasIssue(err, 'agent/tools/t9/lib/up', '', `is a symlink to ${path.join(dir, 'private')}`, 'outside the tool folder');
    assert.equal(err.message.includes('core-secret-0e5b'), false, 'the secret is not quoted');
    assert.equal(/\n\s+at /.test(err.message), false, 'no stack trace');
  });

  it('refuses a hard link in a tool folder (a second name of a core file)', { skip: process.platform === 'win32' }, async () => {
    const dir = makeCore({ ...toolFiles('t10'), 'private/secret.txt': 'core-secret-77c1\n' });
    fs.linkSync(path.join(dir, 'private/secret.txt'), path.join(dir, 'agent/tools/t10/data.txt'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent/tools/t10/data.txt', '', 'is a hard link (one of 2 names', 'replace it with a copy');
  });

  it('refuses a core file (agent/mcp/*.yaml) that links out of its folder to another core file', { skip: process.platform === 'win32' }, async () => {
    const dir = makeCore({ 'private/secret.txt': 'name: core-secret-31aa\n' });
    fs.mkdirSync(path.join(dir, 'agent/mcp'), { recursive: true });
    fs.symlinkSync('../../private/secret.txt', path.join(dir, 'agent/mcp/notes.yaml'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent/mcp/notes.yaml', '', 'is a symlink to ../../private/secret.txt', 'outside its folder agent/mcp/', 'copy the file in');
    assert.equal(err.message.includes('core-secret-31aa'), false, 'the linked file is not quoted');
  });

  it('keeps a symlink that stays inside its tool folder', { skip: process.platform === 'win32' }, async () => {
    const dir = makeCore({ ...toolFiles('t11'), 'agent/tools/t11/lib/a.mjs': 'export const a = 1;\n' });
    fs.symlinkSync('lib/a.mjs', path.join(dir, 'agent/tools/t11/alias.mjs'));
    const core = await loadCore(dir);
    assert.equal(core.tools[0]?.name, 't11');
  });

  it('refuses a symlinked tool directory pointing outside the core', async () => {
    const outside = makeTempDir('outside-');
    writeFiles(outside, toolFiles('evil'));
    const dir = makeCore();
    fs.mkdirSync(path.join(dir, 'agent/tools'), { recursive: true });
    fs.symlinkSync(path.join(outside, 'agent/tools/evil'), path.join(dir, 'agent/tools/evil'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent/tools/evil', '', 'outside the core', 'copy the files in instead of linking');
    assert.equal(err.issues.length, 1);
  });

  it('refuses a symlinked agent.yaml pointing outside the core', async () => {
    const outside = makeTempDir('outside-');
    writeFiles(outside, { 'agent.yaml': 'name: elsewhere\n' });
    const dir = makeTempDir();
    fs.symlinkSync(path.join(outside, 'agent.yaml'), path.join(dir, 'agent.yaml'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent.yaml', '', 'outside the core');
  });

  it('refuses a tool listing its own dispatch capability, or a wildcard covering it', async () => {
    let err = await loadFails(makeCore(toolFiles('t4', { capabilities: "['fs.read:docs/**', 'tool.call:t4']" })));
    hasIssue(err, 'agent/tools/t4/tool.yaml', 'capabilities[1]', "is the tool's own dispatch capability 'tool.call:t4'", 'remove it');
    err = await loadFails(makeCore(toolFiles('t5', { capabilities: "['tool.*']" })));
    hasIssue(err, 'agent/tools/t5/tool.yaml', 'capabilities[0]', 'covers the tool\'s own dispatch capability');
  });

  it('refuses a wildcard dispatch capability and a non-object input schema', async () => {
    const err = await loadFails(makeCore(toolFiles('t6', { capability: "'tool.call:*'", input_schema: '{ type: string }' })));
    hasIssue(err, 'agent/tools/t6/tool.yaml', 'capability', 'must be exact');
    hasIssue(err, 'agent/tools/t6/tool.yaml', 'input_schema.type', "must be 'object'", 'write type: object');
  });

  it('refuses isolation read paths leaving their root and an unknown tier', async () => {
    const err = await loadFails(makeCore(toolFiles('t7', { isolation: "{ tier: vm, read: [{ root: workspace, path: '../secrets' }] }" })));
    hasIssue(err, 'agent/tools/t7/tool.yaml', 'isolation.tier', "'process', 'sandbox', 'thread'");
    hasIssue(err, 'agent/tools/t7/tool.yaml', 'isolation.read[0].path', "'../secrets' leaves its root");
  });

  it('refuses a tool directory without a manifest and a stray file in agent/tools', async () => {
    const err = await loadFails(makeCore({ 'agent/tools/empty/index.mjs': '', 'agent/tools/loose.mjs': '' }));
    hasIssue(err, 'agent/tools/empty/tool.yaml', '', 'is missing');
    hasIssue(err, 'agent/tools/loose.mjs', '', 'is not a directory');
  });

  it('refuses FIFOs without blocking on them, and survives a symlink loop', { skip: process.platform === 'win32' }, async () => {
    const dir = makeCore(toolFiles('t8'));
    execFileSync('mkfifo', [path.join(dir, 'agent/tools/t8/pipe')]);
    fs.symlinkSync('.', path.join(dir, 'agent/tools/t8/loop'));
    const err = await loadFails(dir);
    hasIssue(err, 'agent/tools/t8/pipe', '', 'neither a file nor a directory', 'remove it');
    assert.equal(err.issues.length, 1);
    const fifoCore = makeTempDir();
    execFileSync('mkfifo', [path.join(fifoCore, 'agent.yaml')]);
    hasIssue(await loadFails(fifoCore), 'agent.yaml', '', 'is not a regular file');
  });

  it('never executes tool code while loading', async () => {
    const marker = path.join(makeTempDir('marker-'), 'imported');
    const code = `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'imported');\nexport async function handler() { return 'ran'; }\n`;
    const dir = makeCore(toolFiles('tripwire', {}, code));
    const snap = await loadCore(dir);
    assert.equal(snap.tools[0]!.name, 'tripwire');
    assert.equal(fs.existsSync(marker), false, 'loading the core imported the tool');
    // The fixture is a real tripwire: importing it does leave the marker.
    await import(pathToFileURL(path.join(dir, 'agent/tools/tripwire/index.mjs')).href);
    assert.equal(fs.existsSync(marker), true);
  });
});

describe('MCP declarations', () => {
  it('refuses a cwd outside the workspace, relative or absolute', async () => {
    let err = await loadFails(makeCore({ 'agent/mcp/github.yaml': mcpStdio('github', '  cwd: ../..\n') }));
    // The workspace defaults to the core directory itself.
    hasIssue(err, 'agent/mcp/github.yaml', 'transport.cwd', "'../..' leaves the workspace", `use a path inside ${err.dir}`);
    err = await loadFails(makeCore({ 'agent/mcp/github.yaml': mcpStdio('github', '  cwd: /\n') }));
    hasIssue(err, 'agent/mcp/github.yaml', 'transport.cwd', "'/' leaves the workspace", 'use a path inside');
  });

  it('accepts an absolute cwd inside the workspace', async () => {
    const dir = makeCore();
    const real = fs.realpathSync(dir);
    fs.mkdirSync(path.join(dir, 'srv'));
    writeFiles(dir, { 'agent/mcp/local.yaml': mcpStdio('local', `  cwd: ${JSON.stringify(path.join(real, 'srv'))}\n`) });
    const snap = await loadCore(dir);
    assert.equal(snap.mcp[0]!.resolvedCwd, path.join(real, 'srv'));
  });

  it('refuses a cwd that leaves the workspace through a symlink', async () => {
    const outside = makeTempDir('outside-');
    const dir = makeCore();
    fs.symlinkSync(outside, path.join(dir, 'escape'));
    writeFiles(dir, { 'agent/mcp/s.yaml': mcpStdio('s', '  cwd: escape\n') });
    const err = await loadFails(dir);
    hasIssue(err, 'agent/mcp/s.yaml', 'transport.cwd', 'resolves through a symlink', 'outside the workspace');
  });

  it('makes a workspace_path env value an absolute path inside the workspace, and refuses one that leaves it', async () => {
    const dir = makeCore({ 'agent/mcp/m.yaml': mcpStdio('m', '  env:\n    - { name: MEMORY_FILE_PATH, value: { workspace_path: data/memory.jsonl } }\n    - { name: PLAIN, value: x }\n') });
    const snap = await loadCore(dir);
    const t = snap.mcp[0]!.transport;
    assert.ok(t.type === 'stdio');
    assert.deepEqual(t.env.map((e) => [e.name, e.value]), [['MEMORY_FILE_PATH', path.join(fs.realpathSync(dir), 'data/memory.jsonl')], ['PLAIN', 'x']]);
    let err = await loadFails(makeCore({ 'agent/mcp/m.yaml': mcpStdio('m', '  env:\n    - { name: M, value: { workspace_path: ../../etc/passwd } }\n') }));
    hasIssue(err, 'agent/mcp/m.yaml', 'transport.env[0].value.workspace_path', "'../../etc/passwd' leaves the workspace");
    err = await loadFails(makeCore({ 'agent/mcp/m.yaml': mcpStdio('m', '  env:\n    - { name: M, value: { workspace_path: /etc/passwd } }\n') }));
    hasIssue(err, 'agent/mcp/m.yaml', 'transport.env[0].value.workspace_path', 'is absolute');
    // A directory on the way that is a symlink out of the workspace: the file does not exist yet.
    const outside = makeTempDir('outside-');
    const linked = makeCore({ 'agent/mcp/m.yaml': mcpStdio('m', '  env:\n    - { name: M, value: { workspace_path: escape/new.jsonl } }\n') });
    fs.symlinkSync(outside, path.join(linked, 'escape'));
    err = await loadFails(linked);
    hasIssue(err, 'agent/mcp/m.yaml', 'transport.env[0].value.workspace_path', 'resolves through a symlink', 'outside the workspace');
  });

  it('refuses duplicate server names, naming the first file', async () => {
    const err = await loadFails(makeCore({ 'agent/mcp/a.yaml': mcpStdio('github'), 'agent/mcp/b.yaml': mcpStdio('github') }));
    hasIssue(err, 'agent/mcp/b.yaml', 'name', "server name 'github' is already declared in agent/mcp/a.yaml", 'rename one of them');
  });

  it('refuses bad env and header values with their index', async () => {
    const env = '  env:\n    - { name: A, value: x }\n    - { name: B, value: { secret: TOKEN } }\n    - { name: C, value: [1] }\n    - { name: A, value: y }\n';
    let err = await loadFails(makeCore({ 'agent/mcp/e.yaml': mcpStdio('e', env) }));
    hasIssue(err, 'agent/mcp/e.yaml', 'transport.env[2].value', 'must be a literal string, { secret: NAME } or { workspace_path: REL }', '{ workspace_path: data/file.json }');
    hasIssue(err, 'agent/mcp/e.yaml', 'transport.env[3].name', "'A' is set twice");
    const http = "name: h\ntransport:\n  type: http\n  url: 'https://user:pw@mcp.example.com/'\n  headers:\n    - { name: Authorization, value: { secret: 'bad-name' } }\n";
    err = await loadFails(makeCore({ 'agent/mcp/h.yaml': http }));
    hasIssue(err, 'agent/mcp/h.yaml', 'transport.url', 'holds credentials', '{ secret: NAME }');
    hasIssue(err, 'agent/mcp/h.yaml', 'transport.headers[0].value.secret', 'secret name must match');
  });

  it('refuses an unknown transport and a .yml file', async () => {
    const err = await loadFails(makeCore({ 'agent/mcp/w.yaml': 'name: w\ntransport: { type: websocket }\n', 'agent/mcp/x.yml': 'name: x\n' }));
    hasIssue(err, 'agent/mcp/w.yaml', 'transport.type', "'stdio', 'http'");
    hasIssue(err, 'agent/mcp/x.yml', '', 'rename it to x.yaml');
  });

  it('applies defaults to a declaration', async () => {
    const snap = await loadCore(makeCore({ 'agent/mcp/m.yaml': mcpStdio('m') }));
    const m = snap.mcp[0]!;
    assert.equal(m.connect_timeout_seconds, 10);
    assert.equal(m.call_timeout_seconds, 60);
    assert.deepEqual(m.include, ['*']);
    assert.deepEqual(m.exclude, []);
    assert.deepEqual(m.approval, { tools: {} });
    assert.ok(m.transport.type === 'stdio' && m.transport.cwd === '.');
  });
});
