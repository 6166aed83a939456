// A server's tools/list is untrusted: a tool whose schema cannot be compiled (invalid pattern, or
// one the linear-time engine cannot run) is dropped with its reason and the server's other tools
// stay; a pattern that backtracks exponentially on V8 runs in linear time and stalls nothing.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { linearOutputSchemaValidator } from '../../../src/adapters/mcp/output-schema-validator.js';
import { stallReport, withLoopLag } from '../../helpers/loop-lag.js';
import { fixtureDecl, mcpSuite } from './mcp-fixture.js';

describe('MCP tools with hostile input schemas', { skip: process.platform !== 'linux' && 'fixtures use POSIX tools' }, () => {
  const s = mcpSuite();

  test('an invalid pattern and a lookahead drop only their tools, with the reason; echo and redos stay', async () => {
    const core = await s.core({ 'agent/mcp/hs.yaml': fixtureDecl('hs', 'hostile-schemas') });
    const { found, catalog, call } = await s.session(core, s.manager());
    const st = found.servers[0]!;
    assert.equal(st.state, 'connected', st.message ?? '');
    assert.deepEqual(st.dropped.map((d) => d.tool).sort(), ['broken', 'lookahead']);
    assert.match(st.dropped.find((d) => d.tool === 'broken')!.reason, /inputSchema\.properties\.q\.pattern .*missing closing \)/);
    assert.match(st.dropped.find((d) => d.tool === 'lookahead')!.reason, /linear-time engine/);
    const names = catalog.entries.filter((e) => e.source === 'mcp').map((e) => e.name);
    assert.ok(names.includes('hs_echo') && names.includes('hs_redos'), names.join(', '));
    // Output schemas are the SDK client's, checked at a tool's structured result: an invalid one does not fail the listing.
    assert.ok(names.includes('hs_outbroken') && names.includes('hs_outredos'), names.join(', '));
    assert.ok(!names.includes('hs_broken') && !names.includes('hs_lookahead'), names.join(', '));
    const echoed = await call('hs_echo', { text: 'still here' });
    assert.equal(echoed.ok, true, JSON.stringify(echoed));
  });

  test("redos's '^(a+)+$' against 27 a's and '!' is refused in milliseconds while the event loop keeps ticking; a match still calls the server", async () => {
    const core = await s.core({ 'agent/mcp/hs.yaml': fixtureDecl('hs', 'hostile-schemas') });
    const { call } = await s.session(core, s.manager());
    // 27 characters: V8's backtracking engine needs seconds here (time doubles per character).
    const lag = await withLoopLag(() => call('hs_redos', { q: `${'a'.repeat(27)}!` }));
    const out = lag.value;
    assert.equal(!out.ok && out.code, 'ARGS_INVALID', JSON.stringify(out));
    assert.ok(lag.cpuMs < 200, stallReport(lag));
    const ok = await call('hs_redos', { q: 'aaaa' });
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.match(ok.ok ? ok.views.model.content : '', /aaaa/);
  });

  test("a structured result checked against the server's outputSchema '^(a+)+$' (27 a's and '!') fails in milliseconds, not seconds", async () => {
    const core = await s.core({ 'agent/mcp/hs.yaml': fixtureDecl('hs', 'hostile-schemas') });
    const { call } = await s.session(core, s.manager());
    const lag = await withLoopLag(() => call('hs_outredos', {}));
    assert.ok(lag.cpuMs < 200, stallReport(lag));
    const text = JSON.stringify(lag.value);
    assert.match(text, /output ?schema|structured content/i, text);
  });

  test('an outputSchema is compiled at its first structured result, not when the tools are listed, once; the outcomes are unchanged', () => {
    // A getter in the schema counts every read of it: the listing (getValidator) must read nothing.
    let reads = 0;
    const counted = (pattern: string) => ({
      type: 'object',
      properties: {
        get q() {
          reads++;
          return { type: 'string', pattern };
        },
      },
      required: ['q'],
    });
    const good = linearOutputSchemaValidator.getValidator<{ q: string }>(counted('^a+$'));
    const broken = linearOutputSchemaValidator.getValidator<{ q: string }>(counted('('));
    assert.equal(reads, 0, 'a schema was compiled when the tools were listed');
    assert.deepEqual(good({ q: 'aaa' }), { valid: true, data: { q: 'aaa' }, errorMessage: undefined });
    const afterFirst = reads;
    assert.ok(afterFirst > 0, 'the first structured result did not compile the schema');
    const refused = good({ q: 'b' });
    assert.equal(refused.valid, false);
    assert.equal(refused.errorMessage, '/q must match pattern "^a+$"');
    assert.equal(reads, afterFirst, 'the schema was compiled again');
    const unusable = broken({ q: 'x' });
    assert.equal(unusable.valid, false);
    assert.match(String(unusable.errorMessage), /^the server's outputSchema cannot be used: pattern "\(" cannot be used \(.*missing closing \)/);
  });
});
