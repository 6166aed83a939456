// Approval rules against what exists: every spelling either reaches a tool or capability of the
// catalog, or is refused naming the closest valid one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApprovalRules, checkDiscoveredToolRules, closestSpelling, ruleVocabulary, unreachableConfigRule } from '../../src/policy/index.js';

const vocab = ruleVocabulary(
  [
    { name: 'terminal', capability: 'terminal.exec' },
    { name: 'tools_list', capability: 'catalog.read' },
    { name: 'word_count', capability: 'fs.read:docs' },
  ],
  ['memory'],
);
const refused = (flag: 'approve' | 'deny', rule: string): string => {
  try {
    ApprovalRules.parse({ [flag]: [rule] }, vocab);
  } catch (err) {
    return (err as Error).message;
  }
  return assert.fail(`--${flag} ${JSON.stringify(rule)} was accepted`);
};

describe('approval rules against the catalog', () => {
  it('refuses each misspelling, naming the valid one', () => {
    assert.match(refused('deny', 'Terminal'), /did you mean {2}--deny terminal /);
    assert.match(refused('deny', 'TERMINAL:*'), /did you mean {2}--deny terminal /);
    assert.match(refused('deny', 'TERMINAL:rm *'), /did you mean {2}--deny 'terminal:rm \*' /);
    assert.match(refused('deny', ' terminal'), /did you mean {2}--deny terminal /);
    assert.match(refused('deny', 'terminal:'), /glob after ':' is empty.*did you mean {2}--deny terminal /);
    assert.match(refused('deny', 'termnial'), /did you mean {2}--deny terminal /);
    assert.match(refused('approve', 'mcp.connect:memory'), /did you mean {2}--approve capability:mcp\.connect:memory /);
    assert.match(refused('approve', 'mcp.connect:memroy'), /did you mean {2}--approve mcp\.connect\.memory /);
    assert.match(refused('deny', 'capability:proc.exec*'), /whole trailing segment/);
    assert.match(refused('deny', 'capability:proc.exec'), /no tool in this catalog requires a capability proc\.exec covers/);
    assert.match(refused('deny', 'capability:terminal.exex'), /did you mean {2}--deny capability:terminal\.exec /);
    assert.match(refused('deny', 'capability:Terminal.exec'), /did you mean {2}--deny capability:terminal\.exec /);
    assert.match(refused('deny', 'nosuchthing'), /name a tool of this catalog \(mcp\.connect\.memory, terminal, tools_list, word_count\)/);
  });

  it('accepts what exists, and names then match case-sensitively', () => {
    const rules = ApprovalRules.parse(
      { deny: ['terminal', 'capability:fs.*', 'capability:mcp.call:memory', 'mcp.connect.memory', 'memory_read_graph'], approve: ['terminal:ls *', 'capability:mcp.connect:memory'] },
      vocab,
    );
    assert.equal(rules.denial({ toolName: 'terminal', capability: 'terminal.exec', actionSummary: 'x' })?.text, 'terminal');
    assert.equal(rules.denial({ toolName: 'Terminal', capability: 'other.cap', actionSummary: 'x' }), undefined);
  });

  it('after discovery, a rule naming a connected server tool that does not exist is refused', () => {
    const rules = ApprovalRules.parse({ deny: ['memory_read_graf'] }, vocab);
    const after = ruleVocabulary([{ name: 'terminal', capability: 'terminal.exec' }, { name: 'memory_read_graph', capability: 'mcp.call:memory' }], ['memory']);
    assert.throws(() => checkDiscoveredToolRules(rules.all, after, ['memory']), /MCP server memory offers no tool named "memory_read_graf".*did you mean {2}--deny memory_read_graph /);
    assert.doesNotThrow(() => checkDiscoveredToolRules(rules.all, after, []), 'a server that did not connect offers nothing to match');
  });

  it('agent.yaml rules must cover a capability; the message names the field and the spelling', () => {
    assert.equal(unreachableConfigRule('terminal.*', 0, vocab), undefined);
    assert.equal(unreachableConfigRule('mcp.call:memory', 0, vocab), undefined);
    assert.match(unreachableConfigRule('termnal.exec', 2, vocab)!, /^agent\.yaml: approval\.rules\[2\]\.capability "termnal\.exec": .*did you mean "terminal\.exec"\?/);
  });

  it('closestSpelling prefers a case-insensitive match, then a small edit distance, else nothing', () => {
    assert.equal(closestSpelling('TOOLS_LIST', ['terminal', 'tools_list']), 'tools_list');
    assert.equal(closestSpelling('terminl', ['terminal', 'tools_list']), 'terminal');
    assert.equal(closestSpelling('zzzzzz', ['terminal']), undefined);
  });
});
