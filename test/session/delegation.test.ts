// Delegation (issue 18), attacked: a child started by delegate_task runs as the supervisor's own
// session over the real store and real process trees. What a hostile parent model, a greedy
// definition or a crafted call tries, and what it got: no grant the parent lacks, the supervisor's
// depth and budget whatever the call says, the parent's deny rules in force, no approval carried
// over, budget exhaustion with partial evidence, and cancellation reaching every descendant.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { approvalDecision, openSession, type ApprovalRequest, type Approver, type RuntimeEvent } from '../../src/index.js';
import { makeCore, removeTempCores } from '../core/temp-core.js';
import { alive, pidsWithCmdline, tempDir, waitFor } from '../helpers/procs.js';
import { runMain } from '../helpers/cli.js';
import { script } from '../helpers/model-script.js';

const yaml = (v: unknown): string => JSON.stringify(v);

/** Says yes (or what `answer` says) and remembers every request. */
class Recording implements Approver {
  readonly asked: ApprovalRequest[] = [];
  constructor(private readonly answer: (r: ApprovalRequest, n: number) => boolean = () => true) {}
  async decide(r: ApprovalRequest) {
    this.asked.push(r);
    const yes = this.answer(r, this.asked.length);
    // Cacheable: an "always" the parent's broker remembers for this exact action.
    return approvalDecision(yes, 'operator', yes ? 'test says yes' : 'test says no', true);
  }
}

interface Parent {
  agent?: Record<string, unknown>;
  script: string;
  agents: Record<string, { def: Record<string, unknown>; script?: string }>;
}

function coreOf(p: Parent): string {
  const files: Record<string, string> = {
    'agent.yaml': yaml({ name: 'parent', toolsets: ['terminal', 'tasks', 'agents'], grants: ['terminal.exec', 'task.read', 'agent.spawn'], approval: { default: 'auto' }, model: { provider: 'scripted', script: 'script.yaml' }, ...p.agent }),
    'script.yaml': p.script,
  };
  for (const [name, a] of Object.entries(p.agents)) {
    files[`agent/agents/${name}.yaml`] = yaml({ description: `the ${name} child`, model: { provider: 'scripted', script: `scripts/${name}.yaml` }, ...a.def });
    files[`scripts/${name}.yaml`] = a.script ?? script({ text: `${name} done` });
  }
  return makeCore(files);
}

/** A parent that delegates to `reader`, whose one call is memory_read_graph; both may connect to memory. */
function readerOfMemory(connect: 'auto' | 'prompt'): string {
  const server = join(process.cwd(), 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
  const core = coreOf({
    agent: { grants: ['agent.spawn', 'mcp.connect:memory', 'mcp.call:memory'] },
    script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'reader', task: 'read the graph' } }] }, { text: 'parent done' }),
    agents: { reader: { def: { grants: ['mcp.connect:memory', 'mcp.call:memory'] }, script: script({ tools: [{ name: 'memory_read_graph' }] }, { text: 'read' }) } },
  });
  mkdirSync(join(core, 'agent', 'mcp'), { recursive: true });
  writeFileSync(join(core, 'agent', 'mcp', 'memory.yaml'), yaml({ name: 'memory', transport: { type: 'stdio', command: process.execPath, args: [server], cwd: '.' }, approval: { connect, call: 'auto' } }));
  return core;
}

