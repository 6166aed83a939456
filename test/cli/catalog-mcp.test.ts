// `supervisor catalog` and MCP servers, as a user runs it: listing starts nothing; --discover runs
// the gated discovery of `run` (grant, connect approval, only then the server) and closes it again.
// --discover runs as a real CLI process (it starts and stops servers, and the test checks the
// server is gone when the process has exited); listing and the usage error only read the core,
// so they run in-process through `main(argv, io)` (issue 17: a catalog start is ~1.3 CPU-seconds).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alive, CLI, tempDir } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/mcp/server.mjs', import.meta.url));
const dirs: { remove(): void }[] = [];
const scratch = (): string => {
  const d = tempDir('catalog-mcp-');
  dirs.push(d);
  return d.path;
};
// No TTY (spawnSync pipes stdin): a connect prompt no rule settles is denied.
const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000 });

function core(marker: string, o: { grants?: string; connect?: string } = {}): string {
  return makeCore({
    'agent.yaml': `name: t\ngrants: [${o.grants ?? '"mcp.connect:fx", "mcp.call:fx"'}]\napproval: { default: auto }\n`,
    'agent/mcp/fx.yaml': [
      'name: fx',
      'transport:',
      '  type: stdio',
      `  command: ${JSON.stringify(process.execPath)}`,
      `  args: [${JSON.stringify(FIXTURE)}, basic, --marker, ${JSON.stringify(marker)}]`,
      `approval: { connect: ${o.connect ?? 'prompt'}, call: auto }`,
      '',
    ].join('\n'),
  });
}

describe('catalog and MCP servers', { skip: process.platform !== 'linux' && 'fixtures use POSIX tools' }, () => {
  after(() => {
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test('listing shows the declared server and what would happen, and starts nothing (even with connect auto)', async () => {
    const marker = join(scratch(), 'started');
    const r = await runMain('catalog', core(marker, { connect: 'auto' }), '--json');
    assert.equal(r.status, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.deepEqual(c.mcp.servers.map((s: any) => [s.server, s.transport, s.granted, s.connect, s.state, s.tools]), [['fx', 'stdio', true, 'auto', 'not-started', null]]);
    assert.equal(c.mcp.discovered, false);
    assert.equal(c.tools.some((t: any) => t.source === 'mcp'), false);
    const text = await runMain('catalog', core(marker, { grants: '"mcp.call:fx"' }));
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /fx: never started: the core does not grant mcp\.connect:fx/);
    assert.equal(existsSync(marker), false, 'no server was started');
  });

  test('--discover: without the grant, or with the prompt unanswered, nothing starts; --approve starts it, lists its tools, and stops it', async () => {
    const dir = scratch();
    const marker = join(dir, 'started');
    const noGrant = JSON.parse(cli('catalog', core(marker, { grants: '"mcp.call:fx"' }), '--discover', '--json', '--state-dir', dir).stdout);
    assert.deepEqual([noGrant.mcp.servers[0].state, noGrant.mcp.servers[0].code], ['denied', 'CAPABILITY_DENIED']);
    const unanswered = JSON.parse(cli('catalog', core(marker), '--discover', '--json', '--state-dir', dir).stdout);
    assert.deepEqual([unanswered.mcp.servers[0].state, unanswered.mcp.servers[0].code], ['denied', 'APPROVAL_DENIED']);
    assert.equal(existsSync(marker), false, 'nothing started without grant and approval');

    const r = cli('catalog', core(marker), '--discover', '--approve', 'mcp.connect.fx', '--json', '--state-dir', dir);
    assert.equal(r.status, 0, r.stderr);
    const c = JSON.parse(r.stdout);
    assert.deepEqual([c.mcp.discovered, c.mcp.servers[0].state, c.mcp.servers[0].tools], [true, 'connected', 7]);
    assert.ok(c.tools.some((t: any) => t.name === 'fx_echo' && t.source === 'mcp' && t.capability === 'mcp.call:fx'));
    const pid = Number(readFileSync(marker, 'utf8').trim().split('\n')[0]);
    assert.ok(pid > 0 && !alive(pid), 'the server was stopped when catalog exited');
    assert.equal((await runMain('catalog', core(marker), '--approve', 'mcp.connect.fx')).status, 2, '--approve without --discover is a usage error');
  });
});
