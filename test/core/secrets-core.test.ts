import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { after, describe, it } from 'node:test';
import { loadCore } from '../../src/core/index.js';
import { hasIssue, loadFails, makeCore, removeTempCores } from './temp-core.js';

after(removeTempCores);

const VALUE = 'core-snapshot-secret-value-93ab';

function agent(extra: string): Record<string, string> {
  return { 'agent.yaml': `name: test-agent\ntoolsets: [terminal]\ngrants: [terminal.exec, 'secret:DB_PASSWORD']\n${extra}` };
}

describe('agent.yaml secrets: section', () => {
  it('loads declarations and terminal bindings; the snapshot holds declarations, never values', async () => {
    const dir = makeCore({
      ...agent(
        [
          // The default workspace is the core itself, and a secret file may not be inside it.
          'workspace: ws',
          'secrets:',
          '  DB_PASSWORD: { file: secrets/db }',
          '  GITHUB_TOKEN: { env: SECRETS_CORE_TEST_SRC }',
          '  OPS_KEY: { file: /run/secrets/ops }',
          '  MAC_KEY: { keychain: { service: gh, account: me } }',
          'tools:',
          '  terminal:',
          '    approval: prompt',
          '    secrets:',
          '      - { secret: DB_PASSWORD, env: PGPASSWORD, ttl: 5m }',
          "      - { secret: GITHUB_TOKEN, env: GH_TOKEN, ttl: 90, expires: '2031-01-01T01:00:00+01:00' }",
          '',
        ].join('\n'),
      ),
      'secrets/db': `${VALUE}\n`,
      'ws/README': 'the workspace\n',
    });
    process.env.SECRETS_CORE_TEST_SRC = VALUE;
    try {
      const snap = await loadCore(dir);
      assert.deepEqual(snap.agent.secrets, {
        DB_PASSWORD: { file: 'secrets/db' },
        GITHUB_TOKEN: { env: 'SECRETS_CORE_TEST_SRC' },
        OPS_KEY: { file: '/run/secrets/ops' },
        MAC_KEY: { keychain: { service: 'gh', account: 'me' } },
      });
      assert.deepEqual(snap.agent.tools.terminal?.secrets, [
        { secret: 'DB_PASSWORD', env: 'PGPASSWORD', ttl_ms: 300_000, expires_at: null },
        { secret: 'GITHUB_TOKEN', env: 'GH_TOKEN', ttl_ms: 90_000, expires_at: '2031-01-01T00:00:00.000Z' },
      ]);
      assert.ok(!JSON.stringify(snap).includes(VALUE), 'the snapshot JSON holds no value');
      assert.ok(!inspect(snap, { depth: Infinity }).includes(VALUE), 'the printed snapshot holds no value');
      assert.ok(!snap.files.some((f) => f.path.startsWith('secrets/')), 'the loader did not read the secret file');
    } finally {
      delete process.env.SECRETS_CORE_TEST_SRC;
    }
  });

  it('defaults to no secrets', async () => {
    const snap = await loadCore(makeCore());
    assert.equal(snap.agent.secrets, undefined, 'a core without secrets keeps its snapshot shape');
  });

  it('refuses bad secret names: dots, lower case, leading digit, too long', async () => {
    const names = ['db.password', 'db_password', 'Db_Password', '1DB', '_DB', 'A'.repeat(65), 'DB-PASS'];
    const err = await loadFails(makeCore(agent(`secrets:\n${names.map((n) => `  '${n}': { env: SRC }`).join('\n')}\n`)));
    for (const n of names) {
      const field = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(n) ? `secrets.${n}` : `secrets[${JSON.stringify(n)}]`;
      hasIssue(err, 'agent.yaml', field, 'must match /^[A-Z][A-Z0-9_]{0,63}$/', 'rename it');
    }
  });

  it('refuses file paths that leave the core, use ~ or backslashes, and declarations with no or two sources', async () => {
    const err = await loadFails(
      makeCore(
        agent(
          [
            'secrets:',
            "  UP: { file: '../outside' }",
            "  DEEP_UP: { file: 'secrets/../../outside' }",
            "  TILDE: { file: '~/.secret' }",
            "  BACK: { file: 'secrets\\\\db' }",
            '  NONE: {}',
            '  TWO: { env: SRC, file: secrets/db }',
            '  BAD_ENV: { env: "A-B" }',
            '',
          ].join('\n'),
        ),
      ),
    );
    hasIssue(err, 'agent.yaml', 'secrets.UP.file', 'leaves the core directory', 'absolute path');
    hasIssue(err, 'agent.yaml', 'secrets.DEEP_UP.file', 'leaves the core directory');
    hasIssue(err, 'agent.yaml', 'secrets.TILDE.file', "'~'", 'absolute path');
    hasIssue(err, 'agent.yaml', 'secrets.BACK.file', "'/' separators");
    hasIssue(err, 'agent.yaml', 'secrets.NONE', 'no source', 'exactly one of');
    hasIssue(err, 'agent.yaml', 'secrets.TWO', 'more than one source');
    hasIssue(err, 'agent.yaml', 'secrets.BAD_ENV.env', 'environment variable name');
  });

  it('refuses hostile bindings: forbidden targets, bad ttl, no expiry, bad expires', async () => {
    const lines = [
      'secrets:',
      '  DB_PASSWORD: { env: SRC }',
      'tools:',
      '  terminal:',
      '    secrets:',
      '      - { secret: DB_PASSWORD, env: LD_PRELOAD, ttl: 5m }',
      '      - { secret: DB_PASSWORD, env: Path, ttl: 5m }',
      "      - { secret: DB_PASSWORD, env: 'NOT-A-NAME', ttl: 5m }",
      '      - { secret: DB_PASSWORD, env: T1, ttl: 100000h }',
      '      - { secret: DB_PASSWORD, env: T2, ttl: -5 }',
      '      - { secret: DB_PASSWORD, env: T3, ttl: 0 }',
      '      - { secret: DB_PASSWORD, env: T4, ttl: 1e308 }',
      '      - { secret: DB_PASSWORD, env: T5, ttl: 5 minutes }',
      '      - { secret: DB_PASSWORD, env: T6 }',
      "      - { secret: DB_PASSWORD, env: T7, expires: '2031-01-01T00:00:00' }",
      '      - { secret: DB_PASSWORD, env: T8, expires: 2031-01-01 }',
      '      - { secret: db.password, env: T9, ttl: 5m }',
      '      - { secret: DB_PASSWORD, env: T10, ttl: 5m, value: oops }',
      '',
    ];
    const err = await loadFails(makeCore(agent(lines.join('\n'))));
    const at = (i: number, f: string) => `tools.terminal.secrets[${i}]${f}`;
    hasIssue(err, 'agent.yaml', at(0, '.env'), 'controls execution (dynamic loader)', 'e.g. GH_TOKEN');
    hasIssue(err, 'agent.yaml', at(1, '.env'), 'controls execution (program lookup)');
    hasIssue(err, 'agent.yaml', at(2, '.env'), 'not a valid environment variable name');
    hasIssue(err, 'agent.yaml', at(3, '.ttl'), 'longer than 24h');
    hasIssue(err, 'agent.yaml', at(4, '.ttl'), 'too short');
    hasIssue(err, 'agent.yaml', at(5, '.ttl'), 'too short');
    hasIssue(err, 'agent.yaml', at(6, '.ttl'), 'longer than 24h');
    hasIssue(err, 'agent.yaml', at(7, '.ttl'), "written like '30s'");
    hasIssue(err, 'agent.yaml', at(8, ''), 'has no expiry', 'add ttl');
    hasIssue(err, 'agent.yaml', at(9, '.expires'), 'with a zone');
    hasIssue(err, 'agent.yaml', at(10, '.expires'), 'with a zone');
    hasIssue(err, 'agent.yaml', at(11, '.secret'), 'must match /^[A-Z][A-Z0-9_]{0,63}$/');
    hasIssue(err, 'agent.yaml', at(12, '.value'), "unknown key 'value'");
  });

  it('refuses bindings of undeclared secrets, duplicate targets, and bindings on tools other than the terminal', async () => {
    const lines = [
      'secrets:',
      '  DB_PASSWORD: { env: SRC }',
      'tools:',
      '  terminal:',
      '    secrets:',
      '      - { secret: DB_PASSWORD, env: PGPASSWORD, ttl: 5m }',
      '      - { secret: MISSING, env: OTHER_TOKEN, ttl: 5m }',
      '      - { secret: DB_PASSWORD, env: pgpassword, ttl: 5m }',
      '  tools_list:',
      '    secrets:',
      '      - { secret: DB_PASSWORD, env: PGPASSWORD, ttl: 5m }',
      '',
    ];
    const err = await loadFails(makeCore(agent(lines.join('\n'))));
    hasIssue(err, 'agent.yaml', 'tools.terminal.secrets[1].secret', "'MISSING' is not declared", 'declared: DB_PASSWORD');
    hasIssue(err, 'agent.yaml', 'tools.terminal.secrets[2].env', 'already bound at [0]');
    hasIssue(err, 'agent.yaml', 'tools.tools_list.secrets', 'cannot take secret bindings', 'tools.terminal.secrets');
  });

  it('gives a positioned issue for a binding so an editor can jump to it', async () => {
    const dir = makeCore(agent('secrets:\n  DB_PASSWORD: { env: SRC }\ntools:\n  terminal:\n    secrets:\n      - { secret: DB_PASSWORD, env: BASH_ENV, ttl: 5m }\n'));
    const issue = hasIssue(await loadFails(dir), 'agent.yaml', 'tools.terminal.secrets[0].env', 'shell startup');
    assert.equal(issue.line, 9);
    assert.ok(fs.existsSync(path.join(dir, 'agent.yaml')));
  });
});
