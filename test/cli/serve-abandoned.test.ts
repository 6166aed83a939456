// Issue 16, "serve --http locks every client out": the conformance suite's clients initialize, do
// one thing and walk away without DELETE. Here 24 such clients, one after another, against one
// `supervisor serve --http --max-sessions 2` whose idle timeout is far away, so only eviction can
// make room; each keeps its standalone GET stream open (an abandoned client's connection may stay
// up), which must not count as work in flight. Every new client is served, none gets 503.
// scripts/mcp-conformance.mjs runs the real conformance tool the same way (docs/ci.md).
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CLI, tempDir } from '../helpers/procs.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';

const CLIENTS = 24;
const MAX_SESSIONS = 2;

describe('supervisor serve --http with abandoned clients', { skip: process.platform !== 'linux' && 'the served terminal runs POSIX commands' }, () => {
  const dirs: { remove(): void }[] = [];
  const children: ChildProcess[] = [];
  after(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    for (const d of dirs.splice(0)) d.remove();
    removeTempCores();
  });

  test(`${CLIENTS} clients that initialize and walk away (no DELETE, GET stream left open) never lock out the next one at --max-sessions ${MAX_SESSIONS}`, async () => {
    const state = tempDir('serve-abandoned-');
    dirs.push(state);
    const core = makeCore({ 'agent.yaml': 'name: served\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\n  auto_approve: [read-only]\n' });
    const child = spawn(process.execPath, [CLI, 'serve', core, '--http', '127.0.0.1:0', '--max-sessions', String(MAX_SESSIONS), '--idle-timeout', '10m', '--state-dir', state.path], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    const [line] = (await Promise.race([once(createInterface({ input: child.stdout! }), 'line'), once(child, 'exit').then(() => [null])])) as [string | null];
    assert.ok(line, `serve exited before serving: ${err}`);
    const serving = JSON.parse(line!) as { url: string; token_file: string };
    const headers = { authorization: `Bearer ${readFileSync(serving.token_file, 'utf8').trim()}` };

    const abandoned: StreamableHTTPClientTransport[] = [];
    const refusals: string[] = [];
    try {
      for (let i = 0; i < CLIENTS; i++) {
        const transport = new StreamableHTTPClientTransport(new URL(serving.url), { requestInit: { headers } });
        const client = new Client({ name: `walks-away-${i}`, version: '1' });
        try {
          await client.connect(transport); // initialize, initialized, and the client's standing GET stream
          const { tools } = await client.listTools();
          assert.ok(tools.some((t) => t.name === 'terminal'));
        } catch (e) {
          refusals.push(`client ${i}: ${(e as Error).message}`);
        }
        abandoned.push(transport); // never closed, never DELETEd: walked away
      }
      assert.deepEqual(refusals, [], 'every client was served');
      // The last one still works; the earliest was evicted long ago and is told so (404), not served stale state.
      const last = new Client({ name: 'last', version: '1' });
      const lastTransport = new StreamableHTTPClientTransport(new URL(serving.url), { requestInit: { headers } });
      await last.connect(lastTransport);
      const r = (await last.callTool({ name: 'terminal', arguments: { command: 'echo served-after-abandon' } })) as { content: { text: string }[] };
      assert.match(r.content.map((c) => c.text).join(''), /served-after-abandon/);
      const first = await fetch(serving.url, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': abandoned[0]!.sessionId! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(first.status, 404);
      await first.body?.cancel();
      const evicted = err.match(/evicted to make room/g)?.length ?? 0;
      assert.equal(evicted, CLIENTS + 1 - MAX_SESSIONS, err);
      await lastTransport.close();
    } finally {
      for (const t of abandoned) await t.close().catch(() => undefined);
    }
    const exited = once(child, 'exit');
    child.kill('SIGTERM');
    assert.deepEqual((await exited)[0], 0, err);
  });
});
