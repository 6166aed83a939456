// The catalog is per turn (issue 19): after a promotion changes the core on disk, the session's
// next turn resolves a new catalog from it (a new revision, the new tool callable), the old
// revision's remembered approvals are gone, and the chain records it; within the turn that
// promoted, nothing changes. A real session, real Git repository, real tool host.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { approvalDecision, openSession, SessionError, type ApprovalRequest, type Approver } from '../../src/index.js';
import { chainOf } from '../helpers/store-query.js';
import { alive, tempDir, waitFor } from '../helpers/procs.js';
import { AlwaysApprove } from '../helpers/approvers.js';
import { git, removeRepos, repoCore } from './git-fixture.js';

const HELLO_YAML = 'name: hello\ndescription: Says hello.\ninput_schema: { type: object }\ncapability: tool.call:hello\napproval: auto\nentry: index.mjs\n';
const HELLO_CODE = 'export async function handler() { return { said: "hello from the promoted tool" }; }\n';

describe('the catalog is resolved again for the turn after a promotion', { skip: process.platform !== 'linux' && 'the tool host runs in bubblewrap' }, () => {
  const state = tempDir('turn-catalog-');
  after(() => {
    state.remove();
    removeRepos();
  });

  test('promote a new tool between turns: the next turn calls it; the promoting turn could not', async () => {
    const core = repoCore(
      'name: grows\ntoolsets: [evolve]\ngrants: [core.evolve, tool.call:hello]\napproval:\n  default: auto\nmodel: { provider: scripted, script: script.yaml }\n',
    );
    writeFileSync(join(core, 'script.yaml'), JSON.stringify({ turns: [{ text: 'first turn' }, { user: 'now use it' }, { tool_calls: [{ name: 'hello', arguments: {} }] }, { text: 'done' }] }));
    git(core, 'add', '-A');
    git(core, 'commit', '--quiet', '-m', 'script');
    const approver = new AlwaysApprove();
    const s = await openSession({ core, stateDir: state.path, approver });
    try {
      await s.runTurn('first');
      const oldRevision = s.core.revision;
      const start = await s.callTool('evolve_core', { action: 'start', edits: [{ path: 'agent/tools/hello/tool.yaml', content: HELLO_YAML }, { path: 'agent/tools/hello/index.mjs', content: HELLO_CODE }] });
      assert.ok(start.ok && !start.isError, JSON.stringify(start));
      const run = JSON.parse(start.views.model.content).run as string;
      const promoted = await s.callTool('evolve_core', { action: 'promote', run });
      assert.ok(promoted.ok && !promoted.isError, JSON.stringify(promoted));
      // Until the next turn the session's catalog is the one it had: the tool is not there yet.
      await assert.rejects(s.callTool('hello', {}), (e: SessionError) => e.code === 'UNKNOWN_TOOL');
      const results: unknown[] = [];
      const r = await s.runTurn('now use it', { onEvent: (e) => void (e.type === 'tool_result' && results.push(e.outcome)) });
      assert.equal(r.outcome, 'completed');
      const hello = results[0] as { ok: boolean; isError: boolean; views: { model: { content: string } } };
      assert.ok(hello.ok && !hello.isError, JSON.stringify(hello));
      assert.match(hello.views.model.content, /hello from the promoted tool/);
      assert.notEqual(s.core.revision, oldRevision, 'the session now holds the promoted revision');
      assert.ok(s.catalog.entries.some((e) => e.name === 'hello'));
    } finally {
      await s.close();
    }
    const chain = chainOf(state.path, s.id);
    const again = chain.find((e) => e.kind === 'catalog.resolved_again');
    assert.ok(again, chain.map((e) => e.kind).join(','));
    assert.notEqual(again.payload.old_revision, again.payload.new_revision);
    assert.equal(again.payload.mcp_rediscovered, false);
  });

  test('a promotion that adds an MCP server: the prompt shows its command; denied, nothing moves; approved, the next turn asks to connect before the server starts', async () => {
    const server = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
    const declaration = JSON.stringify({ name: 'memory', transport: { type: 'stdio', command: process.execPath, args: [server], cwd: '.' }, approval: { connect: 'prompt', call: 'auto' } });
    const core = repoCore(
      'name: grows-mcp\ntoolsets: [evolve]\ngrants: [core.evolve, mcp.connect:memory, mcp.call:memory]\napproval:\n  default: auto\nmodel: { provider: scripted, script: script.yaml }\n',
    );
    writeFileSync(join(core, 'script.yaml'), JSON.stringify({ turns: [{ text: 'one' }, { user: 'two' }, { tool_calls: [{ name: 'memory_read_graph', arguments: {} }] }, { text: 'two' }] }));
    git(core, 'add', '-A');
    git(core, 'commit', '--quiet', '-m', 'script');
    const head = git(core, 'rev-parse', 'main');
    let answer = false;
    const asked: ApprovalRequest[] = [];
    const approver: Approver = {
      async decide(r) {
        asked.push(r);
        return approvalDecision(answer, 'operator', answer ? 'yes' : 'no', false);
      },
    };
    const s = await openSession({ core, stateDir: state.path, approver });
    try {
      await s.runTurn('one');
      const start = await s.callTool('evolve_core', { action: 'start', edits: [{ path: 'agent/mcp/memory.yaml', content: declaration }] });
      const run = JSON.parse(start.views.model.content).run as string;
      const denied = await s.callTool('evolve_core', { action: 'promote', run });
      assert.equal(denied.ok, false);
      assert.equal(!denied.ok && denied.code, 'APPROVAL_DENIED');
      assert.ok(asked[0]!.actionSummary.includes(`+mcp memory: stdio ${JSON.stringify(process.execPath)} ${JSON.stringify(server)}`), asked[0]!.actionSummary);
      assert.equal(git(core, 'rev-parse', 'main'), head, 'a denied promotion moves nothing');
      answer = true;
      const promoted = await s.callTool('evolve_core', { action: 'promote', run });
      assert.ok(promoted.ok && !promoted.isError, JSON.stringify(promoted));
      const before = asked.length;
      const results: { ok: boolean; isError?: boolean }[] = [];
      await s.runTurn('two', { onEvent: (e) => void (e.type === 'tool_result' && results.push(e.outcome as never)) });
      const connect = asked.slice(before).find((r) => r.capability === 'mcp.connect:memory');
      assert.ok(connect, `the new server's connect was asked before it started: ${asked.slice(before).map((r) => r.capability)}`);
      assert.ok(results[0]?.ok && !results[0].isError, JSON.stringify(results));
    } finally {
      await s.close();
    }
    const again = chainOf(state.path, s.id).find((e) => e.kind === 'catalog.resolved_again');
    assert.equal(again?.payload.mcp_rediscovered, true);
  });

  test('one MCP manager for the session: a promotion adding a server starts only it (the other is reused, same process); one removing it stops only it', async () => {
    const server = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
    const decl = (name: string) => JSON.stringify({ name, transport: { type: 'stdio', command: process.execPath, args: [server], cwd: '.' }, approval: { connect: 'auto', call: 'auto' } });
    const core = repoCore('name: two-servers\ntoolsets: [evolve]\ngrants: [core.evolve, mcp.connect:memory, mcp.connect:notes]\napproval:\n  default: auto\nmodel: { provider: scripted, script: script.yaml }\n');
    writeFileSync(join(core, 'script.yaml'), JSON.stringify({ turns: [{ text: 'one' }, { user: 'two' }, { text: 'two' }, { user: 'three' }, { text: 'three' }] }));
    mkdirSync(join(core, 'agent', 'mcp'), { recursive: true });
    writeFileSync(join(core, 'agent', 'mcp', 'memory.yaml'), decl('memory'));
    git(core, 'add', '-A');
    git(core, 'commit', '--quiet', '-m', 'memory');
    const s = await openSession({ core, stateDir: state.path, approver: new AlwaysApprove() });
    const server$ = (name: string) => s.mcp?.servers.find((m) => m.server === name);
    const evolve = async (edits: { path: string; content: string | null }[]) => {
      const started = await s.callTool('evolve_core', { action: 'start', edits });
      const run = JSON.parse(started.ok ? started.views.model.content : '{}').run as string;
      const promoted = await s.callTool('evolve_core', { action: 'promote', run });
      assert.ok(promoted.ok && !promoted.isError, JSON.stringify(promoted));
    };
    try {
      await s.runTurn('one');
      const memoryPid = server$('memory')!.pid!;
      assert.equal(server$('memory')!.connection, 'new');
      await evolve([{ path: 'agent/mcp/notes.yaml', content: decl('notes') }]);
      await s.runTurn('two');
      assert.deepEqual([server$('memory')!.connection, server$('memory')!.pid], ['reused', memoryPid], 'memory kept its process');
      assert.equal(server$('notes')!.connection, 'new');
      const notesPid = server$('notes')!.pid!;
      assert.ok(alive(notesPid));
      await evolve([{ path: 'agent/mcp/notes.yaml', content: null }]);
      await s.runTurn('three');
      assert.equal(server$('notes'), undefined);
      await waitFor('the removed server to stop', () => !alive(notesPid), 10_000);
      assert.deepEqual([server$('memory')!.connection, server$('memory')!.pid], ['reused', memoryPid], 'memory still the same process');
      assert.ok(alive(memoryPid));
    } finally {
      await s.close();
    }
  });

  test('a turn with the core unchanged resolves nothing again', async () => {
    const core = repoCore('name: still\napproval:\n  default: auto\nmodel: { provider: scripted, script: script.yaml }\n');
    writeFileSync(join(core, 'script.yaml'), JSON.stringify({ turns: [{ text: 'one' }, { user: 'two' }, { text: 'two' }] }));
    const s = await openSession({ core, stateDir: state.path });
    try {
      const before = s.catalog;
      await s.runTurn('one');
      await s.runTurn('two');
      assert.equal(s.catalog, before, 'the same catalog object: reused by identity');
    } finally {
      await s.close();
    }
    assert.ok(!chainOf(state.path, s.id).some((e) => e.kind === 'catalog.resolved_again'));
  });
});