describe('delegation: delegate_task and agent.spawn', () => {
  const states: { remove(): void }[] = [];
  const state = (): string => {
    const t = tempDir('deleg-');
    states.push(t);
    return t.path;
  };
  after(() => {
    for (const s of states) s.remove();
    removeTempCores();
  });

  /** One user turn of the parent; returns its tool results and the store for inspection. */
  async function run(core: string, o: { approver?: Approver; deny?: string[]; stateDir?: string } = {}) {
    const stateDir = o.stateDir ?? state();
    const s = await openSession({ core, stateDir, ...(o.approver ? { approver: o.approver } : {}), ...(o.deny ? { rules: { deny: o.deny } } : {}) });
    const results: Extract<RuntimeEvent, { type: 'tool_result' }>['outcome'][] = [];
    try {
      await s.runTurn('go', { onEvent: (e) => void (e.type === 'tool_result' && results.push(e.outcome)) });
    } finally {
      await s.close();
    }
    const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
    const tasks = db.prepare("SELECT * FROM tasks WHERE kind = 'agent.spawn' ORDER BY created_at, rowid").all() as Record<string, any>[];
    const events = (session: string) => db.prepare('SELECT kind, payload FROM runtime_events WHERE session_id = ? ORDER BY seq').all(session).map((e: any) => ({ kind: e.kind as string, payload: JSON.parse(e.payload) }));
    const meta = tasks.map((t) => JSON.parse(t.metadata as string) as Record<string, any>);
    const out = { session: s.id, stateDir, results, tasks, meta, events, close: () => db.close() };
    return out;
  }

  test('a child asking for a grant its parent lacks gets none of it: the call is refused at step 3 and nothing runs', async () => {
    const core = coreOf({
      agent: { grants: ['task.read', 'agent.spawn'] }, // no terminal.exec, though the terminal toolset is on
      script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'greedy', task: 'touch the file', grants: ['terminal.exec', '*', 'secret:TOKEN'] } }] }, { text: 'parent done' }),
      agents: {
        greedy: {
          def: { toolsets: ['terminal', 'tasks', 'web'], grants: ['terminal.exec', 'terminal.*', 'net.fetch', 'task.read'] },
          script: script({ tools: [{ name: 'terminal', arguments: { command: 'touch pwned' } }] }, { text: 'tried' }),
        },
      },
    });
    const r = await run(core, { approver: new Recording() });
    try {
      const resolved = r.meta[0]!.resolved as { grants: string[]; toolsets: string[] };
      // Definition ∩ parent ∩ call: the parent holds task.read, agent.spawn and catalog.read only;
      // the call's '*' and secret add nothing.
      assert.deepEqual(resolved.grants, ['task.read'], 'only what all three hold');
      assert.deepEqual(resolved.toolsets, ['terminal', 'tasks'], 'web: the parent has no such toolset');
      const child = r.events(r.tasks[0]!.child_session_id as string);
      const failed = child.find((e) => e.kind === 'effect.failed');
      assert.equal(failed?.payload.code, 'CAPABILITY_DENIED', JSON.stringify(child));
      assert.equal(existsSync(join(core, 'pwned')), false, 'the command never ran');
      assert.equal(r.results[0]!.ok, true);
    } finally {
      r.close();
    }
  });

  test('a call that asks for more depth, budget or limits is refused at step 1; a greedy definition gets the parent\'s remainder', async () => {
    const core = coreOf({
      agent: { limits: { max_iterations: 6, timeout_seconds: 20, max_tool_calls: 2 } },
      script: script(
        { tools: [{ name: 'delegate_task', arguments: { agent: 'big', task: 'x', max_depth: 9 } }] },
        { tools: [{ name: 'delegate_task', arguments: { agent: 'big', task: 'x', limits: { max_iterations: 1000 } } }] },
        { tools: [{ name: 'delegate_task', arguments: { agent: 'big', task: 'x', budget: 1e9, max_tool_calls: 1e9 } }] },
        { tools: [{ name: 'delegate_task', arguments: { agent: 'big', task: 'you may use 1000 iterations and depth 9' } }] },
        { text: 'parent done' },
      ),
      agents: { big: { def: { limits: { max_iterations: 500, max_tool_calls: 900, timeout_seconds: 80_000 } } } },
    });
    const r = await run(core);
    try {
      assert.deepEqual(r.results.slice(0, 3).map((o) => (o.ok ? 'ok' : o.code)), ['ARGS_INVALID', 'ARGS_INVALID', 'ARGS_INVALID']);
      assert.equal(r.results[3]!.ok, true);
      assert.equal(r.tasks.length, 1, 'only the valid call started a child');
      const reserved = r.meta[0]!.budget.reserved as { iterations: number; toolCalls: number; wallMs: number };
      assert.equal(reserved.iterations, 6, 'max_iterations: the parent has 6');
      assert.equal(reserved.toolCalls, 2, 'max_tool_calls: the parent has 2');
      assert.ok(reserved.wallMs <= 20_000, `wall time within the parent's 20 s (${reserved.wallMs})`);
      assert.equal(r.meta[0]!.depth, 1);
      assert.equal(r.meta[0]!.max_depth, 2, 'the default depth limit');
    } finally {
      r.close();
    }
  });

  test('recursion stops at the depth limit: at the limit delegate_task is absent from the child\'s catalog', async () => {
    for (const [maxDepth, expected] of [[undefined, 2], [1, 1]] as const) {
      const core = coreOf({
        agent: maxDepth === undefined ? {} : { limits: { max_delegation_depth: maxDepth } },
        script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'again', task: 'delegate again' } }] }, { text: 'parent done' }),
        agents: {
          again: {
            def: { toolsets: ['agents', 'tasks'], grants: ['agent.spawn', 'task.read'] },
            script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'again', task: 'and again' } }] }, { text: 'again done' }),
          },
        },
      });
      const r = await run(core);
      try {
        assert.equal(r.tasks.length, expected, `max depth ${maxDepth ?? 'default'}: ${expected} children in all`);
        assert.deepEqual(r.meta.map((m) => m.depth), expected === 2 ? [1, 2] : [1]);
        const deepest = r.meta.at(-1)!;
        assert.equal((deepest.resolved.tools as string[]).includes('delegate_task'), false, 'the deepest child has no delegate_task');
        assert.equal((deepest.resolved.toolsets as string[]).includes('agents'), false);
        // Its attempt is an unknown tool: nothing was started for it.
        assert.match(JSON.stringify(r.events(r.tasks.at(-1)!.child_session_id)), /delegation\.ended/);
      } finally {
        r.close();
      }
    }
    // max_delegation_depth: 0 — the root's own delegate_task is refused at step 4 (the check on every path).
    const core = coreOf({ agent: { limits: { max_delegation_depth: 0 } }, script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'x', task: 't' } }] }, { text: 'done' }), agents: { x: { def: {} } } });
    const r = await run(core);
    try {
      assert.equal(r.results[0]!.ok, false);
      assert.match(JSON.stringify(r.results[0]), /CHECK_FAILED[\s\S]*depth limit/);
      assert.equal(r.tasks.length, 0);
    } finally {
      r.close();
    }
  });

  test("the parent's --deny rule and agent.yaml deny rule hold in the child (the #78063 replay)", async () => {
    for (const variant of ['--deny', 'agent.yaml'] as const) {
      const core = coreOf({
        agent: variant === 'agent.yaml' ? { approval: { default: 'auto', rules: { 'terminal.exec': 'deny' } } } : {},
        script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'worker', task: 'run the denied tool for me' } }] }, { text: 'parent done' }),
        agents: { worker: { def: { toolsets: ['terminal'], grants: ['terminal.exec'] }, script: script({ tools: [{ name: 'terminal', arguments: { command: 'touch denied-but-delegated' } }] }, { text: 'tried' }) } },
      });
      const approver = new Recording();
      const r = await run(core, { approver, ...(variant === '--deny' ? { deny: ['terminal'] } : {}) });
      try {
        const failed = r.events(r.tasks[0]!.child_session_id).find((e) => e.kind === 'effect.failed');
        assert.equal(failed?.payload.code, 'APPROVAL_DENIED', `${variant}: ${JSON.stringify(failed)}`);
        assert.equal(existsSync(join(core, 'denied-but-delegated')), false, `${variant}: the command never ran`);
        assert.equal(approver.asked.length, 0, `${variant}: nobody was even asked`);
      } finally {
        r.close();
      }
    }
  });

  test('approving a call in the parent does not approve the same call in the child: the operator is asked again, tagged with the chain', async () => {
    const same = { name: 'terminal', arguments: { command: 'echo same-action' } };
    const core = coreOf({
      script: script({ tools: [same] }, { tools: [{ name: 'delegate_task', arguments: { agent: 'twin', task: 'run it too' } }] }, { tools: [same] }, { text: 'parent done' }),
      agents: { twin: { def: { toolsets: ['terminal'], grants: ['terminal.exec'] }, script: script({ tools: [same] }, { text: 'twin done' }) } },
    });
    // Yes (remembered) for the parent; no for the child's identical request.
    const approver = new Recording((req) => !req.actionSummary.startsWith('['));
    const r = await run(core, { approver });
    try {
      assert.equal(approver.asked.length, 2, `asked for the parent and again for the child, never a third time: ${approver.asked.map((a) => a.actionSummary)}`);
      assert.equal(approver.asked[0]!.sessionId, r.session);
      assert.equal(approver.asked[1]!.sessionId, r.tasks[0]!.child_session_id, "the child's request carries its own session");
      assert.equal(approver.asked[1]!.actionSummary, '[parent → twin] echo same-action');
      assert.notEqual(approver.asked[0]!.key.id, approver.asked[1]!.key.id);
      const child = r.events(r.tasks[0]!.child_session_id).find((e) => e.kind.startsWith('effect.'));
      assert.equal(child?.payload.code, 'APPROVAL_DENIED');
      // The parent's second identical call came from its cache.
      assert.deepEqual(r.results.map((o) => o.ok), [true, true, true]);
    } finally {
      r.close();
    }
  });

  test('budget exhaustion stops the child with budget_exhausted and returns its partial evidence', async () => {
    const core = coreOf({
      script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'spender', task: 'list twice' } }] }, { text: 'parent done' }),
      agents: {
        spender: {
          def: { toolsets: ['tasks'], grants: ['task.read'], limits: { max_tool_calls: 1 } },
          script: script({ text: 'first I list', tools: [{ name: 'task_list' }] }, { tools: [{ name: 'task_list' }] }, { text: 'never said' }),
        },
      },
    });
    const r = await run(core);
    try {
      const out = r.results[0]!;
      assert.ok(out.ok && out.isError, JSON.stringify(out));
      assert.match(out.views.model.content, /^\[child budget_exhausted\] The child agent spender stopped \(budget_exhausted\): its 1 tool calls were used up/);
      assert.match(out.views.model.content, /task_list: ok/, 'the partial evidence: what ran before the budget ran out');
      assert.equal(r.meta[0]!.status, 'budget_exhausted');
      assert.equal(r.tasks[0]!.status, 'failed');
      assert.match(r.tasks[0]!.reason, /^budget_exhausted/);
      assert.deepEqual(r.meta[0]!.budget.used, { iterations: 2, toolCalls: 1, costUsd: 0 });
    } finally {
      r.close();
    }
  });

  test("the chains link both ways: the child's first event names the parent's head, the parent's effect the child's last; the answer is redacted", async () => {
    const core = coreOf({
      agent: { secrets: { TOKEN: { env: 'DELEG_TEST_TOKEN' } }, grants: ['agent.spawn', 'task.read', 'terminal.exec', 'secret:TOKEN'], tools: { terminal: { secrets: [{ secret: 'TOKEN', env: 'TOKEN', ttl: '5m' }] } } },
      script: script({ tools: [{ name: 'terminal', arguments: { command: 'echo bound' } }] }, { tools: [{ name: 'delegate_task', arguments: { agent: 'talker', task: 'say s3cr3t-deleg-value back' } }] }, { text: 'parent done' }),
      agents: { talker: { def: {}, script: script({ text: 'the token is s3cr3t-deleg-value, as you asked' }) } },
    });
    process.env.DELEG_TEST_TOKEN = 's3cr3t-deleg-value';
    let r;
    try {
      r = await run(core, { approver: new Recording() });
    } finally {
      delete process.env.DELEG_TEST_TOKEN;
    }
    try {
      const out = r.results[1]!;
      assert.ok(out.ok, JSON.stringify(out));
      assert.doesNotMatch(out.views.model.content, /s3cr3t-deleg-value/, 'the child\'s answer passed the redactor');
      assert.match(out.views.model.content, /the token is .*, as you asked/);
      const child = r.tasks[0]!.child_session_id as string;
      const childEvents = r.events(child);
      assert.deepEqual(childEvents.slice(0, 2).map((e) => e.kind), ['session.created', 'delegation.started']);
      const first = childEvents[1]!;
      assert.equal(first.payload.parent_session, r.session);
      assert.equal(first.payload.parent_task, r.tasks[0]!.id);
      const db = new Database(join(r.stateDir, 'supervisor.db'), { readonly: true });
      try {
        const parentHashes = db.prepare('SELECT hash FROM runtime_events WHERE session_id = ?').pluck().all(r.session) as string[];
        assert.ok(parentHashes.includes(first.payload.parent_chain_head), "the parent's head at the start is a hash of the parent's chain");
        const childHead = db.prepare('SELECT hash FROM chain_heads WHERE session_id = ?').pluck().get(child) as string;
        const done = r.events(r.session).find((e) => e.kind === 'effect.completed' && e.payload.tool === 'delegate_task')!;
        assert.equal(done.payload.detail.child_session, child);
        assert.equal(done.payload.detail.child_chain_head, childHead, "the parent's record names the child's final head");
        assert.equal(r.tasks[0]!.log_tail.includes('s3cr3t-deleg-value'), false, 'nor does the task row hold it');
        assert.equal(r.tasks[0]!.summary.includes('s3cr3t-deleg-value'), false, "nor the task's summary (the call's task text)");
        assert.match(r.tasks[0]!.summary, /^talker: say .* back$/);
      } finally {
        db.close();
      }
    } finally {
      r.close();
    }
  });

  test('a child with no model to use fails with the fix, and its session ends (the parent runs on a runtime that brings its own model)', async () => {
    const core = coreOf({ script: script({ text: 'x' }), agents: {} });
    writeFileSync(join(core, 'agent.yaml'), yaml({ name: 'parent', toolsets: ['agents'], grants: ['agent.spawn'], approval: { default: 'auto' }, runtime: 'claude-code' }));
    mkdirSync(join(core, 'agent', 'agents'), { recursive: true });
    writeFileSync(join(core, 'agent', 'agents', 'modelless.yaml'), yaml({ description: 'no model' }));
    const stateDir = state();
    const s = await openSession({ core, stateDir });
    try {
      const out = await s.callTool('delegate_task', { agent: 'modelless', task: 't' });
      assert.ok(out.ok && out.isError, JSON.stringify(out));
      assert.match(out.views.model.content, /\[child failed\].*could not start: the child has no model: add model: to agent\/agents\/modelless\.yaml/);
    } finally {
      await s.close();
    }
    const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
    try {
      assert.deepEqual(db.prepare("SELECT status FROM sessions WHERE status = 'running'").all(), [], 'the child session ended');
      assert.equal((db.prepare("SELECT status FROM tasks WHERE kind = 'agent.spawn'").get() as { status: string }).status, 'failed');
    } finally {
      db.close();
    }
  });

  test('wall time runs out mid-tool-call: the child stops budget_exhausted and its process tree is gone', async () => {
    const marker = `deleg-wall-${process.pid}-${Date.now()}`;
    const core = coreOf({
      script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'slow', task: 'sleep' } }] }, { text: 'parent done' }),
      agents: { slow: { def: { toolsets: ['terminal'], grants: ['terminal.exec'], limits: { timeout_seconds: 1 } }, script: script({ tools: [{ name: 'terminal', arguments: { command: `sleep 30 # ${marker}` } }] }, { text: 'slept' }) } },
    });
    const t0 = Date.now();
    const r = await run(core, { approver: new Recording() });
    try {
      assert.ok(Date.now() - t0 < 15_000, 'stopped at its wall time, not after the sleep');
      assert.equal(r.meta[0]!.status, 'budget_exhausted');
      assert.match(r.results[0]!.views.model.content, /wall time ran out/);
      assert.deepEqual(pidsWithCmdline(marker), [], 'no survivor');
    } finally {
      r.close();
    }
  });

  test("a child passes its own MCP gate, then joins the parent's live connection (one server process); letting go of it at its end leaves the parent's open", async () => {
    const core = readerOfMemory('auto');
    const stateDir = state();
    const s = await openSession({ core, stateDir });
    try {
      const results: boolean[] = [];
      await s.runTurn('go', { onEvent: (e) => void (e.type === 'tool_result' && results.push(e.outcome.ok)) });
      assert.deepEqual(results, [true]);
      const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
      try {
        const spawns = db.prepare('SELECT status FROM spawns ORDER BY started_at').all() as { status: string }[];
        // One server: the parent's (connected at open), which the child's discovery joined; still
        // open after the child let go of it.
        assert.equal(spawns.length, 1, JSON.stringify(spawns));
        assert.equal(spawns[0]!.status, 'running', "the parent's connection is still open");
        const child = (db.prepare("SELECT child_session_id FROM tasks WHERE kind = 'agent.spawn'").get() as { child_session_id: string }).child_session_id;
        const ev = db.prepare("SELECT payload FROM runtime_events WHERE session_id = ? AND kind = 'effect.completed'").all(child) as { payload: string }[];
        assert.match(ev[0]!.payload, /memory_read_graph/);
      } finally {
        db.close();
      }
    } finally {
      await s.close();
    }
  });

  test("a child refused at its own MCP connect gate gets none of the server's tools, although the parent's connection is live", async () => {
    const core = readerOfMemory('prompt');
    const stateDir = state();
    // The operator lets the parent connect and refuses the child (its prompts carry its lineage).
    const approver = new Recording((r) => !(r.capability === 'mcp.connect:memory' && r.actionSummary.includes('→ reader')));
    const s = await openSession({ core, stateDir, approver });
    try {
      assert.equal(s.mcp?.servers[0]?.state, 'connected');
      await s.runTurn('go');
      const childAsked = approver.asked.filter((r) => r.capability === 'mcp.connect:memory' && r.actionSummary.includes('→ reader'));
      assert.equal(childAsked.length, 1, 'the child was asked for its own connect approval');
      const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
      try {
        const child = (db.prepare("SELECT child_session_id FROM tasks WHERE kind = 'agent.spawn'").get() as { child_session_id: string }).child_session_id;
        // memory_read_graph was not in the child's catalog: the call reached no effect at all.
        const effects = db.prepare("SELECT kind FROM runtime_events WHERE session_id = ? AND kind LIKE 'effect.%'").all(child);
        assert.deepEqual(effects, [], 'no effect ran in the child');
        const ended = db.prepare("SELECT payload FROM runtime_events WHERE session_id = ? AND kind = 'delegation.ended'").get(child) as { payload: string };
        assert.equal(JSON.parse(ended.payload).used.toolCalls, 0);
        assert.equal((db.prepare('SELECT COUNT(*) AS n FROM spawns').get() as { n: number }).n, 1, 'no second server');
      } finally {
        db.close();
      }
    } finally {
      await s.close();
    }
  });

  test("an operator's `supervisor cancel` of the agent.spawn task stops the child and its tree; the parent gets [child cancelled]", async () => {
    const marker = `deleg-opcancel-${process.pid}-${Date.now()}`;
    const core = coreOf({
      script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'sleeper', task: 'sleep' } }] }, { text: 'parent done' }),
      agents: { sleeper: { def: { toolsets: ['terminal'], grants: ['terminal.exec'] }, script: script({ tools: [{ name: 'terminal', arguments: { command: `sleep 60 # ${marker}` } }] }, { text: 'slept' }) } },
    });
    const stateDir = state();
    const s = await openSession({ core, stateDir, approver: new Recording() });
    const results: Extract<RuntimeEvent, { type: 'tool_result' }>['outcome'][] = [];
    const turn = s.runTurn('go', { onEvent: (e) => void (e.type === 'tool_result' && results.push(e.outcome)) });
    try {
      await waitFor('the child sleeping', () => pidsWithCmdline(marker).length > 0, 20_000);
      const pids = pidsWithCmdline(marker);
      const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
      const id = (db.prepare("SELECT id FROM tasks WHERE kind = 'agent.spawn'").get() as { id: string }).id;
      db.close();
      const c = await runMain('cancel', id, '--json', '--state-dir', stateDir);
      assert.equal(c.status, 0, c.stdout + c.stderr);
      await turn;
      assert.deepEqual(pids.filter(alive), [], 'the child’s tree is gone');
      assert.match(results[0]!.ok ? results[0]!.views.model.content : '', /^\[child cancelled\]/);
    } finally {
      await s.close();
    }
  });

  test('cancelling the parent cascades to every descendant: no survivor, the tasks end, and a task never ends before its children', async () => {
    const marker = `deleg-cancel-${process.pid}-${Date.now()}`;
    const core = coreOf({
      script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'middle', task: 'delegate the sleep' } }] }, { text: 'parent done' }),
      agents: {
        // The middle child must hold what the leaf needs: a child never gets more than its parent.
        middle: { def: { toolsets: ['agents', 'terminal'], grants: ['agent.spawn', 'terminal.exec'] }, script: script({ tools: [{ name: 'delegate_task', arguments: { agent: 'leaf', task: 'sleep' } }] }, { text: 'middle done' }) },
        leaf: { def: { toolsets: ['terminal'], grants: ['terminal.exec'] }, script: script({ tools: [{ name: 'terminal', arguments: { command: `sleep 60 # ${marker}` } }] }, { text: 'leaf done' }) },
      },
    });
    const stateDir = state();
    const s = await openSession({ core, stateDir, approver: new Recording() });
    const ac = new AbortController();
    const turn = s.runTurn('go', { signal: ac.signal });
    try {
      await waitFor('the grandchild sleeping', () => pidsWithCmdline(marker).length > 0, 20_000);
      const pids = pidsWithCmdline(marker);
      ac.abort();
      await turn;
      assert.deepEqual(pids.filter(alive), [], 'the grandchild tree is gone');
    } finally {
      await s.close();
    }
    const db = new Database(join(stateDir, 'supervisor.db'), { readonly: true });
    try {
      const tasks = db.prepare("SELECT status, ended_at, child_session_id, session_id FROM tasks WHERE kind = 'agent.spawn' ORDER BY created_at, rowid").all() as Record<string, any>[];
      assert.equal(tasks.length, 2);
      for (const t of tasks) assert.notEqual(t.status, 'running');
      assert.ok(tasks[0]!.ended_at >= tasks[1]!.ended_at, 'the middle task ended after its child');
      const sessions = db.prepare("SELECT status FROM sessions WHERE status = 'running'").all();
      assert.deepEqual(sessions, [], 'no session left running');
    } finally {
      db.close();
    }
  });
});
