// The turn loop across user turns: a session's second turn continues the first's conversation
// (model views only), and the scripted provider plays the user's later messages in order.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseScriptedModelScript } from '../../src/core/index.js';
import { runTurn, ScriptedProvider, ScriptOutOfStepError, type HistoryItem, type ModelProvider, type ModelTurn } from '../../src/turns/index.js';
import { NonInteractiveApprover } from '../../src/policy/index.js';
import { runtimeSuite } from '../effects/runtime-fixture.js';

/** A model double that answers from a list and records the history length it was shown. */
class RecordingProvider implements ModelProvider {
  readonly name = 'recording';
  readonly seen: HistoryItem[][] = [];
  constructor(private readonly answers: ModelTurn[]) {}
  async next(history: readonly HistoryItem[]): Promise<ModelTurn> {
    this.seen.push(history.map((h) => ({ ...h })) as HistoryItem[]);
    const a = this.answers.shift();
    if (!a) throw new Error('no answer left');
    return a;
  }
}

describe('runTurn across user turns', () => {
const suite = runtimeSuite();

test('a second user turn with the session history sees the first turn, tool results as model views', async () => {
  const { runtime, ctx } = await suite.runtime({ files: { 'agent.yaml': 'name: t\napproval:\n  default: auto\n' }, approver: new NonInteractiveApprover(), principal: 'p' });
  const { principal, sessionId } = ctx;
  const provider = new RecordingProvider([
    { text: null, toolCalls: [{ id: 'c1', name: 'tools_list', arguments: {} }] },
    { text: 'listed', toolCalls: [] },
    { text: 'second answer', toolCalls: [] },
  ]);
  const history: HistoryItem[] = [];
  const o = { runtime, provider, principal, sessionId, maxIterations: 4, history };
  const first = await runTurn('first question', o);
  assert.equal(first.outcome, 'completed');
  const second = await runTurn('second question', o);
  assert.deepEqual([second.outcome, second.finalText], ['completed', 'second answer']);
  const shown = provider.seen[2]!;
  assert.deepEqual(shown.map((h) => h.role), ['user', 'assistant', 'tool', 'assistant', 'user']);
  assert.equal((shown[0] as { content: string }).content, 'first question');
  assert.equal((shown[4] as { content: string }).content, 'second question');
  const tool = shown[2] as Extract<HistoryItem, { role: 'tool' }>;
  assert.equal(typeof tool.content, 'string');
  assert.ok(!('views' in tool) && !('outcome' in tool), 'only the model view reaches the model');
});
});

test('the scripted provider plays user messages between model turns and refuses to answer out of step', async () => {
  const script = parseScriptedModelScript('turns:\n  - user: one\n  - text: a\n  - user: two\n  - text: b\n', 'script.yaml');
  const p = new ScriptedProvider(script);
  assert.equal(p.nextUserMessage(), 'one');
  assert.equal(p.nextUserMessage(), null, 'a model turn is next, not a user message');
  assert.equal((await p.next([], [])).text, 'a');
  await assert.rejects(p.next([], []), ScriptOutOfStepError);
  assert.equal(p.nextUserMessage(), 'two');
  assert.equal((await p.next([], [])).text, 'b');
  assert.equal(p.nextUserMessage(), null);
});
