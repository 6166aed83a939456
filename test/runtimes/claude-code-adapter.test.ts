// The claude-code adapter's pure parts: the argv it builds and the checks that refuse an argv
// (its own or an operator's) that would expose a built-in tool; the stream-json reader on hostile
// input; the bounded line splitter; budgets clamped by the supervisor's ceilings.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BoundedLineSplitter, claudeCodeAdapter as cc, externalBudgets, EXTERNAL_CEILINGS, RuntimeSetupError, type CliArgvInput } from '../../src/runtimes/index.js';
import type { CoreSnapshot } from '../../src/core/index.js';

const budgets = { maxTurns: 4, maxToolCalls: 4, wallClockMs: 60_000, maxCostUsd: 0.5, maxStoredOutputBytes: 8 * 1024 * 1024, clamped: [] };
const input = (passThrough: string[] = []): CliArgvInput => ({ mcpConfigPath: '/state/runtimes/se_x/mcp.json', tools: ['terminal', 'tools_list'], budgets, passThrough });
const refusedWith = (fn: () => void, re: RegExp): void => {
  assert.throws(fn, (e: unknown) => e instanceof RuntimeSetupError && e.code === 'RUNTIME_FLAG_FORBIDDEN' && re.test(e.message));
};

describe('claude-code argv', () => {
  test('the adapter\'s own argv: no built-ins, strict MCP config, only catalog tools allowed, dontAsk, budgets', () => {
    const argv = cc.buildArgv(input());
    cc.checkArgv(argv, input());
    assert.deepEqual(cc.builtinsExposed(argv), []);
    const at = (f: string) => argv[argv.indexOf(f) + 1];
    assert.equal(at('--tools'), '');
    assert.equal(at('--allowedTools'), 'mcp__supervisor__terminal,mcp__supervisor__tools_list');
    assert.equal(at('--permission-mode'), 'dontAsk');
    assert.equal(at('--mcp-config'), '/state/runtimes/se_x/mcp.json');
    assert.ok(argv.includes('--strict-mcp-config'));
    assert.equal(at('--max-turns'), '4');
    assert.equal(at('--max-budget-usd'), '0.5');
    assert.ok(at('--disallowedTools')!.split(',').includes('Bash'));
    assert.equal(at('--setting-sources'), 'user');
    assert.deepEqual(JSON.parse(at('--settings')!), { disableAllHooks: true });
    assert.ok(!argv.some((a) => /prompt|fake:/.test(a)), 'the prompt goes to stdin');
  });

  test('an argv that lost --tools "", holds a built-in allowance or a bypass is refused', () => {
    const base = cc.buildArgv(input());
    const without = (flag: string, n = 2) => {
      const a = [...base];
      a.splice(a.indexOf(flag), n);
      return a;
    };
    refusedWith(() => cc.checkArgv(without('--tools'), input()), /--tools exactly once/);
    refusedWith(() => cc.checkArgv(without('--strict-mcp-config', 1), input()), /strict-mcp-config/);
    refusedWith(() => cc.checkArgv(without('--permission-mode'), input()), /permission-mode/);
    refusedWith(() => cc.checkArgv([...base, '--tools', 'Bash'], input()), /--tools exactly once/);
    refusedWith(() => cc.checkArgv(base.map((a) => (a.startsWith('mcp__supervisor__') ? `${a},Bash` : a)), input()), /--allowedTools Bash/);
    refusedWith(() => cc.checkArgv(base.map((a) => (a === 'dontAsk' ? 'bypassPermissions' : a)), input()), /permission-mode/);
    refusedWith(() => cc.checkArgv([...base, '--dangerously-skip-permissions'], input()), /bypasses every permission/);
    refusedWith(() => cc.checkArgv([...base, '--mcp-config', '/tmp/mine.json'], input()), /--mcp-config exactly once/);
    refusedWith(() => cc.checkArgv([...base, '--add-dir=/'], input()), /filesystem reach/);
    refusedWith(() => cc.checkArgv([...base, '--settings', '{"permissions":{"allow":["Bash"]}}'], input()), /--settings exactly once/);
    refusedWith(() => cc.checkArgv(base.map((a) => (a === 'user' ? 'user,project,local' : a)), input()), /--setting-sources exactly once/);
    assert.deepEqual(cc.builtinsExposed(without('--tools')), ['built-in tools (--tools [])']);
    assert.deepEqual(cc.builtinsExposed([...base.map((a) => (a.startsWith('mcp__supervisor__') ? `${a},Bash` : a))]), ['Bash']);
  });

  test('operator pass-through: an allowlist; everything that could widen authority is refused with its reason', () => {
    cc.checkPassThrough(['--model', 'sonnet', '--append-system-prompt=Be brief.', '--effort', 'low']);
    const cases: [string[], RegExp][] = [
      [['--dangerously-skip-permissions'], /bypasses every permission/],
      [['--allow-dangerously-skip-permissions'], /bypassPermissions/],
      [['--permission-mode', 'bypassPermissions'], /permission mode/],
      [['--permission-mode=acceptEdits'], /permission mode/],
      [['--allowedTools', 'Bash'], /built-in tools/],
      [['--allowed-tools=Read'], /built-in tools/],
      [['--tools', 'default'], /turns every built-in tool off/],
      [['--disallowedTools', 'mcp__supervisor__terminal'], /deny list/],
      [['--add-dir', '/'], /filesystem reach/],
      [['--mcp-config', 'x.json'], /per-run MCP server/],
      [['--strict-mcp-config'], /sets it/],
      [['--settings', '{}'], /hooks/],
      [['--setting-sources', 'user'], /hooks/],
      [['--plugin-dir', '/p'], /plugins/],
      [['--agents', '{}'], /agent definitions/],
      [['--permission-prompt-tool', 'x'], /permission decisions/],
      [['--resume', 'id'], /another conversation/],
      [['-c'], /another conversation/],
      [['--max-turns', '999'], /budgets/],
      [['--max-budget-usd', '99'], /budgets/],
      [['--output-format', 'text'], /stream-json/],
      [['--model'], /needs a value/],
      [['--some-future-flag'], /allowlist/],
      [['a prompt word'], /allowlist/],
    ];
    for (const [args, re] of cases) refusedWith(() => cc.checkPassThrough(args), re);
    // A pass-through cannot smuggle a flag as the value of an allowed one and then add another.
    refusedWith(() => cc.checkPassThrough(['--model', 'x', '--add-dir', '/']), /filesystem/);
  });

  test('the MCP config names the per-run server with its token as a header', () => {
    const c = JSON.parse(cc.mcpConfig('http://127.0.0.1:5555/mcp', 'tok'));
    assert.deepEqual(c, { mcpServers: { supervisor: { type: 'http', url: 'http://127.0.0.1:5555/mcp', headers: { Authorization: 'Bearer tok' } } } });
  });
});

