// auto_approve: [read-only] lets literal read-only commands that stay inside the workspace run
// without asking, inside the OS sandbox; everything else still asks (and, with nobody to ask, is denied).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { NonInteractiveApprover } from '../../src/policy/index.js';
import { runtimeSuite } from './runtime-fixture.js';

describe('auto-approval of read-only commands', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const suite = runtimeSuite();

  async function runtimeFor(approval: string) {
    const { dir, runtime, ctx } = await suite.runtime({
      files: { 'agent.yaml': `name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n${approval}` },
      approver: new NonInteractiveApprover(),
      principal: 'p',
    });
    mkdirSync(join(dir, 'sub'));
    symlinkSync('/etc', join(dir, 'escape'));
    const call = (command: string) => runtime.execute(runtime.request('terminal', { command })!, ctx);
    return { dir, call };
  }

  test('a literal read-only command inside the workspace runs without asking', async () => {
    const r = await runtimeFor('  default: prompt\n  auto_approve: [read-only]\n');
    for (const command of ['ls', 'echo hello && pwd', 'ls sub | wc -l', 'uname -a']) {
      const out = await r.call(command);
      assert.equal(out.ok, true, `${command}: ${JSON.stringify(!out.ok && out.message)}`);
      assert.equal((out.views.durable.approval as { source: string }).source, 'policy');
      // Approved by a class, so run inside the OS sandbox (issue 15; tests in auto-approve-sandbox).
      assert.deepEqual((out.views.durable.audit as { sandbox: unknown }).sandbox, { sandboxed: true, because: 'class', why: 'auto-approved by class read-only' });
    }
  });

  test('writes, substitutions, unsafe flags, paths outside and symlinks out still ask (and are denied here)', async () => {
    const r = await runtimeFor('  default: prompt\n  auto_approve: [read-only]\n');
    for (const command of ['ls > marker', 'echo $(touch marker)', 'find . -exec touch marker \\;', 'cat /etc/hostname', 'cat ~/.profile', 'cat ../x', 'cat escape/hostname', 'touch marker', 'git status']) {
      const out = await r.call(command);
      assert.equal(!out.ok && out.code, 'APPROVAL_DENIED', command);
    }
    assert.equal(existsSync(join(r.dir, 'marker')), false);
  });

  test('without auto_approve, or under a global deny, even ls asks', async () => {
    const plain = await runtimeFor('  default: prompt\n');
    assert.equal((await plain.call('ls')).ok, false);
    const denied = await runtimeFor('  default: deny\n  auto_approve: [read-only]\n');
    const out = await denied.call('ls');
    assert.equal(!out.ok && out.code, 'APPROVAL_DENIED');
  });
});
