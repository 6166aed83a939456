// Issue 15, break 3: a secret file the agent's own commands could read is refused when the core is
// loaded: inside the workspace (written plainly, through a symlinked directory, spelled with '..')
// or with a second hard link. The message names agent.yaml, the field, the file and the fix.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { loadCore } from '../../src/core/index.js';
import { loadFails, makeCore, makeTempDir, removeTempCores } from './temp-core.js';

after(removeTempCores);

const VALUE = 'secret-source-rules-value-5f1c';

function agentWith(secretFile: string, workspace?: string): string {
  return [
    'name: t',
    'toolsets: [terminal]',
    "grants: [terminal.exec, 'secret:TOK']",
    ...(workspace ? [`workspace: ${workspace}`] : []),
    `secrets:\n  TOK: { file: '${secretFile}' }`,
    'tools:\n  terminal:\n    secrets:\n      - { secret: TOK, env: TOK, ttl: 1m }',
    '',
  ].join('\n');
}

/** A 0600 secret file at `file`. */
function secretAt(file: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${VALUE}\n`, { mode: 0o600 });
  return file;
}

async function refusedFor(dir: string, pattern: RegExp, opts?: { workspace: string }): Promise<string> {
  const err = await loadFails(dir, opts);
  const text = err.message;
  assert.match(text, /agent\.yaml/);
  assert.match(text, /secrets\.TOK\.file/);
  assert.match(text, pattern);
  assert.ok(!text.includes(VALUE), 'the message never quotes the value');
  return text;
}

describe('secret sources the agent could read are refused at load', { skip: process.platform === 'win32' && 'POSIX links and modes' }, () => {
  it('a relative file inside the core, which is the default workspace (cat s would print it)', async () => {
    const dir = makeCore({ 'agent.yaml': agentWith('s') });
    secretAt(path.join(dir, 's'));
    const text = await refusedFor(dir, /inside the workspace/);
    assert.match(text, /move the file out of the workspace/);
  });

  it('an absolute path into the workspace, one through a symlinked directory, and one spelled with ..', async () => {
    const ws = makeTempDir('ws-');
    const real = secretAt(path.join(ws, 'keys', 'tok'));
    const elsewhere = makeTempDir('alias-');
    fs.symlinkSync(ws, path.join(elsewhere, 'alias'));
    fs.mkdirSync(path.join(elsewhere, 'x'));
    for (const written of [real, path.join(elsewhere, 'alias', 'keys', 'tok'), `${elsewhere}/x/../alias/keys/tok`]) {
      const dir = makeCore({ 'agent.yaml': agentWith(written, ws) });
      await refusedFor(dir, /inside the workspace/);
    }
  });

  it('a workspace reached through a symlink does not hide a secret inside it', async () => {
    const realWs = makeTempDir('ws-real-');
    const holder = makeTempDir('ws-link-');
    fs.symlinkSync(realWs, path.join(holder, 'ws'));
    secretAt(path.join(realWs, 'tok'));
    const dir = makeCore({ 'agent.yaml': agentWith(path.join(realWs, 'tok'), path.join(holder, 'ws')) });
    await refusedFor(dir, /inside the workspace/);
  });

  it('a file not created yet, inside the workspace, is refused too (a command could create and read it later)', async () => {
    const dir = makeCore({ 'agent.yaml': agentWith('later/tok') });
    await refusedFor(dir, /inside the workspace/);
  });

  it('a secret file outside the workspace with a hard link inside it (or anywhere) is refused', async () => {
    const ws = makeTempDir('ws-');
    const keys = makeTempDir('keys-');
    const file = secretAt(path.join(keys, 'tok'));
    fs.linkSync(file, path.join(ws, 'innocent.txt'));
    const dir = makeCore({ 'agent.yaml': agentWith(file, ws) });
    const text = await refusedFor(dir, /2 hard links/);
    assert.match(text, /keep one link/);
  });

  it('a secret file outside the workspace with one link loads (the control)', async () => {
    const ws = makeTempDir('ws-');
    const keys = makeTempDir('keys-');
    const file = secretAt(path.join(keys, 'tok'));
    const snap = await loadCore(makeCore({ 'agent.yaml': agentWith(file, ws) }));
    assert.deepEqual(snap.agent.secrets, { TOK: { file } });
  });
});
