import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CleanupStack } from '../../src/process/cleanup-stack.js';

test('CleanupStack: closes newest first, runs every close when one throws, rejects with the first error, once', async () => {
  const stack = new CleanupStack();
  const order: string[] = [];
  stack.defer(() => order.push('store'));
  stack.defer(async () => {
    order.push('tasks');
    throw new Error('tasks failed');
  });
  stack.defer(() => {
    order.push('mcp');
    throw new Error('mcp failed');
  });
  const first = stack.unwind();
  assert.equal(stack.unwind(), first, 'a second unwind is the same promise');
  await assert.rejects(first, /mcp failed/);
  assert.deepEqual(order, ['mcp', 'tasks', 'store']);
  assert.throws(() => stack.defer(() => undefined), /after unwind/);
});
