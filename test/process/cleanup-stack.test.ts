import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CleanupStack, SyncCleanupStack } from '../../src/process/cleanup-stack.js';

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

test('SyncCleanupStack: closes newest first and synchronously, runs every close when one throws, throws the first error, once', () => {
  const stack = new SyncCleanupStack();
  const order: string[] = [];
  stack.defer(() => order.push('captures'));
  stack.defer(() => {
    order.push('cgroup');
    throw new Error('cgroup failed');
  });
  stack.defer(() => {
    order.push('leader');
    throw new Error('leader failed');
  });
  assert.throws(() => stack.unwind(), /leader failed/);
  assert.deepEqual(order, ['leader', 'cgroup', 'captures']);
  stack.unwind();
  assert.deepEqual(order, ['leader', 'cgroup', 'captures'], 'a second unwind closes nothing again');
  assert.throws(() => stack.defer(() => undefined), /after unwind/);
});
