// Our stdio transport: the server is a supervised tree, closed whole; its stderr is redacted and bounded.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { allowlistedEnv } from '../../../src/process/child-env.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SupervisedStdioTransport, mcpToolName } from '../../../src/adapters/mcp/index.js';
import { markedPids, waitFor } from '../../helpers/procs.js';
import { FIXTURE_SERVER, mcpSuite } from './mcp-fixture.js';

describe('supervised stdio transport', { skip: process.platform !== 'linux' && 'fixtures use POSIX tools' }, () => {
  const s = mcpSuite();
  const transport = (mode: string, extra: Partial<ConstructorParameters<typeof SupervisedStdioTransport>[1]> = {}) =>
    new SupervisedStdioTransport(s.supervisor(), { server: 'fx', command: process.execPath, args: [FIXTURE_SERVER, mode], cwd: process.cwd(), env: allowlistedEnv(), redact: [], graceMs: 300, ...extra });

  test('close() stops the whole tree: setsid and double-forked grandchildren of a server are gone', async () => {
    const t = transport('grandchildren');
    const client = new Client({ name: 't', version: '0' });
    await client.connect(t);
    const spawnId = t.spawnId!;
    await waitFor('the grandchildren', () => markedPids(spawnId).length >= 3);
    const outcome = await t.stop();
    assert.equal(markedPids(spawnId).length, 0, 'nothing of the tree survived');
    assert.ok(outcome!.killed.descendants >= 2);
    assert.equal(outcome!.killed.survivors, 0);
  });

  test('a server ignoring TERM is killed after the grace', async () => {
    const t = transport('ignore-term');
    await new Client({ name: 't', version: '0' }).connect(t);
    const t0 = Date.now();
    await t.close();
    assert.equal(markedPids(t.spawnId!).length, 0);
    assert.ok(Date.now() - t0 < 3000);
  });

  test('close is idempotent and onclose fires exactly once, whether we close or the server exits by itself', async () => {
    const t = transport('basic');
    let closes = 0;
    t.onclose = () => closes++;
    await new Client({ name: 't', version: '0' }).connect(t);
    const first = t.stop();
    assert.equal(t.stop(), first, 'a second stop() is the same shutdown');
    await Promise.all([first, t.close(), t.close()]);
    assert.equal(closes, 1, 'onclose fired once for three closes');
    await assert.rejects(t.send({ jsonrpc: '2.0', method: 'notifications/initialized' }), (e: any) => e.code === 'MCP_SERVER_CLOSED');

    const c = transport('crash');
    let crashCloses = 0;
    c.onclose = () => crashCloses++;
    const client = new Client({ name: 't', version: '0' });
    await client.connect(c);
    await assert.rejects(client.callTool({ name: 'crash', arguments: {} }));
    await waitFor('onclose after the server exited', () => crashCloses > 0);
    await c.close();
    assert.equal(crashCloses, 1, 'our close after the exit did not fire onclose again');
    assert.equal(markedPids(c.spawnId!).length, 0);
  });

  test('stderr is drained through the redactor into a bounded log', async () => {
    const secret = 'tok_fixture-secret-printed-on-stderr-9f3a';
    const t = transport('stderr-secret', { env: { ...allowlistedEnv(), FIXTURE_SECRET: secret }, redact: [secret], stderrLogChars: 4000 });
    await new Client({ name: 't', version: '0' }).connect(t);
    await waitFor('the last stderr line', () => t.stderr.includes('last line'));
    await sleep(50);
    assert.ok(!t.stderr.includes(secret), 'the secret is not in the log');
    assert.ok(!t.stderr.includes('fixture-secret'), 'not even the split part');
    assert.ok(t.stderr.length <= 4000, `log is ${t.stderr.length} characters`);
    assert.match(t.stderr, /secret again: \[REDACTED|secret again: \S*\*|secret again: (?!tok_)/);
    await t.close();
  });

  test('names: server-prefixed, only [a-zA-Z0-9_-], at most 64 characters with a stable hash suffix', () => {
    assert.equal(mcpToolName('memory', 'read_graph'), 'memory_read_graph');
    const long = mcpToolName('server', 'x'.repeat(100));
    assert.equal(long.length, 64);
    assert.equal(long, mcpToolName('server', 'x'.repeat(100)), 'stable');
    assert.notEqual(long, mcpToolName('server', 'x'.repeat(101)));
    const dotted = mcpToolName('fs', 'read.file');
    assert.match(dotted, /^fs_read_file_[0-9a-f]{8}$/);
    assert.notEqual(dotted, mcpToolName('fs', 'read_file'), 'a rewritten name cannot collide with the plain one');
  });
});
