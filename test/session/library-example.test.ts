// The example docs/library.md shows is examples/library/call-terminal.mjs, byte for byte, and it
// runs: a child process imports the package by name, opens a session, has its approver asked once,
// gets the terminal's result and closes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLE = join(ROOT, 'examples', 'library', 'call-terminal.mjs');

test('docs/library.md shows the example file as it is', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'library.md'), 'utf8');
  const source = readFileSync(EXAMPLE, 'utf8');
  assert.ok(doc.includes('```js\n' + source + '```\n'), 'docs/library.md holds examples/library/call-terminal.mjs verbatim in a js block');
  assert.ok(doc.includes('node examples/library/call-terminal.mjs'), 'and says how to run it');
});

test('the library example runs: the approver is asked for the terminal, the command runs, the session closes', () => {
  const r = spawnSync(process.execPath, [EXAMPLE], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  const lines = r.stdout.split('\n');
  assert.deepEqual(
    lines.filter((l) => l.startsWith('approval asked:')),
    ['approval asked: terminal: echo hello from a supervised tree -> yes'],
    'the approver is asked exactly once, for the exact command',
  );
  const at = lines.indexOf('result (ok):');
  assert.ok(at >= 0, `a successful result is printed: ${r.stdout}`);
  assert.match(lines.slice(at + 1).join('\n'), /hello from a supervised tree/, 'the command ran and its output is in the model view');
  assert.match(r.stdout, /^session se_\S+: \d+ tool\(s\) in its catalog$/m);
  assert.equal(r.stderr, '', 'nothing on stderr');
});

// The API is typed for embedders: the build emits dist/src/index.d.ts, and a TypeScript consumer
// importing the package by name type-checks; a misuse is a type error, not a runtime one.
test('a TypeScript embedder type-checks against the emitted declarations, and a misuse does not', () => {
  const dts = join(ROOT, 'dist', 'src', 'index.d.ts');
  assert.ok(existsSync(dts), 'the build emitted dist/src/index.d.ts');
  const dir = mkdtempSync(join(ROOT, 'dist', 'embedder-'));
  try {
    const check = (source: string) => {
      writeFileSync(join(dir, 'embedder.ts'), source);
      const tsc = [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '--strict', '--module', 'NodeNext', '--moduleResolution', 'NodeNext', '--target', 'ES2022', '--types', 'node', '--skipLibCheck', join(dir, 'embedder.ts')];
      return spawnSync(process.execPath, tsc, { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    };
    const good = check(
      "import { openSession, exec, SessionError, type Session, type EffectOutcome } from 'isolation-supervisor';\n" +
        "export async function use(core: string): Promise<number> {\n" +
        "  const s: Session = await openSession({ core, rules: { approve: ['terminal'] } });\n" +
        "  try { const out: EffectOutcome = await s.callTool('terminal', { command: 'true' }); if (!out.ok) return out.code.length; }\n" +
        "  catch (e) { if (e instanceof SessionError && e.code === 'UNKNOWN_TOOL') return 2; throw e; }\n" +
        "  finally { await s.close(); }\n" +
        "  const t = await exec({ command: 'true', timeoutMs: 1000 }); return t.exitCode ?? 1;\n" +
        '}\n',
    );
    assert.equal(good.status, 0, `a correct embedder type-checks:\n${good.stdout}${good.stderr}`);
    const bad = check("import { openSession } from 'isolation-supervisor';\nexport const s = openSession({ core: 42 });\n");
    assert.notEqual(bad.status, 0, 'a core that is not a string is a type error');
    assert.match(bad.stdout, /embedder\.ts\(2,\d+\): error TS2322/, bad.stdout);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
