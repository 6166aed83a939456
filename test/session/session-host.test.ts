// Sessions of one process sharing MCP servers through a host (issue 19, decision 114): one real
// server-memory process for two sessions of the same principal, each passing its own gate; another
// principal gets a process of its own; a server lives while a session holds it and stops with the
// last one; host.close() leaves nothing running. Real processes, checked by pid in /proc.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openSession, openSessionHost, SessionError, type Session } from '../../src/index.js';
import { removeTempCores } from '../core/temp-core.js';
import { memoryServerCore } from '../helpers/memory-core.js';
import { alive, tempDir, waitFor } from '../helpers/procs.js';
import { AlwaysApprove } from '../helpers/approvers.js';

const memoryCore = (): string => memoryServerCore('sharer', 'prompt');

const server = (s: Session) => s.mcp!.servers.find((m) => m.server === 'memory')!;

describe('a session host: MCP servers shared by the sessions of one process', () => {
  const state = tempDir('session-host-');
  after(() => {
    state.remove();
    removeTempCores();
  });

  test('two sessions of one principal share one server process, each asked to connect; another principal gets its own; the last holder stops it', async () => {
    const core = memoryCore();
    const host = openSessionHost({ stateDir: state.path });
    const approvers = [new AlwaysApprove(), new AlwaysApprove(), new AlwaysApprove()];
    const opened: Session[] = [];
    try {
      const first = await openSession({ core, host, approver: approvers[0]! });
      opened.push(first);
      const second = await openSession({ core, host, approver: approvers[1]! });
      opened.push(second);
      const other = await openSession({ core, host, approver: approvers[2]!, principal: 'local:someone-else' });
      opened.push(other);

      assert.equal(server(first).connection, 'new');
      assert.equal(server(second).connection, 'reused');
      assert.equal(server(second).pid, server(first).pid, 'one process for both sessions');
      assert.equal(server(other).connection, 'new');
      assert.notEqual(server(other).pid, server(first).pid, 'another principal never joins');
      // Sharing comes after each session's own gate: every session was asked to connect.
      for (const a of approvers) assert.deepEqual(a.asked.map((r) => r.toolName), ['mcp.connect.memory']);

      const shared = server(first).pid!;
      await first.close();
      assert.ok(alive(shared), 'the second session still holds the server');
      const read = await second.callTool('memory_read_graph');
      assert.ok(read.ok && !read.isError, JSON.stringify(read.views.model));
      await second.close();
      await waitFor('the shared server to stop with its last holder', () => !alive(shared));
      assert.ok(alive(server(other).pid!), 'the other principal\'s server is still held');
    } finally {
      for (const s of opened) await s.close();
      await host.close();
    }
    for (const s of opened) assert.equal(alive(server(s).pid!), false);
  });

  test('a session whose stateDir is not its host\'s is refused, naming both', async () => {
    const host = openSessionHost({ stateDir: state.path });
    const elsewhere = tempDir('session-host-other-');
    try {
      await assert.rejects(openSession({ core: memoryCore(), host, stateDir: elsewhere.path }), (e: SessionError) => e.code === 'HOST_STATE_DIR' && e.message.includes(elsewhere.path) && e.message.includes(state.path));
    } finally {
      await host.close();
      elsewhere.remove();
    }
  });
});
