import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BUILTIN_TOOLSETS, computeRevision, formatIssue, loadCore } from '../../src/core/index.js';
import { parseReport } from '../../src/core/module-syntax.js';
import { hasIssue, loadFails, makeCore, makeTempDir, removeTempCores, toolFiles, writeFiles } from './temp-core.js';

// dist/test/core -> project root
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const exampleCore = path.join(root, 'examples', 'core');

after(removeTempCores);

function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

describe('the example core', () => {
  it('loads with its tool, its MCP declaration and its script', async () => {
    const snap = await loadCore(exampleCore);
    assert.equal(snap.dir, fs.realpathSync(exampleCore));
    assert.equal(snap.workspace, snap.dir, "workspace defaults to '.', the core itself");
    assert.equal(snap.agent.name, 'example');
    assert.deepEqual(snap.agent.toolsets, ['terminal']);
    assert.deepEqual(snap.agent.grants, ['terminal.exec', 'tool.call:word_count', 'mcp.connect:memory', 'mcp.call:memory']);
    assert.equal(snap.agent.approval.default, 'auto');
    assert.deepEqual(snap.agent.model, { provider: 'scripted', script: 'script.yaml' });
    assert.deepEqual(snap.tools.map((t) => t.name), ['word_count']);
    const tool = snap.tools[0]!;
    assert.equal(tool.capability, 'tool.call:word_count');
    assert.equal(tool.source.entry, 'agent/tools/word_count/index.mjs');
    assert.match(tool.source.entrySha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(snap.mcp.map((m) => m.name), ['memory']);
    const memory = snap.mcp[0]!;
    assert.equal(memory.transport.type, 'stdio');
    assert.equal(memory.resolvedCwd, snap.workspace);
    assert.equal(memory.connect_timeout_seconds, 30);
    assert.equal(memory.transport.type === 'stdio' && memory.transport.command, 'node', 'runs the installed package offline, not npx -y');
    assert.deepEqual([memory.approval.connect, memory.approval.call, memory.approval.tools.read_graph], ['auto', 'prompt', 'auto']);
    const script = snap.modelScript;
    assert.ok(script !== null);
    assert.ok(script.turns.length >= 3);
    const commands = script.turns.flatMap((t) => t.tool_calls ?? []).filter((c) => c.name === 'terminal').map((c) => c.arguments.command);
    assert.deepEqual(commands, ['echo hello', 'ls', 'uname -a', 'wc -l agent.yaml']);
    const others = script.turns.flatMap((t) => t.tool_calls ?? []).filter((c) => c.name !== 'terminal').map((c) => c.name);
    assert.deepEqual(others, ['word_count', 'memory_create_entities', 'memory_read_graph'], 'the authored tool, then the memory MCP server');
    assert.deepEqual(script.turns.filter((t) => t.user !== undefined).length, 4, 'four user turns');
    assert.equal(script.turns[script.turns.length - 1]!.tool_calls, undefined);
    assert.deepEqual(snap.files.map((f) => f.path), [
      'agent.yaml',
      'agent/mcp/memory.yaml',
      'agent/tools/word_count/index.mjs',
      'agent/tools/word_count/tool.yaml',
      'script.yaml',
    ]);
    assert.equal(snap.revision, computeRevision(snap.files));
  });

  it('is deeply frozen', async () => {
    const snap = await loadCore(exampleCore);
    for (const o of [snap, snap.agent, snap.agent.grants, snap.agent.approval.rules, snap.tools, snap.tools[0]!.input_schema, snap.mcp[0]!.transport, snap.files[0]!, snap.modelScript!.turns[0]!]) {
      assert.ok(Object.isFrozen(o));
    }
    assert.throws(() => {
      (snap.agent.grants as string[]).push('secret:X');
    }, TypeError);
    assert.throws(() => {
      (snap.tools[0] as { name: string }).name = 'other';
    }, TypeError);
  });

  it('exports the builtin toolsets it validates against', () => {
    assert.deepEqual([...BUILTIN_TOOLSETS], ['terminal', 'tasks', 'web', 'sessions', 'agents', 'evolve']);
  });
});

describe('the revision', () => {
  it('is the same across two loads and for a copy of the core elsewhere', async () => {
    const a = await loadCore(exampleCore);
    const b = await loadCore(exampleCore);
    assert.equal(a.revision, b.revision);
    const copy = path.join(makeTempDir(), 'copy');
    copyDir(exampleCore, copy);
    assert.equal((await loadCore(copy)).revision, a.revision);
  });

  it('changes when any file the loader read changes, and returns when the change is undone', async () => {
    const copy = path.join(makeTempDir(), 'core');
    copyDir(exampleCore, copy);
    const base = await loadCore(copy);
    const seen = new Set([base.revision]);
    for (const f of base.files) {
      const abs = path.join(copy, ...f.path.split('/'));
      const original = fs.readFileSync(abs);
      // A trailing newline keeps YAML and code valid while changing the bytes.
      fs.writeFileSync(abs, Buffer.concat([original, Buffer.from('\n')]));
      const changed = await loadCore(copy);
      assert.notEqual(changed.revision, base.revision, `changing ${f.path} must change the revision`);
      assert.ok(!seen.has(changed.revision), `${f.path}: each change gives its own revision`);
      seen.add(changed.revision);
      fs.writeFileSync(abs, original);
      assert.equal((await loadCore(copy)).revision, base.revision, `restoring ${f.path} restores the revision`);
    }
  });

  it('changes when a tool gains a file its code could import, or a file is renamed', async () => {
    const dir = makeCore(toolFiles('alpha'));
    const base = await loadCore(dir);
    writeFiles(dir, { 'agent/tools/alpha/lib/helper.mjs': 'export const x = 1;\n' });
    const added = await loadCore(dir);
    assert.notEqual(added.revision, base.revision);
    assert.ok(added.files.some((f) => f.path === 'agent/tools/alpha/lib/helper.mjs'));
    fs.renameSync(path.join(dir, 'agent/tools/alpha/lib/helper.mjs'), path.join(dir, 'agent/tools/alpha/lib/helper2.mjs'));
    assert.notEqual((await loadCore(dir)).revision, added.revision);
  });

  it('does not change with mtimes, unread files or another workspace', async () => {
    const copy = path.join(makeTempDir(), 'core');
    copyDir(exampleCore, copy);
    const base = await loadCore(copy);
    const past = new Date(Date.now() - 86_400_000);
    for (const f of base.files) fs.utimesSync(path.join(copy, ...f.path.split('/')), past, past);
    writeFiles(copy, { 'README.md': 'not part of the core\n', 'notes/todo.txt': 'x\n', 'agent/mcp/.gitkeep': '' });
    const again = await loadCore(copy);
    assert.equal(again.revision, base.revision);
    const ws = makeTempDir('ws-');
    const elsewhere = await loadCore(copy, { workspace: ws });
    assert.equal(elsewhere.workspace, fs.realpathSync(ws));
    assert.equal(elsewhere.revision, base.revision);
    assert.equal(elsewhere.mcp[0]!.resolvedCwd, fs.realpathSync(ws));
  });
});

describe('workspace and defaults', () => {
  it("applies the documented defaults to a minimal core", async () => {
    const snap = await loadCore(makeCore());
    assert.deepEqual(
      { ...snap.agent },
      { name: 'test-agent', description: '', toolsets: [], tools: {}, grants: [], approval: { default: 'prompt', rules: {}, auto_approve: [] }, limits: {}, runtime: 'local', workspace: '.' },
    );
    assert.deepEqual(snap.tools, []);
    assert.deepEqual(snap.mcp, []);
    assert.equal(snap.modelScript, null);
  });

  it('resolves a relative agent.yaml workspace against the core, and applies tool defaults', async () => {
    const parent = makeTempDir();
    fs.mkdirSync(path.join(parent, 'ws'));
    const dir = path.join(parent, 'core');
    writeFiles(dir, { 'agent.yaml': 'name: a\nworkspace: ../ws\n', ...toolFiles('beta') });
    const snap = await loadCore(dir);
    assert.equal(snap.workspace, fs.realpathSync(path.join(parent, 'ws')));
    const t = snap.tools[0]!;
    assert.equal(t.approval, 'prompt');
    assert.equal(t.risk, 'medium');
    assert.equal(t.entry, 'index.mjs');
    assert.deepEqual(t.isolation, { tier: 'process', network: false, read: [] });
  });

  it('accepts symlinks that stay inside the core', async () => {
    const dir = makeCore({ ...toolFiles('gamma'), 'agent/tools/gamma/lib/impl.mjs': 'export async function handler() { return 1; }\n' });
    fs.rmSync(path.join(dir, 'agent/tools/gamma/index.mjs'));
    fs.symlinkSync('lib/impl.mjs', path.join(dir, 'agent/tools/gamma/index.mjs'));
    const snap = await loadCore(dir);
    const impl = snap.files.find((f) => f.path === 'agent/tools/gamma/lib/impl.mjs');
    assert.equal(snap.tools[0]!.source.entrySha256, impl?.sha256);
  });

  it('applies the name rule through a symlinked tool directory', async () => {
    const dir = makeCore(toolFiles('gamma'));
    fs.symlinkSync(path.join(dir, 'agent/tools/gamma'), path.join(dir, 'agent/tools/delta'));
    await assert.rejects(loadCore(dir), /agent\/tools\/delta\/tool\.yaml:1:7: name: 'gamma' differs from the directory name 'delta'/);
  });
});

describe('authored tool code that does not parse', () => {
  const cases: { what: string; code: string; files?: Record<string, string>; entry?: string; line: number; column: number | undefined; message: RegExp }[] = [
    { what: 'an unterminated function', code: 'export async function handler(input) {\n  return { a: 1 };\n', line: 3, column: undefined, message: /Unexpected end of input/ },
    { what: 'a bad token on line 7', code: 'import { readFile } from "node:fs/promises";\n\n// a\n// b\n// c\n\nconst b = 2 @@ 3;\nexport async function handler() { return b; }\n', line: 7, column: 13, message: /Invalid or unexpected token/ },
    { what: 'a broken ESM import', code: 'import x from\nexport async function handler() { return 1; }\n', line: 2, column: 1, message: /Unexpected token 'export'/ },
    {
      what: 'ESM syntax in a CommonJS package (as the host would import it)',
      code: 'import fs from "node:fs";\nexport async function handler() { return 1; }\n',
      entry: 'index.js',
      files: { 'agent/tools/alpha/package.json': '{"type":"commonjs"}\n' },
      line: 1,
      column: 1,
      message: /Cannot use import statement outside a module/,
    },
  ];
  for (const c of cases) {
    it(`${c.what}: a load error with the file, line and column, and the code is never run`, async () => {
      const files = toolFiles('alpha', c.entry ? { entry: c.entry } : {}, c.code);
      if (c.entry) {
        files[`agent/tools/alpha/${c.entry}`] = c.code;
        delete files['agent/tools/alpha/index.mjs'];
      }
      const err = await loadFails(makeCore({ ...files, ...(c.files ?? {}) }));
      const rel = `agent/tools/alpha/${c.entry ?? 'index.mjs'}`;
      const issue = hasIssue(err, rel, '', 'does not parse');
      assert.match(issue.message, c.message);
      assert.deepEqual([issue.line, issue.column], [c.line, c.column], formatIssue(issue));
      assert.ok(err.message.includes(`${rel}:${c.line}:${c.column ?? 1}: `), err.message);
    });
  }

  it("reads node --check's report as a path or a file URL, and a report without a SyntaxError as no finding (the check fails open)", () => {
    const p = '/tmp/a b/x.mjs';
    assert.deepEqual(parseReport(p, 'file:///tmp/a%20b/x.mjs:7\nconst b = 2 @@ 3;\n            ^\n\nSyntaxError: Invalid or unexpected token\n'), { ok: false, line: 7, column: 13, message: 'SyntaxError: Invalid or unexpected token' });
    assert.deepEqual(parseReport(p, `${p}:3\n\n\n\nSyntaxError: Unexpected end of input\n`), { ok: false, line: 3, message: 'SyntaxError: Unexpected end of input' });
    assert.equal(parseReport(p, 'node: bad option: --experimental-permission\n'), null);
  });

  it('a module that parses is not run by the check (its top-level code would write a file)', async () => {
    const sentinel = path.join(makeTempDir(), 'ran');
    const dir = makeCore(toolFiles('alpha', {}, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(sentinel)}, 'ran');\nexport async function handler() { return 1; }\n`));
    const snap = await loadCore(dir);
    assert.deepEqual(snap.tools.map((t) => t.name), ['alpha']);
    assert.equal(fs.existsSync(sentinel), false);
  });
});

describe('network allowlist', () => {
  it('an IP address in network.allow_hosts is a load error with file, field and line that points at allow_cidrs (it used to fail every web_extract at step 4)', async () => {
    const err = await loadFails(makeCore({ 'agent.yaml': 'name: t\ntoolsets: [web]\nnetwork:\n  allow_hosts: [wiki.internal, 127.0.0.1]\n' }));
    const issue = hasIssue(err, 'agent.yaml', 'network.allow_hosts[1]', "'127.0.0.1' is an IP address", 'network.allow_cidrs', "'127.0.0.1/32'");
    assert.equal(issue.line, 4);
    // A host name still loads.
    await loadCore(makeCore({ 'agent.yaml': 'name: t\ntoolsets: [web]\nnetwork:\n  allow_hosts: [wiki.internal, "*.corp.example"]\n' }));
  });
});
