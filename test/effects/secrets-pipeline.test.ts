// Secrets through the whole effect pipeline: bound only after approval, for one effect, exactly
// granted, delivered to the child, and absent from every view, the audit store and the artifacts,
// even when the child prints them split across writes. Environment overlays always need approval.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ApprovalRules, NonInteractiveApprover, RuleApprover, type Approver } from '../../src/policy/index.js';
import { canonicalJson, readEvents } from '../../src/store/index.js';
import { redactDeep, textRedactor } from '../../src/effects/views.js';
import { filesUnder } from '../helpers/procs.js';
import { runtimeSuite } from './runtime-fixture.js';

const SRC = 'SV_PIPELINE_TEST_SECRET_SRC';

test('the secret-removal walk keeps a "__proto__" key a key: the store takes the redacted copy', () => {
  const secret = `sv-${randomBytes(12).toString('hex')}`;
  const value = JSON.parse(`{"args": {"__proto__": {"token": "${secret}"}, "list": [{"__proto__": "${secret}"}]}}`) as unknown;
  const out = redactDeep(value, textRedactor([secret])) as { args: Record<string, unknown> };
  assert.equal(Object.getPrototypeOf(out.args), Object.prototype, 'the copy has no foreign prototype');
  assert.deepEqual(Object.keys(out.args), ['__proto__', 'list']);
  const text = canonicalJson(out);
  assert.ok(!text.includes(secret));
  assert.match(text, /"__proto__":\{"token":"\[REDACTED\]"\}/);
});

