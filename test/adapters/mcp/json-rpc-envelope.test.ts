// The hand-written envelope check accepts exactly what the SDK's JSONRPCMessageSchema accepts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcMessage } from '../../../src/adapters/mcp/json-rpc-envelope.js';

const SAMPLES: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
  { jsonrpc: '2.0', id: 'a', method: 'ping' },
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 2 } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 3, result: { content: [] } },
  { jsonrpc: '2.0', id: 3, result: {} },
  { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'no such method' } },
  { jsonrpc: '2.0', id: 4, error: { code: -32601, message: 'm', data: { any: 1 } } },
  { jsonrpc: '2.0', error: { code: -32700, message: 'parse error' } },
  // refused
  null, 42, 'text', [], [{ jsonrpc: '2.0', method: 'x' }],
  { jsonrpc: '1.0', id: 1, method: 'x' },
  { id: 1, method: 'x' },
  { jsonrpc: '2.0', id: 1.5, method: 'x' },
  { jsonrpc: '2.0', id: null, method: 'x' },
  { jsonrpc: '2.0', id: 1, method: 7 },
  { jsonrpc: '2.0', id: 1, method: 'x', params: [1, 2] },
  { jsonrpc: '2.0', id: 1, method: 'x', params: null },
  { jsonrpc: '2.0', id: 1, method: 'x', extra: true },
  { jsonrpc: '2.0', method: 'x', extra: true },
  { jsonrpc: '2.0', id: 1, result: [] },
  { jsonrpc: '2.0', id: 1, result: null },
  { jsonrpc: '2.0', result: {} },
  { jsonrpc: '2.0', id: 1, result: {}, extra: 1 },
  { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'm' } },
  { jsonrpc: '2.0', id: 1, error: { code: 1 } },
  { jsonrpc: '2.0', id: 1, error: 'boom' },
  { jsonrpc: '2.0', id: 1, error: { code: 1, message: 'm' }, extra: 1 },
  { jsonrpc: '2.0', id: {}, error: { code: 1, message: 'm' } },
  { jsonrpc: '2.0', id: 1 },
];

test('the envelope check agrees with the SDK schema on every sample', () => {
  for (const v of SAMPLES) {
    const sdk = JSONRPCMessageSchema.safeParse(v).success;
    assert.equal(jsonRpcMessage(v) !== null, sdk, `disagreement on ${JSON.stringify(v)}`);
  }
  assert.ok(SAMPLES.filter((v) => jsonRpcMessage(v) !== null).length === 9, 'the valid samples pass');
});