describe('claude-code stream-json', () => {
  test('the real shapes: init, assistant with text and tool_use, user tool_result, result', () => {
    assert.deepEqual(cc.parseEvent({ type: 'system', subtype: 'init', tools: ['mcp__supervisor__terminal'], model: 'm', claude_code_version: '2.1.0', mcp_servers: [{ name: 'supervisor', status: 'connected' }] }), {
      kind: 'init',
      tools: ['mcp__supervisor__terminal'],
      model: 'm',
      version: '2.1.0',
      mcpServers: [{ name: 'supervisor', status: 'connected' }],
    });
    assert.deepEqual(cc.parseEvent({ type: 'assistant', message: { content: [{ type: 'text', text: 'hi' }, { type: 'tool_use', id: 't1', name: 'Bash', input: {} }] } }), {
      kind: 'assistant',
      text: 'hi',
      toolUses: [{ id: 't1', name: 'Bash' }],
    });
    assert.deepEqual(cc.parseEvent({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't1', is_error: true }] } }), { kind: 'tool_result', toolUseId: 't1', isError: true });
    assert.deepEqual(cc.parseEvent({ type: 'result', subtype: 'success', is_error: false, total_cost_usd: 0.02, num_turns: 3, result: 'ok' }), {
      kind: 'result',
      subtype: 'success',
      isError: false,
      costUsd: 0.02,
      turns: 3,
      stopReason: null,
      text: 'ok',
    });
  });

  test('hostile values are read as nothing, never thrown on', () => {
    for (const v of [null, 42, 'x', [], [1], { type: 42 }, { type: null }]) assert.equal(cc.parseEvent(v), null, JSON.stringify(v));
    assert.deepEqual(cc.parseEvent({ type: 'assistant', message: { content: 'not blocks' } }), { kind: 'assistant', text: null, toolUses: [] });
    assert.deepEqual(cc.parseEvent({ type: 'assistant', message: { content: [{ type: 'tool_use', id: {}, name: ['x'] }, null, 7] } }), { kind: 'assistant', text: null, toolUses: [{ id: '?', name: '?' }] });
    const r = cc.parseEvent({ type: 'result', subtype: 'success', total_cost_usd: 'free', num_turns: Infinity });
    assert.deepEqual([r && 'costUsd' in r ? r.costUsd : 'x', r && 'turns' in r ? r.turns : 'x'], [null, null]);
    const long = cc.parseEvent({ type: 'assistant', message: { content: [{ type: 'text', text: 'y'.repeat(100_000) }] } });
    assert.ok(long && long.kind === 'assistant' && long.text!.length <= 4000);
    assert.deepEqual(cc.parseEvent({ type: 'system', subtype: 'init', tools: 'Bash' }), { kind: 'init', tools: [], model: null, version: null, mcpServers: [] });
  });

  test('lines are bounded: an oversized line is dropped whole and reading resumes after it', () => {
    const s = new BoundedLineSplitter(16);
    const got = [...s.push(Buffer.from('{"a":1}\n0123456789')), ...s.push(Buffer.from('0123456789abc\n{"b":2}\r\n{"c"')), ...s.push(Buffer.from(':3}'))];
    assert.deepEqual(got, [{ line: '{"a":1}' }, { oversized: 23 }, { line: '{"b":2}' }]);
    assert.deepEqual(s.end(), { line: '{"c":3}' });
    assert.equal(s.end(), null);
    const multi = new BoundedLineSplitter(8);
    assert.deepEqual(multi.push(Buffer.from('é'.repeat(3) + '\n')), [{ line: 'ééé' }], 'a multi-byte line under the cap is whole');
  });
});

describe('external budgets', () => {
  const coreWith = (limits: Record<string, number>): CoreSnapshot => ({ agent: { limits } }) as unknown as CoreSnapshot;
  test('defaults, the core\'s own limits, and the supervisor\'s ceilings', () => {
    const d = externalBudgets(coreWith({}));
    assert.deepEqual([d.maxTurns, d.maxToolCalls, d.wallClockMs, d.maxCostUsd, d.clamped], [8, 8, 600_000, 1, []]);
    const own = externalBudgets(coreWith({ max_iterations: 3, timeout_seconds: 2.5, max_cost_usd: 0.25 }));
    assert.deepEqual([own.maxTurns, own.wallClockMs, own.maxCostUsd], [3, 2500, 0.25]);
    const big = externalBudgets(coreWith({ max_iterations: 1000, timeout_seconds: 86_400, max_cost_usd: 100 }));
    assert.deepEqual([big.maxTurns, big.wallClockMs, big.maxCostUsd], [EXTERNAL_CEILINGS.maxTurns, EXTERNAL_CEILINGS.wallClockMs, EXTERNAL_CEILINGS.maxCostUsd]);
    assert.equal(big.clamped.length, 3);
  });
});
