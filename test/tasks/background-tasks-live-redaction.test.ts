// Redaction follows the session's secrets, not the start time of a stream: a background task and a
// foreground tree started before a secret was first resolved print it after a later effect of the
// same session bound it, and neither the task's logs, the store nor any artifact holds the value.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCatalog } from '../../src/catalog/index.js';
import { loadCore } from '../../src/core/index.js';
import { EffectRuntime } from '../../src/effects/index.js';
import { ApprovalBroker, ApprovalRules, RuleApprover } from '../../src/policy/index.js';
import { SecretStore } from '../../src/secrets/index.js';
import { SessionStore } from '../../src/store/index.js';
import { runtimeSuite } from '../effects/runtime-fixture.js';
import { makeCore } from '../core/temp-core.js';
import { filesUnder, tempDir, waitFor } from '../helpers/procs.js';

const SRC = 'SV_LIVE_REDACTION_SECRET_SRC';

describe('redaction follows the secrets, not the start time', { skip: process.platform !== 'linux' && 'POSIX shell commands' }, () => {
  const suite = runtimeSuite();
  const scratch = tempDir('live-redaction-');
  const value = `sv-live-${randomBytes(12).toString('hex')}`;
  process.env[SRC] = value;
  // The children read the value from a file the test controls, never through a binding.
  const valueFile = join(scratch.path, 'value.txt');
  writeFileSync(valueFile, value);

  const base = ['name: t', 'toolsets: [terminal, tasks]', 'approval:', '  default: auto', `secrets:\n  GH_TOKEN: { env: ${SRC} }`];
  const approver = new RuleApprover(ApprovalRules.parse({ approve: ['terminal'] }));

  test('a background task and a foreground tree started before the secret was first resolved redact it when they print it later', async () => {
    // One session, one secret store: core A runs commands without bindings (a background task may
    // take none); core B's terminal binds GH_TOKEN — the later effect that first resolves it.
    const coreA = await loadCore(makeCore({ 'agent.yaml': [...base, 'grants: [terminal.exec, task.read, task.control]'].join('\n') + '\n' }));
    const coreB = await loadCore(
      makeCore({ 'agent.yaml': [...base, "grants: [terminal.exec, 'secret:GH_TOKEN']", 'tools:\n  terminal:\n    secrets:\n      - { secret: GH_TOKEN, env: GH_TOKEN, ttl: 1m }'].join('\n') + '\n' }),
    );
    const secrets = SecretStore.fromCore(coreB);
    const worker = suite.taskWorker();
    const principal = 'alice';
    const session = new SessionStore(suite.db()).createSession({ principal }, { coreDir: coreA.dir, coreRevision: coreA.revision, runtime: 'local' });
    const ctx = { principal, sessionId: session.id };
    const runtimeFor = (core: typeof coreA) =>
      new EffectRuntime({ catalog: buildCatalog({ core, principal }), broker: new ApprovalBroker({ approver }), supervisor: suite.supervisor(), db: suite.db(), secrets, tasks: worker });
    const a = runtimeFor(coreA);
    const b = runtimeFor(coreB);
    assert.equal(secrets.knownCount, 0, 'nothing resolved yet');

    // Both wait, then print the value whole, split across writes, and on stderr.
    const printLater = `sleep 2; echo "v=$(cat '${valueFile}')"; head -c 10 '${valueFile}'; sleep 0.2; tail -c +11 '${valueFile}'; echo; cat '${valueFile}' >&2`;
    const started = await a.execute(a.request('terminal', { command: printLater, background: true })!, ctx);
    assert.equal(started.ok, true, JSON.stringify(!started.ok && started.message));
    const taskId = /\[started background task (tk_[0-9a-f]+)\]/.exec(started.ok ? started.views.model.content : '')?.[1];
    assert.ok(taskId);
    const foreground = a.execute(a.request('terminal', { command: printLater })!, ctx);

    // The later effect binds the secret: from here on the session knows the value.
    const bound = await b.execute(b.request('terminal', { command: 'test -n "$GH_TOKEN" && echo bound' })!, ctx);
    assert.equal(bound.ok, true, JSON.stringify(!bound.ok && bound.message));
    assert.equal(secrets.knownCount, 1, 'the binding resolved the secret');

    const fg = await foreground;
    assert.equal(fg.ok, true, JSON.stringify(!fg.ok && fg.message));
    const task = await waitFor('the task to end', () => {
      const t = worker.get({ principal }, taskId!);
      return t && t.status !== 'running' ? t : null;
    }, 20_000);
    assert.equal(task.status, 'completed');
    const logs = worker.store.logs({ principal }, taskId!)!.map((c) => c.chunk).join('');
    assert.ok(!logs.includes(value), 'task logs hold the secret');
    assert.match(logs, /v=\[REDACTED\]/, 'the task printed (redacted) after the resolution');
    assert.ok(!logs.includes(value.slice(10)), 'task logs hold the split tail of the secret');
    // The store (db, WAL) and every artifact: no file of the state directory holds the value.
    const stateFiles = filesUnder(join(suite.db().name, '..'));
    assert.ok(stateFiles.some((f) => f.includes('artifacts')), 'artifacts were written');
    for (const f of stateFiles) assert.ok(!readFileSync(f).includes(value), `${f} holds the secret`);
  });
});