describe('secrets in the effect pipeline', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const suite = runtimeSuite();
  const value = `sv-${randomBytes(12).toString('hex')}`;
  process.env[SRC] = value;

  async function setup(o: { grants?: string; binding?: string; approver?: Approver; approval?: string } = {}) {
    const agent = [
      'name: t',
      'toolsets: [terminal]',
      `grants: [terminal.exec${o.grants ?? ", 'secret:GH_TOKEN'"}]`,
      `secrets:\n  GH_TOKEN: { env: ${SRC} }`,
      `tools:\n  terminal:\n    secrets:\n      - ${o.binding ?? '{ secret: GH_TOKEN, env: GH_TOKEN, ttl: 1m }'}`,
      o.approval ?? '',
    ].join('\n');
    const approver = o.approver ?? new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] }));
    const r = await suite.runtime({ files: { 'agent.yaml': `${agent}\n` }, approver, principal: 'p' });
    const call = (args: Record<string, unknown>) => r.runtime.execute(r.runtime.request('terminal', args)!, r.ctx);
    return { ...r, call };
  }

  test('the bound secret reaches the child and nothing else: views, store and artifacts hold only the marker', async () => {
    const s = await setup();
    // The child proves it got the value (its hash) and prints it whole, then split across writes.
    const half = 'printf %s "$GH_TOKEN" | cut -c1-10; sleep 0.05; printf %s "$GH_TOKEN" | cut -c11-';
    const out = await s.call({
      command: `printf %s "$GH_TOKEN" | sha256sum; echo "token=$GH_TOKEN"; (${half}) | tr -d '\\n'; echo; printf 'x%s' "$GH_TOKEN" | base64 -w0; echo; printf '{"t":"%s"}' "$GH_TOKEN" | base64 -w0; echo; yes "$GH_TOKEN" | head -c 300000 >&2`,
    });
    assert.equal(out.ok, true, JSON.stringify(!out.ok && out.message));
    if (!out.ok) return;
    const content = out.views.model.content;
    assert.ok(content.includes(createHash('sha256').update(value).digest('hex')), 'the child received the exact value');
    assert.match(content, /token=\[REDACTED\]/);
    const encoded = [value, Buffer.from(value).toString('base64').slice(0, 16), Buffer.from(`x${value}`).toString('base64').slice(4, 20)];
    for (const [name, view] of Object.entries(out.views)) {
      for (const e of encoded) assert.ok(!JSON.stringify(view).includes(e), `the ${name} view leaks the secret (${e === value ? 'raw' : 'base64'})`);
    }
    const bindings = out.views.durable.secret_bindings as { secret: string; target: string; expiresAt: string }[];
    assert.deepEqual(bindings.map((b) => [b.secret, b.target]), [['GH_TOKEN', 'GH_TOKEN']]);
    assert.ok(Date.parse(bindings[0]!.expiresAt) > Date.now());
    const db = s.dir; // the store lives in the suite's state dir; scan every file the suite wrote
    void db;
    const stateFiles = filesUnder(join(suite.db().name, '..'));
    assert.ok(stateFiles.length > 0);
    for (const f of stateFiles) {
      if (statSync(f).size > 64 * 1024 * 1024) continue;
      assert.ok(!readFileSync(f).includes(value), `${f} holds the secret`);
    }
  });

  test('a secret set that cannot be redacted safely ends in the one fixed failed result, and nothing runs', async () => {
    const names = Array.from({ length: 16 }, (_, i) => `BIG_${i}`);
    for (const n of names) process.env[`SV_PIPELINE_${n}`] = randomBytes(12288).toString('base64');
    const agent = [
      'name: t',
      'toolsets: [terminal]',
      `grants: [terminal.exec, ${names.map((n) => `'secret:${n}'`).join(', ')}]`,
      `secrets:\n${names.map((n) => `  ${n}: { env: SV_PIPELINE_${n} }`).join('\n')}`,
      `tools:\n  terminal:\n    secrets:\n${names.map((n) => `      - { secret: ${n}, env: ${n}, ttl: 1m }`).join('\n')}`,
    ].join('\n');
    const r = await suite.runtime({ files: { 'agent.yaml': `${agent}\n` }, approver: new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] })), principal: 'p' });
    const out = await r.runtime.execute(r.runtime.request('terminal', { command: 'touch marker' })!, r.ctx);
    assert.deepEqual([out.ok, !out.ok && out.code], [false, 'REDACTION_FAILED']);
    assert.equal(out.views.model.content, 'The tool result could not be safely redacted and was withheld.');
    assert.equal(existsSync(join(r.dir, 'marker')), false);
    for (const n of names) delete process.env[`SV_PIPELINE_${n}`];
  });

  test('without the exact grant the binding is refused at step 6, after approval, and the command never runs', async () => {
    const s = await setup({ grants: ", 'secret:GH_TOKE'" });
    const out = await s.call({ command: 'touch marker' });
    assert.deepEqual([out.ok, !out.ok && out.code, !out.ok && out.step], [false, 'SECRET_DENIED', 6]);
    assert.match(!out.ok ? out.message : '', /exact grant 'secret:GH_TOKEN'/);
    assert.equal(existsSync(join(s.dir, 'marker')), false);
  });

  test('an expired binding is refused and the command never runs', async () => {
    const s = await setup({ binding: "{ secret: GH_TOKEN, env: GH_TOKEN, expires: '2020-01-01T00:00:00Z' }" });
    const out = await s.call({ command: 'touch marker' });
    assert.deepEqual([out.ok, !out.ok && out.code], [false, 'SECRET_DENIED']);
    assert.match(!out.ok ? out.message : '', /expired/);
    assert.equal(existsSync(join(s.dir, 'marker')), false);
  });

  test('the binding expiry clamps the effect: a command outliving its secret is stopped', async () => {
    const s = await setup({ binding: '{ secret: GH_TOKEN, env: GH_TOKEN, ttl: 1s }' });
    const t0 = Date.now();
    const out = await s.call({ command: 'sleep 20' });
    assert.ok(Date.now() - t0 < 10_000, 'stopped near the binding expiry, not after 20 s');
    assert.equal(out.ok, true);
    assert.equal(out.ok && out.isError, true);
    assert.equal(out.ok && (out.views.durable.detail as { reason: string }).reason, 'timeout');
  });

  test('an environment overlay needs approval even for a read-only command (as does any call binding a secret)', async () => {
    const s = await setup({ approver: new NonInteractiveApprover(), approval: 'approval:\n  auto_approve: [read-only]' });
    // A call that binds a secret is never approved by a command class (issue 15): it asks too.
    const plain = await s.call({ command: 'echo hi' });
    assert.deepEqual([plain.ok, !plain.ok && plain.code, !plain.ok && plain.step], [false, 'APPROVAL_DENIED', 5]);
    assert.match(!plain.ok ? plain.message : '', /binds a secret is never approved by a command class/);
    const overlaid = await s.call({ command: 'echo hi', env: { GREETING: 'x' } });
    assert.deepEqual([overlaid.ok, !overlaid.ok && overlaid.code, !overlaid.ok && overlaid.step], [false, 'APPROVAL_DENIED', 5]);
  });

  test('an overlay that controls execution, or replaces a secret target, is refused at step 4', async () => {
    const s = await setup();
    for (const env of [{ LD_PRELOAD: '/tmp/x.so' }, { PATH: '/tmp' }, { NODE_OPTIONS: '--require x' }, { BASH_ENV: 'x' }, { gh_token: 'forged' }]) {
      const out = await s.call({ command: 'touch marker', env });
      assert.deepEqual([out.ok, !out.ok && out.code, !out.ok && out.step], [false, 'CHECK_FAILED', 4], JSON.stringify(env));
    }
    assert.equal(existsSync(join(s.dir, 'marker')), false);
    const ok = await s.call({ command: 'printf %s "$GREETING"', env: { GREETING: 'hello-overlay' } });
    assert.equal(ok.ok && ok.views.model.content.includes('hello-overlay'), true);
    const audit = ok.ok ? (ok.views.durable.audit as { overlayKeys: string[]; envKeys: string[]; executables: { name: string; path: string | null }[] }) : null;
    assert.deepEqual(audit?.overlayKeys, ['GREETING']);
    assert.ok(audit?.envKeys.includes('GH_TOKEN') && audit.envKeys.includes('GREETING'));
    assert.deepEqual(audit?.executables.map((e) => e.name), ['printf']);
  });
  test('a "__proto__" key in the arguments after a secret was resolved: refused at step 4 and audited with the key as a key, not a crash', async () => {
    const s = await setup();
    const first = await s.call({ command: 'true' }); // resolves GH_TOKEN: every view is redacted from now on
    assert.equal(first.ok, true);
    // What a model's JSON reply parses to: an own property named __proto__.
    const out = await s.call(JSON.parse('{"command": "touch marker", "env": {"__proto__": "proto-value"}}') as Record<string, unknown>);
    assert.deepEqual([out.ok, !out.ok && out.code, !out.ok && out.step], [false, 'CHECK_FAILED', 4]);
    assert.match(!out.ok ? out.message : '', /env\.__proto__ is refused/);
    assert.equal(existsSync(join(s.dir, 'marker')), false);
    const failed = readEvents(suite.db(), s.ctx.sessionId).filter((e) => e.kind === 'effect.failed').at(-1)!;
    assert.match(JSON.stringify(failed.payload), /env\.__proto__ is refused/);
    const next = await s.call({ command: 'echo still-working' });
    assert.equal(next.ok && next.views.model.content.includes('still-working'), true);
  });
});
