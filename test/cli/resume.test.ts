// supervisor run --resume: the same principal's ended session of the same core continues, its
// history (model views, stored redacted) first; its chain records the resume and still verifies.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { CLI, tempDir } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

// audit verify runs in-process through `main(argv, io)` (issue 17); every run is a real process.
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
const lines = (s: string): Record<string, any>[] => s.trim().split('\n').map((l) => JSON.parse(l));

describe('run --resume', () => {
  const state = tempDir('resume-');
  after(() => {
    state.remove();
    removeTempCores();
  });

  test('continues the session: same id, a second turn, the first turn’s messages kept, the chain intact', async () => {
    const core = makeCore({
      'agent.yaml': 'name: t\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n',
      'script.yaml': 'turns:\n  - tool_calls: [{ name: tools_list }]\n  - text: listed\n',
    });
    const first = cli('run', core, '--json', '--prompt', 'first', '--state-dir', state.path);
    assert.equal(first.status, 0, first.stderr);
    const id = lines(first.stdout)[0]!.session as string;
    const again = cli('run', core, '--json', '--resume', id, '--prompt', 'second', '--state-dir', state.path);
    assert.equal(again.status, 0, again.stderr);
    assert.equal(lines(again.stdout)[0]!.session, id, 'the same session');
    const require = createRequire(import.meta.url);
    const Sqlite = require('better-sqlite3') as new (f: string, o: { readonly: boolean }) => { prepare(s: string): { all(...a: unknown[]): unknown[] }; close(): void };
    const db = new Sqlite(`${state.path}/supervisor.db`, { readonly: true });
    try {
      const turns = db.prepare('SELECT seq, status FROM turns WHERE session_id = ? ORDER BY seq').all(id) as { seq: number; status: string }[];
      assert.deepEqual(turns.map((t) => [t.seq, t.status]), [[1, 'completed'], [2, 'completed']]);
      const users = (db.prepare("SELECT content FROM messages WHERE session_id = ? AND role = 'user' ORDER BY seq").all(id) as { content: string }[]).map((m) => JSON.parse(m.content).content);
      assert.deepEqual(users, ['first', 'second']);
      const kinds = (db.prepare('SELECT kind FROM runtime_events WHERE session_id = ? ORDER BY seq').all(id) as { kind: string }[]).map((e) => e.kind);
      assert.equal(kinds.filter((k) => k === 'session.resumed').length, 1);
      assert.ok(kinds.indexOf('session.resumed') > kinds.indexOf('session.ended'));
    } finally {
      db.close();
    }
    const v = await runMain('audit', 'verify', '--session', id, '--state-dir', state.path);
    assert.equal(v.status, 0, v.stdout + v.stderr);
  });

  test('an unknown session, or one of another core, is refused with exit 2 and nothing runs', () => {
    const core = makeCore({ 'agent.yaml': 'name: t\nmodel:\n  provider: scripted\n  script: s.yaml\n', 's.yaml': 'turns:\n  - text: hi\n' });
    const other = makeCore({ 'agent.yaml': 'name: u\nmodel:\n  provider: scripted\n  script: s.yaml\n', 's.yaml': 'turns:\n  - text: hi\n' });
    const unknown = cli('run', core, '--resume', 'se_000000000000000000000000', '--state-dir', state.path);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /no session se_0+ of yours/);
    const first = cli('run', core, '--json', '--state-dir', state.path);
    const id = lines(first.stdout)[0]!.session as string;
    const wrong = cli('run', other, '--resume', id, '--state-dir', state.path);
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /resume it with that core/);
  });
});
