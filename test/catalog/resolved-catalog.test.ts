// The resolved catalog: one immutable set of entries per turn, names unique across sources with
// no implicit priority, approval that only gets stricter, identity that moves with its inputs.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { loadCore } from '../../src/core/index.js';
import { buildCatalog, catalogIdentity, CatalogBuildError } from '../../src/catalog/index.js';
import { CapabilitySnapshot } from '../../src/policy/index.js';
import { makeCore, removeTempCores, toolFiles } from '../core/temp-core.js';

const EXAMPLE = fileURLToPath(new URL('../../../examples/core/', import.meta.url));

describe('ResolvedEffectCatalog', () => {
  after(removeTempCores);

  test('the example core resolves: tools_list, terminal and the authored tool, each with provenance', async () => {
    const core = await loadCore(EXAMPLE);
    const cat = buildCatalog({ core, principal: 'operator' });
    const names = cat.entries.map((e) => e.name);
    assert.deepEqual(names, ['tools_list', 'terminal', 'word_count']);
    const terminal = cat.entryForCall('terminal')!;
    assert.equal(terminal.source, 'builtin');
    assert.equal(terminal.capability, 'terminal.exec');
    assert.equal(terminal.coreRevision, core.revision);
    assert.match(terminal.provenance, /builtin toolset "terminal"/);
    assert.match(cat.entryForCall('word_count')!.provenance, /agent\/tools\/word_count\/tool\.yaml/);
    assert.ok(cat.entries.every((e) => e.ref.startsWith(`${cat.id}#`)));
    assert.ok(Object.isFrozen(cat) && Object.isFrozen(cat.entries) && Object.isFrozen(terminal));
    assert.deepEqual(
      cat.providerDefinitions().map((d) => Object.keys(d).sort()),
      names.map(() => ['description', 'input_schema', 'name']),
      'providers see names, descriptions and schemas only',
    );
  });

  test('an authored tool named like a builtin is an error naming both, with no implicit priority', async () => {
    const core = await loadCore(makeCore({ 'agent.yaml': 'name: a\ntoolsets: [terminal]\n', ...toolFiles('terminal') }));
    assert.throws(
      () => buildCatalog({ core, principal: 'p' }),
      (e: unknown) =>
        e instanceof CatalogBuildError &&
        e.code === 'CATALOG_NAME_COLLISION' &&
        /builtin toolset "terminal"/.test(e.message) &&
        /agent\/tools\/terminal\/tool\.yaml/.test(e.message) &&
        /rename the authored or MCP tool/.test(e.message),
    );
  });

  test('an MCP tool colliding with an authored tool is dropped with its reason naming both; the catalog stands (a server cannot end the run)', async () => {
    const core = await loadCore(makeCore({ ...toolFiles('search') }));
    const c = buildCatalog({
      core,
      principal: 'p',
      mcpTools: [{ server: 'web', name: 'search', serverTool: 'search', connection: 'mc_1', description: '', inputSchema: { type: 'object' }, declarationFile: 'agent/mcp/web.yaml', approval: 'prompt' }],
    });
    assert.equal(c.entryForCall('search')?.source, 'authored');
    assert.deepEqual(c.droppedMcpTools.map((d) => [d.server, d.name]), [['web', 'search']]);
    assert.match(c.droppedMcpTools[0]!.reason, /already defined by authored tool agent\/tools\/search\/tool\.yaml; rename one of them \(MCP include\/exclude in agent\/mcp\/web\.yaml/);
  });

  test('MCP entries: adapter key bound to the connection and the server\'s tool name, risk from the declaration, a second server’s tool of the same name is dropped naming the first', async () => {
    const core = await loadCore(makeCore({}));
    const tool = { server: 'web', name: 'web_search', serverTool: 'search', connection: 'mc_abc', description: 'd', inputSchema: { type: 'object' }, declarationFile: 'agent/mcp/web.yaml', approval: 'auto' as const, risk: 'high' as const };
    const c = buildCatalog({ core, principal: 'p', mcpTools: [tool], connectPolicy: 'x' });
    const e = c.entryForCall('web_search')!;
    assert.deepEqual([e.source, e.adapterKey, e.capability, e.risk], ['mcp', 'mcp:web/mc_abc/search', 'mcp.call:web', 'high']);
    assert.notEqual(c.id, buildCatalog({ core, principal: 'p', mcpTools: [tool], connectPolicy: 'y' }).id, 'the connect policy is part of the identity');
    const both = buildCatalog({ core, principal: 'p', mcpTools: [tool, { ...tool, server: 'web2', declarationFile: 'agent/mcp/web2.yaml' }] });
    assert.equal(both.entryForCall('web_search')?.adapterKey, 'mcp:web/mc_abc/search', 'the first server keeps the name');
    assert.deepEqual(both.droppedMcpTools.map((d) => d.server), ['web2']);
    assert.match(both.droppedMcpTools[0]!.reason, /already defined by MCP server "web" \(agent\/mcp\/web\.yaml\)/);
  });

  test('approval only gets stricter: global auto and a relaxing override cannot loosen a prompt or deny', async () => {
    const core = await loadCore(
      makeCore({
        'agent.yaml': [
          'name: a',
          'toolsets: [terminal]',
          'approval:',
          '  default: auto',
          '  rules:',
          '    terminal.exec: auto',
          'tools:',
          '  terminal:',
          '    approval: auto',
          '  strict:',
          '    approval: deny',
          '',
        ].join('\n'),
        ...toolFiles('strict', { approval: 'prompt' }),
      }),
    );
    const cat = buildCatalog({ core, principal: 'p' });
    assert.equal(cat.entryForCall('terminal')!.approval, 'prompt', 'builtin prompt stays prompt');
    assert.equal(cat.entryForCall('strict')!.approval, 'deny', 'an override can tighten');
    const strictGlobal = await loadCore(makeCore({ 'agent.yaml': 'name: a\ntoolsets: [terminal]\napproval:\n  default: deny\n' }));
    assert.equal(buildCatalog({ core: strictGlobal, principal: 'p' }).entryForCall('terminal')!.approval, 'deny', 'global deny folds in');
  });

  test('an override for a tool that does not exist is an error', async () => {
    const core = await loadCore(makeCore({ 'agent.yaml': 'name: a\ntools:\n  nosuch:\n    approval: deny\n' }));
    assert.throws(() => buildCatalog({ core, principal: 'p' }), /tools\.nosuch: no tool of that name/);
  });

  test('identity changes with principal, grants, revision, workspace and connect policy, and only then', async () => {
    const base = { principal: 'p', capabilities: CapabilitySnapshot.from(['terminal.exec']), coreRevision: 'r1', workspace: '/w', connectPolicy: '' };
    const id = catalogIdentity(base);
    assert.equal(catalogIdentity({ ...base, capabilities: CapabilitySnapshot.from(['terminal.exec']) }), id);
    for (const change of [
      { principal: 'q' },
      { capabilities: CapabilitySnapshot.from(['terminal.exec', 'session.read']) },
      { coreRevision: 'r2' },
      { workspace: '/x' },
      { connectPolicy: 'mcp.connect:github' },
    ]) {
      assert.notEqual(catalogIdentity({ ...base, ...change }), id, JSON.stringify(Object.keys(change)));
    }
  });

  test('a catalog owns only its own entries: a copy or another catalog’s entry is refused', async () => {
    const core = await loadCore(EXAMPLE);
    const a = buildCatalog({ core, principal: 'p' });
    const b = buildCatalog({ core, principal: 'q' });
    const entry = a.entryForCall('terminal')!;
    assert.equal(a.owns(entry), true);
    assert.equal(a.owns({ ...entry }), false, 'a lookalike copy');
    assert.equal(b.owns(entry), false, 'another principal’s catalog');
    assert.notEqual(a.id, b.id);
  });
});
