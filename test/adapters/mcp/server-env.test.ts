// The environment of a stdio MCP server is built from own entries: a declared name that is special
// to JavaScript objects ("__proto__") stays a variable of the child, its secret not resolved for nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { McpDeclaration } from '../../../src/core/index.js';
import { resolveServerEnv } from '../../../src/adapters/mcp/index.js';

test('a declared env name "__proto__" (literal or secret) reaches the server as a variable; the prototype is untouched', async () => {
  const decl = (value: unknown) =>
    ({ name: 'srv', source: { file: 'agent/mcp/srv.yaml' }, transport: { type: 'stdio', env: [{ name: 'A', value: '1' }, { name: '__proto__', value }] } }) as unknown as McpDeclaration;
  for (const [value, expected] of [['literal-proto', 'literal-proto'], [{ secret: 'S' }, 'from-the-secret-store']] as const) {
    const { env } = await resolveServerEnv(decl(value), async () => 'from-the-secret-store');
    assert.equal(Object.getPrototypeOf(env), Object.prototype);
    assert.equal(Object.getOwnPropertyDescriptor(env, '__proto__')?.value, expected);
    const r = spawnSync('/usr/bin/env', [], { env, encoding: 'utf8' });
    assert.ok(r.stdout.split('\n').includes(`__proto__=${expected}`), r.stdout);
    assert.ok(r.stdout.split('\n').includes('A=1'));
  }
});
